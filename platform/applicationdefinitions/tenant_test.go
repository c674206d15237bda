package applicationdefinitions_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/platform/applicationdefinitions"
	"cozystack.io/platform/internal/apiserver/apiservertest"
	"cozystack.io/platform/internal/controller"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{HelmController: true}, &env))
}

var tenants = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "tenants"}

func chartDir(t *testing.T, name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "charts", name)
}

// The AD's schema is the chart's values schema without the platform's keys.
func TestTenantSchemaMatchesChart(t *testing.T) {
	objs, err := applicationdefinitions.Objects()
	if err != nil {
		t.Fatal(err)
	}
	var ad *v1alpha1.ApplicationDefinition
	for _, o := range objs {
		if o.GetKind() == "ApplicationDefinition" && o.GetName() == "tenant" {
			ad = &v1alpha1.ApplicationDefinition{}
			data, _ := json.Marshal(o.Object)
			if err := json.Unmarshal(data, ad); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ad == nil {
		t.Fatal("no ApplicationDefinition tenant")
	}
	var fromAD, fromChart map[string]any
	if err := json.Unmarshal([]byte(ad.Spec.Application.OpenAPISchema), &fromAD); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(chartDir(t, "tenant"), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &fromChart); err != nil {
		t.Fatal(err)
	}
	delete(fromChart, "$schema")
	props := fromChart["properties"].(map[string]any)
	delete(props, "_cluster")
	delete(props, "_namespace")
	if diff := cmp.Diff(fromChart, fromAD); diff != "" {
		t.Errorf("AD openAPISchema differs from the chart's values schema (-chart +AD):\n%s", diff)
	}
}

// TestTenants runs the whole tenant story on the local control plane with
// the real helm-controller: cozystack-api serves the Tenant kind from its
// AD, helm-controller installs the tenant chart (served here as the
// ExternalArtifact the platform catalog would publish), and
// cozystack-controller projects the values into each new namespace.
func TestTenants(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	create := createTenant(ctx, dyn)
	if err := create("tenant-root", "alpha", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"host": "alpha.example.org", "monitoring": "tenant-root"}
	waitProjected(t, ctx, c, "tenant-alpha", "alpha", want)

	// A tenant of a tenant: its namespace is <parent namespace>-<name>, its
	// host derives from the parent's, its own ingress is its namespace and
	// the rest is inherited.
	if err := create("tenant-alpha", "beta", map[string]any{"ingress": true, "schedulingClass": "gold"}); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, ctx, c, "tenant-alpha-beta", "beta", map[string]any{
		"host": "beta.alpha.example.org", "monitoring": "tenant-root", "ingress": "tenant-alpha-beta", "schedulingClass": "gold",
	})
	if err := create("tenant-alpha", "gamma", map[string]any{"host": "g.alpha.example.org"}); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, ctx, c, "tenant-alpha-gamma", "gamma", map[string]any{"host": "g.alpha.example.org", "monitoring": "tenant-root"})

	// Hosts stay in the tenant's subtree (contract K2, Hosts): not another
	// domain, not the parent's parent's, not a sibling's, not under a
	// child's.
	for _, tc := range []struct{ ns, host, says string }{
		{"tenant-alpha", "gamma.example.com", "outside alpha.example.org"},
		{"tenant-alpha", "example.org", "outside alpha.example.org"},
		{"tenant-alpha-beta", "x.g.alpha.example.org", "outside beta.alpha.example.org"},
		{"tenant-alpha", "www.beta.alpha.example.org", "under beta.alpha.example.org, the host of tenant namespace tenant-alpha-beta"},
	} {
		err := create(tc.ns, "epsilon", map[string]any{"host": tc.host})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "no other tenant's host covers (contract K2, Hosts)") {
			t.Errorf("Tenant in %s with host %s: err = %v, want 422 saying %q and the rule", tc.ns, tc.host, err, tc.says)
		}
	}

	// Names: in tenant-alpha-beta (17 characters) a name may have at most
	// 63-18 = 45 characters; 46 passes the Helm release-name limit of the
	// kind (53 - len("tenant-")) but not the namespace's.
	long := strings.Repeat("n", 46)
	err := create("tenant-alpha-beta", long, map[string]any{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "at most 45 characters") {
		t.Errorf("tenant whose namespace exceeds 63 characters: err = %v, want 422 saying at most 45 characters", err)
	}
	if err := create("tenant-alpha-beta", strings.Repeat("n", 45), map[string]any{}); err != nil {
		t.Errorf("45 characters fit: %v", err)
	}

	// A third level: own etcd, the rest inherited through two parents.
	if err := create("tenant-alpha-beta", "delta", map[string]any{"etcd": true}); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, ctx, c, "tenant-alpha-beta-delta", "delta", map[string]any{
		"host": "delta.beta.alpha.example.org", "monitoring": "tenant-root", "ingress": "tenant-alpha-beta",
		"etcd": "tenant-alpha-beta-delta", "schedulingClass": "gold",
	})
	checkGolden(t, ctx, c, "testdata/tenant-tree.golden.yaml",
		"tenant-alpha", "tenant-alpha-beta", "tenant-alpha-gamma", "tenant-alpha-beta-delta")
}

