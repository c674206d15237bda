package adwatcher_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/crds"
	"cozystack.io/platform/internal/apiserver/adwatcher"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

func ad(name, kind, plural, schema string) *v1alpha1.ApplicationDefinition {
	return &v1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ApplicationDefinitionSpec{
			Application: v1alpha1.ApplicationDefinitionApplication{
				Kind: kind, Plural: plural, Singular: strings.ToLower(kind), OpenAPISchema: schema,
			},
			Release: v1alpha1.ApplicationDefinitionRelease{
				Prefix:   strings.ToLower(kind) + "-",
				ChartRef: &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: "chart", Namespace: "cozy-system"},
			},
		},
	}
}

// startWatcher runs a Watcher of the test control plane's ADs (the CRD
// applied first) with counter and onChange, until the test ends; it
// returns its context and a client.
func startWatcher(t *testing.T, counter adwatcher.ApplicationCounter, onChange func(*appkinds.Set)) (context.Context, client.Client, *adwatcher.Watcher) {
	t.Helper()
	testenv.Need(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	crd, err := crds.ApplicationDefinition()
	if err != nil {
		t.Fatal(err)
	}
	if err := localcp.ApplyCRDs(ctx, env.Config, crd); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	informers, err := cache.New(env.Config, cache.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = informers.Start(ctx) }()
	w := &adwatcher.Watcher{Cache: informers, Client: c, Applications: counter, OnChange: onChange, Recheck: 200 * time.Millisecond}
	go func() {
		if err := w.Run(ctx); err != nil {
			t.Errorf("watcher: %v", err)
		}
	}()
	return ctx, c, w
}

// Kinds come and go at run time; a bad AD disables only itself.
func TestWatcherServesKindsAtRunTime(t *testing.T) {
	var mu sync.Mutex
	var sets []*appkinds.Set
	ctx, c, w := startWatcher(t, nil, func(s *appkinds.Set) {
		mu.Lock()
		defer mu.Unlock()
		sets = append(sets, s)
	})
	served := func(plural string) func() bool {
		return func() bool {
			s := w.Current()
			return s != nil && s.ByPlural[plural] != nil
		}
	}
	eventually := func(what string, within time.Duration, cond func() bool) {
		t.Helper()
		start := time.Now()
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, within, true, func(context.Context) (bool, error) { return cond(), nil })
		if err != nil {
			t.Fatalf("%s: not within %s", what, within)
		}
		t.Logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
	}
	condition := func(name string) *metav1.Condition {
		var got v1alpha1.ApplicationDefinition
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil {
			return nil
		}
		if got.Status.ObservedGeneration != got.Generation {
			return nil
		}
		return apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionServed)
	}
	hasCondition := func(name string, status metav1.ConditionStatus, reason string) func() bool {
		return func() bool {
			c := condition(name)
			return c != nil && c.Status == status && c.Reason == reason
		}
	}

	good := ad("postgres", "Postgres", "postgreses", `{"type":"object","properties":{"replicas":{"type":"integer"}}}`)
	if err := c.Create(ctx, good); err != nil {
		t.Fatal(err)
	}
	eventually("new kind served", 2*time.Second, served("postgreses"))
	eventually("Served=True on the AD", 5*time.Second, hasCondition("postgres", metav1.ConditionTrue, v1alpha1.ReasonServed))

	// A second AD claiming the same plural loses, deterministically.
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution
	dup := ad("postgres-copy", "PostgresCopy", "postgreses", `{"type":"object"}`)
	if err := c.Create(ctx, dup); err != nil {
		t.Fatal(err)
	}
	eventually("PluralConflict on the later AD", 5*time.Second, hasCondition("postgres-copy", metav1.ConditionFalse, v1alpha1.ReasonPluralConflict))
	if k := w.Current().ByPlural["postgreses"]; k.Definition != "postgres" {
		t.Errorf("postgreses served by %s, want the older AD postgres", k.Definition)
	}

	// A broken AD disables only itself.
	bad := ad("broken", "Broken", "brokens", `{"type":`)
	if err := c.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	eventually("InvalidSchema on the broken AD", 5*time.Second, hasCondition("broken", metav1.ConditionFalse, v1alpha1.ReasonInvalidSchema))
	if !served("postgreses")() {
		t.Error("a broken AD took postgreses down")
	}
	if msg := condition("broken").Message; !strings.Contains(msg, "openAPISchema is not valid JSON") {
		t.Errorf("InvalidSchema message = %q, want it to name the field and the fix", msg)
	}

	// Fixing the AD serves it.
	if err := c.Get(ctx, client.ObjectKey{Name: "broken"}, bad); err != nil {
		t.Fatal(err)
	}
	bad.Spec.Application.OpenAPISchema = `{"type":"object"}`
	if err := c.Update(ctx, bad); err != nil {
		t.Fatal(err)
	}
	eventually("fixed AD served", 2*time.Second, served("brokens"))

	// Deleting an AD removes its kind.
	if err := c.Delete(ctx, good); err != nil {
		t.Fatal(err)
	}
	eventually("deleted kind gone, or handed to the next AD", 2*time.Second, func() bool {
		k := w.Current().ByPlural["postgreses"]
		return k != nil && k.Definition == "postgres-copy"
	})
	eventually("the former loser is now Served", 5*time.Second, hasCondition("postgres-copy", metav1.ConditionTrue, v1alpha1.ReasonServed))
}

