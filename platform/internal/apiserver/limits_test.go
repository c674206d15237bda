package apiserver_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"cozystack.io/platform/internal/apiserver/bodydepth"
)

// nestedSpec is a Postgres (or, with the HelmRelease's fields, any object)
// whose spec.extra nests depth objects deep, as JSON.
func nestedSpec(depth int) string {
	return strings.Repeat(`{"a":`, depth) + `1` + strings.Repeat(`}`, depth)
}

func postgresBody(name string, depth int) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"Postgres","metadata":{"name":%q},"spec":{"extra":%s}}`, name, nestedSpec(depth)))
}

// helmReleaseBody is the same nesting in a HelmRelease's values, which
// kube-apiserver stores as they come (x-kubernetes-preserve-unknown-fields).
func helmReleaseBody(name string, depth int) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":%q},"spec":{"interval":"5m","chartRef":{"kind":"OCIRepository","name":"x"},"values":{"extra":%s}}}`, name, nestedSpec(depth)))
}

// rawClient talks to kube-apiserver without client-go's retries, so a
// 504 is seen as it comes.
func rawClient(t testing.TB) rest.Interface {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.GroupVersion = &metav1.SchemeGroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A body nested deeper than the limit is refused with 400 before anything
// decodes it, through the aggregation layer, as a dry run too; nothing is
// written.
func TestDeepBodyRefused(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "postgres")
	waitDiscovered(t, "postgreses", 5*time.Second)
	ensureNamespace(t, "deep")
	c := rawClient(t)
	path := "/apis/apps.cozystack.io/v1alpha1/namespaces/deep/postgreses"
	for _, depth := range []int{bodydepth.MaxDepth, 1000, 5000} {
		for _, dryRun := range []bool{false, true} {
			req := c.Post().AbsPath(path).Body(postgresBody("deep"+strconv.Itoa(depth), depth)).SetHeader("Content-Type", "application/json").MaxRetries(0)
			if dryRun {
				req = req.Param("dryRun", "All")
			}
			err := req.Do(ctx).Error()
			if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "levels of objects and arrays") {
				t.Fatalf("depth %d dryRun %v: err = %v, want 400 naming the limit", depth, dryRun, err)
			}
		}
		// Merge patches and apply patches are bodies too.
		err := c.Patch("application/apply-patch+yaml").AbsPath(path, "p").Param("fieldManager", "t").Body(postgresBody("p", depth)).MaxRetries(0).Do(ctx).Error()
		if !apierrors.IsBadRequest(err) {
			t.Fatalf("apply patch at depth %d: %v, want 400", depth, err)
		}
	}
	// Below the limit, the body reaches the storage (the unknown field
	// is pruned with a warning).
	if err := c.Post().AbsPath(path).Body(postgresBody("shallow", 20)).SetHeader("Content-Type", "application/json").Do(ctx).Error(); err != nil {
		t.Fatalf("depth 20: %v", err)
	}
}

// A read at a resourceVersion kube-apiserver has not reached is answered
// as kube-apiserver answers it (504, "Too large resource version", after
// its own 3 s wait), at once: cozystack-api does not retry it (it did, ten
// times, for about 43 s).
func TestFutureResourceVersionAnsweredAtOnce(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "postgres")
	waitDiscovered(t, "postgreses", 5*time.Second)
	ensureNamespace(t, "future")
	c := rawClient(t)
	if err := c.Post().AbsPath("/apis/apps.cozystack.io/v1alpha1/namespaces/future/postgreses").Body(postgresBody("db", 2)).
		SetHeader("Content-Type", "application/json").Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/apis/apps.cozystack.io/v1alpha1/namespaces/future/postgreses/db", "/apis/apps.cozystack.io/v1alpha1/namespaces/future/postgreses"} {
		start := time.Now()
		err := c.Get().AbsPath(p).Param("resourceVersion", "999999999").MaxRetries(0).Do(ctx).Error()
		took := time.Since(start)
		if !apierrors.IsTimeout(err) || !strings.Contains(err.Error(), "Too large resource version") {
			t.Fatalf("GET %s at a future resourceVersion: %v, want kube-apiserver's 504", p, err)
		}
		// kube-apiserver waits 3 s; ten retries took 43 s.
		if took > 15*time.Second {
			t.Errorf("GET %s took %s: retried", p, took)
		}
		t.Logf("GET %s: %s", p, took.Round(time.Millisecond))
	}
}