var update = flag.Bool("update", false, "rewrite the golden files")

// checkGolden compares the tenant namespaces' labels and annotations of
// contract K2 and their projected _namespace values with a golden file.
func checkGolden(t *testing.T, ctx context.Context, c client.Client, golden string, namespaces ...string) {
	t.Helper()
	tree := map[string]any{}
	for _, name := range namespaces {
		ns := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for k, v := range ns.Labels {
			if strings.HasPrefix(k, "namespace.cozystack.io/") {
				labels[k] = v
			}
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: name, Name: v1alpha1.ValuesName}, cm); err != nil {
			t.Fatal(err)
		}
		var values map[string]any
		if err := yaml.Unmarshal([]byte(cm.Data[v1alpha1.ValuesKey]), &values); err != nil {
			t.Fatal(err)
		}
		tree[name] = map[string]any{"labels": labels, "_namespace": values[v1alpha1.NamespaceObject]}
	}
	got, err := yaml.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("tenant tree differs from %s (-want +got):\n%s", golden, diff)
	}
}

var (
	platformClient client.Client
	platformDyn    dynamic.Interface
)

// setupPlatform starts, once per test binary, what a tenant needs:
// cozystack-api, cozystack-controller (projection), ClusterValues, the root
// tenant namespace tenant-root (host example.org, monitoring tenant-root),
// the tenant chart published as the AD names it, and the platform's ADs and
// policies.
func setupPlatform(t *testing.T, ctx context.Context) (client.Client, dynamic.Interface) {
	t.Helper()
	testenv.Need(t, env)
	if platformClient != nil {
		return platformClient, platformDyn
	}
	apiservertest.Start(t, env)
	scheme := controllermanager.Scheme()
	if err := sourcev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	startController(t)
	eventually(t, ctx, "ClusterValues created", func() error {
		cv := &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterValuesName}, Spec: v1alpha1.ClusterValuesSpec{
			RootHost: "example.org", APIServerEndpoint: "https://api.example.org:6443",
		}}
		err := c.Create(ctx, cv)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	root := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-root", Labels: map[string]string{
		v1alpha1.LabelTenant: "root", v1alpha1.LabelHost: "example.org", v1alpha1.LabelMonitoring: "tenant-root",
	}}}
	if err := c.Create(ctx, root); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	publishTenantChart(t, ctx, c)
	for _, o := range mustObjects(t) {
		if err := c.Patch(ctx, o, client.Apply, client.FieldOwner("test"), client.ForceOwnership); err != nil {
			t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	dyn := dynamic.NewForConfigOrDie(env.Config)
	eventually(t, ctx, "the Tenant kind served", func() error {
		_, err := dyn.Resource(tenants).Namespace("tenant-root").List(ctx, metav1.ListOptions{})
		return err
	})
	platformClient, platformDyn = c, dyn
	return c, dyn
}

// createTenant returns a function creating Tenant name in ns with spec.
func createTenant(ctx context.Context, dyn dynamic.Interface) func(ns, name string, spec map[string]any) error {
	return func(ns, name string, spec map[string]any) error {
		_, err := dyn.Resource(tenants).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Tenant",
			"metadata": map[string]any{"name": name}, "spec": spec,
		}}, metav1.CreateOptions{})
		return err
	}
}