// counter is an ApplicationCounter over a fixed, changeable table.
type counter struct {
	mu     sync.Mutex
	byKind map[string]map[string]int
}

func (f *counter) Namespaces(kind string) (map[string]int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byKind[kind], true
}

func (f *counter) set(kind string, byNamespace map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byKind[kind] = byNamespace
}

// A deleted AD waits only for applications it serves: one that lost its
// kind to another AD (a KindConflict) goes at once, however many
// applications the kind has; the serving one waits, Terminating, until
// they are gone.
func TestDeletedDefinitionWaitsForItsApplications(t *testing.T) {
	apps := &counter{byKind: map[string]map[string]int{"Widget": {"tenant-a": 2}}}
	ctx, c, _ := startWatcher(t, apps, nil)
	gone := func(name string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: name}, &v1alpha1.ApplicationDefinition{})), nil
		}
	}
	reason := func(name, want string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			var got v1alpha1.ApplicationDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil {
				return false, nil
			}
			cond := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionServed)
			return cond != nil && cond.Reason == want, nil
		}
	}
	within := func(what string, cond func(context.Context) (bool, error)) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, cond); err != nil {
			t.Fatalf("never %s", what)
		}
	}

	widget := ad("widget", "Widget", "widgets", `{"type":"object"}`)
	if err := c.Create(ctx, widget); err != nil {
		t.Fatal(err)
	}
	within("widget Served", reason("widget", v1alpha1.ReasonServed))
	rival := ad("widget-rival", "Widget", "widgetrivals", `{"type":"object"}`)
	rival.Spec.Application.Singular = "widgetrival"
	rival.Spec.Release.Prefix = "rival-" // no successor of widget: its HelmReleases would be named otherwise
	if err := c.Create(ctx, rival); err != nil {
		t.Fatal(err)
	}
	within("the rival refused with KindConflict", reason("widget-rival", v1alpha1.ReasonKindConflict))
	if err := c.Delete(ctx, rival); err != nil {
		t.Fatal(err)
	}
	within("the rival, which serves none of the kind's applications, gone", gone("widget-rival"))

	if err := c.Delete(ctx, widget); err != nil {
		t.Fatal(err)
	}
	within("widget Terminating", reason("widget", v1alpha1.ReasonTerminating))
	apps.set("Widget", nil)
	within("widget gone once its applications are", gone("widget"))
}
