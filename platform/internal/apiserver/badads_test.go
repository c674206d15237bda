package apiserver_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

func badAD(name string, mutate func(*v1alpha1.ApplicationDefinition)) *v1alpha1.ApplicationDefinition {
	ad := &v1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ApplicationDefinitionSpec{
			Application: v1alpha1.ApplicationDefinitionApplication{
				Kind:   camel(name),
				Plural: name + "s", Singular: name, OpenAPISchema: `{"type":"object"}`,
			},
			Release: v1alpha1.ApplicationDefinitionRelease{
				Prefix:   "bad-",
				ChartRef: &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: "chart", Namespace: "cozy-system"},
			},
		},
	}
	mutate(ad)
	return ad
}

// camel turns "bad-json" into "BadJson".
func camel(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// A corpus of bad ADs never takes the API down: each gets Served=False with
// its reason, and a good kind answers every request throughout.
func TestBadADsDisableOnlyThemselves(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "postgres")
	waitDiscovered(t, "postgreses", 5*time.Second)
	ensureNamespace(t, "bad-ads")

	dyn := dynamic.NewForConfigOrDie(env.Config)
	stop := make(chan struct{})
	var requests, failures atomic.Int64
	var firstFailure atomic.Value
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := dyn.Resource(postgreses).Namespace("bad-ads").List(ctx, metav1.ListOptions{})
			requests.Add(1)
			if err != nil {
				failures.Add(1)
				firstFailure.CompareAndSwap(nil, err.Error())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	corpus := []struct {
		ad     *v1alpha1.ApplicationDefinition
		reason string
	}{
		{badAD("bad-json", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.OpenAPISchema = `{"type":` }), v1alpha1.ReasonInvalidSchema},
		{badAD("bad-type", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.OpenAPISchema = `{"type":"objekt"}` }), v1alpha1.ReasonInvalidSchema},
		{badAD("bad-pattern", func(a *v1alpha1.ApplicationDefinition) {
			a.Spec.Application.OpenAPISchema = `{"type":"object","properties":{"a":{"type":"string","pattern":"[z-a]"}}}`
		}), v1alpha1.ReasonInvalidSchema},
		{badAD("bad-array", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.OpenAPISchema = `[1,2]` }), v1alpha1.ReasonInvalidSchema},
		{badAD("bad-rule", func(a *v1alpha1.ApplicationDefinition) {
			a.Spec.Application.OpenAPISchema = `{"type":"object","properties":{"a":{"type":"string","x-kubernetes-validations":[{"rule":"self >"}]}}}`
		}), v1alpha1.ReasonInvalidSchema},
		{badAD("bad-timeout", func(a *v1alpha1.ApplicationDefinition) {
			a.Annotations = map[string]string{v1alpha1.AnnotationHelmInstallTimeout: "soon"}
		}), v1alpha1.ReasonInvalidAnnotation},
		{badAD("bad-upgrade", func(a *v1alpha1.ApplicationDefinition) {
			a.Annotations = map[string]string{v1alpha1.AnnotationHelmUpgradeTimeout: "0s"}
		}), v1alpha1.ReasonInvalidAnnotation},
		{badAD("bad-wait", func(a *v1alpha1.ApplicationDefinition) {
			a.Annotations = map[string]string{v1alpha1.AnnotationHelmInstallDisableWait: "maybe"}
		}), v1alpha1.ReasonInvalidAnnotation},
		{badAD("bad-plural", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.Plural = "postgreses" }), v1alpha1.ReasonPluralConflict},
		{badAD("bad-kind", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.Kind = "Postgres" }), v1alpha1.ReasonKindConflict},
		{badAD("bad-prefix", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Release.Prefix = strings.Repeat("x", 53) }), v1alpha1.ReasonInvalidPrefix},
		{badAD("bad-chart", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Release.ChartRef = nil }), v1alpha1.ReasonInvalidRelease},
	}
	for _, c := range corpus {
		if err := backend.Create(ctx, c.ad); err != nil {
			t.Fatalf("create %s: %v", c.ad.Name, err)
		}
	}
	for _, c := range corpus {
		var cond *metav1.Condition
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			var got v1alpha1.ApplicationDefinition
			if err := backend.Get(ctx, client.ObjectKey{Name: c.ad.Name}, &got); err != nil {
				return false, nil
			}
			cond = apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionServed)
			return cond != nil && cond.ObservedGeneration == got.Generation, nil
		})
		if err != nil {
			t.Errorf("%s: no Served condition", c.ad.Name)
			continue
		}
		if cond.Status != metav1.ConditionFalse || cond.Reason != c.reason || cond.Message == "" {
			t.Errorf("%s: Served=%s %s %q, want False %s with a message", c.ad.Name, cond.Status, cond.Reason, cond.Message, c.reason)
		}
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if failures.Load() > 0 {
		t.Errorf("%d of %d requests to the good kind failed while bad ADs arrived; first: %v", failures.Load(), requests.Load(), firstFailure.Load())
	}
	t.Logf("%d requests to postgreses while %d bad ADs arrived: %d failed", requests.Load(), len(corpus), failures.Load())
	for _, c := range corpus {
		_ = backend.Delete(ctx, c.ad)
	}
}