// TestTenantWaitsForClusterValues is the failure story of a lagging
// cozystack-controller (contracts/schemas/v1alpha1/k2-cluster-values.md,
// "Failure story"): in a namespace with no cluster values
// yet, an application is accepted, its HelmRelease waits (valuesFrom is not
// optional), and the application says why; once the values are projected
// it proceeds. The namespace is made a tenant namespace only later, which
// is what a controller that has not caught up looks like.
func TestTenantWaitsForClusterValues(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-lagging"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := createTenant(ctx, dyn)("tenant-lagging", "late", map[string]any{}); err != nil {
		t.Fatalf("an application in a namespace without cluster values must be accepted: %v", err)
	}
	readyReason := func() (string, string, error) {
		u, err := dyn.Resource(tenants).Namespace("tenant-lagging").Get(ctx, "late", metav1.GetOptions{})
		if err != nil {
			return "", "", err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, cond := range conds {
			m := cond.(map[string]any)
			if m["type"] == "Ready" {
				return fmt.Sprint(m["status"]) + "/" + fmt.Sprint(m["reason"]), fmt.Sprint(m["message"]), nil
			}
		}
		return "", "", fmt.Errorf("no Ready condition")
	}
	eventually(t, ctx, "Ready=False, reason WaitingForClusterValues", func() error {
		got, msg, err := readyReason()
		if err != nil {
			return err
		}
		if got != "False/WaitingForClusterValues" || !strings.Contains(msg, "cozystack-values") {
			return fmt.Errorf("Ready = %s: %s", got, msg)
		}
		return nil
	})
	if err := c.Get(ctx, client.ObjectKey{Name: "tenant-lagging-late"}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart rendered without cluster values: namespace tenant-lagging-late exists (err %v)", err)
	}

	// The controller catches up: the values appear and the release goes on.
	ns.Labels = map[string]string{v1alpha1.LabelTenant: "lagging", v1alpha1.LabelHost: "lagging.example.org"}
	if err := c.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, ctx, c, "tenant-lagging", "lagging", map[string]any{"host": "lagging.example.org"})
	waitProjected(t, ctx, c, "tenant-lagging-late", "late", map[string]any{"host": "late.lagging.example.org"})
	eventually(t, ctx, "Ready=True", func() error {
		got, msg, err := readyReason()
		if err != nil {
			return err
		}
		if !strings.HasPrefix(got, "True/") {
			return fmt.Errorf("Ready = %s: %s", got, msg)
		}
		return nil
	})
}

func mustObjects(t *testing.T) []*unstructured.Unstructured {
	objs, err := applicationdefinitions.Objects()
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// publishTenantChart serves the packaged tenant chart and publishes it as
// the ExternalArtifact the Tenant AD names, writing its status as the
// operator would (no operator runs in this test).
func publishTenantChart(t *testing.T, ctx context.Context, c client.Client) {
	_, data, err := build.PackageDir(chartDir(t, "tenant"), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := localcp.NewArtifactServer()
	if err != nil {
		t.Fatal(err)
	}
	// The server outlives the test that started it (setupPlatform runs
	// once per binary): it stops with the test binary.
	art := srv.Publish("platform/tenant-0.1.0.tgz", "0.1.0", data)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.SystemNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	publishArtifact(t, ctx, c, art, v1alpha1.ComponentArtifactName("platform", "tenant"))
}

// waitProjected waits for the tenant namespace ns, labelled as tenant name,
// and for its cozystack-values ConfigMap holding _namespace = want.
func waitProjected(t *testing.T, ctx context.Context, c client.Client, ns, name string, want map[string]any) {
	t.Helper()
	eventually(t, ctx, "namespace "+ns+" with its values", func() error {
		n := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
			return err
		}
		if n.Labels[v1alpha1.LabelTenant] != name {
			return fmt.Errorf("label %s = %q", v1alpha1.LabelTenant, n.Labels[v1alpha1.LabelTenant])
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: v1alpha1.ValuesName}, cm); err != nil {
			return err
		}
		var values map[string]any
		if err := yaml.Unmarshal([]byte(cm.Data[v1alpha1.ValuesKey]), &values); err != nil {
			return err
		}
		if diff := cmp.Diff(want, values[v1alpha1.NamespaceObject]); diff != "" {
			return fmt.Errorf("_namespace (-want +got):\n%s", diff)
		}
		return nil
	})
}

func startController(t *testing.T) {
	o := controller.NewOptions()
	o.LeaderElect = false
	o.InstallCRDs = true
	o.MetricsBindAddress = "0"
	o.HealthProbeBindAddress = "0"
	o.SkipNameValidation = true
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := controller.NewManager(ctx, env.Config, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	// The manager outlives the test that started it (setupPlatform runs
	// once per binary): it stops with the test binary.
	_ = cancel
	go func() {
		if err := mgr.Start(ctx); err != nil {
			panic(fmt.Sprintf("cozystack-controller stopped: %v", err))
		}
	}()
}

func eventually(t *testing.T, ctx context.Context, what string, f func() error) {
	t.Helper()
	var last error
	for {
		if last = f(); last == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
