package application

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

// storageSchema exercises every rule of the storage: a required field with
// a default (validation sees defaults, values do not), bounds, an enum, a
// closed nested object, a map of objects and a deprecated field.
const storageSchema = `{
  "type": "object",
  "required": ["size"],
  "properties": {
    "replicas": {"type": "integer", "default": 2, "minimum": 1},
    "size": {"type": "string", "default": "10Gi"},
    "version": {"type": "string", "enum": ["v17", "v18"], "default": "v18"},
    "users": {"type": "object", "additionalProperties": {"type": "object", "properties": {"password": {"type": "string"}}}},
    "legacyMode": {"type": "boolean", "deprecated": true, "description": "use version instead"}
  }
}`

func storageKind(t *testing.T) *appkinds.Kind {
	ad := postgresAD(storageSchema)
	ad.Spec.Application.ShortNames = []string{"pg"}
	return compileKind(t, ad)
}

// fixture is one test's namespace, storage and a client of its own for
// looking at the HelmReleases behind the storage.
type fixture struct {
	t    *testing.T
	ns   string
	ctx  context.Context // carries ns, as the request context does
	c    client.WithWatch
	rest *REST
	kind *appkinds.Kind
}

func newClient(t *testing.T) client.WithWatch {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := helmv2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newFixture(t *testing.T, k *appkinds.Kind) *fixture {
	t.Helper()
	testenv.Need(t, env)
	c := newClient(t)
	f := &fixture{t: t, c: c, kind: k, rest: NewREST(k, Backend{Client: c, Lister: newLister(t)})}
	f.ns = f.namespace()
	f.ctx = genericapirequest.WithNamespace(context.Background(), f.ns)
	return f
}

// cachedREST returns a storage of the fixture's kind whose resourceVersion
// "0" lists come from a ReleaseCache, once that cache holds at least n
// HelmReleases of the kind in namespaces. The cache is eventually
// consistent, so tests wait for it.
func (f *fixture) cachedREST(n int, namespaces ...string) *REST {
	f.t.Helper()
	rc := NewReleaseCache(f.c)
	runCtx, cancel := context.WithCancel(context.Background())
	f.t.Cleanup(cancel)
	go rc.Run(runCtx)
	// Its client cannot list: lists it answers come from the cache.
	r := NewREST(f.kind, Backend{Client: noList{f.c}, Releases: rc})
	deadline := time.Now().Add(10 * time.Second)
	for {
		hrs, ok := rc.List(f.kind.Kind, "")
		mine := 0
		for _, hr := range hrs {
			if slices.Contains(namespaces, hr.Namespace) {
				mine++
			}
		}
		if ok && mine >= n {
			return r
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("ReleaseCache: synced=%v, %d HelmReleases of %s, want %d", ok, mine, f.kind.Kind, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newLister(t *testing.T) *ReleaseLister {
	t.Helper()
	l, err := NewReleaseLister(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// noList is a client whose List fails.
type noList struct{ client.WithWatch }

func (noList) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return fmt.Errorf("this client does not list")
}

// namespace creates a namespace deleted at cleanup.
func (f *fixture) namespace() string {
	f.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "app-"}}
	if err := f.c.Create(context.Background(), ns); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = f.c.Delete(context.Background(), ns) })
	return ns.Name
}

// newApp builds an application of the fixture's kind from a YAML body.
func (f *fixture) newApp(name, body string) *unstructured.Unstructured {
	f.t.Helper()
	u := app(f.t, body)
	u.SetAPIVersion(appkinds.Group + "/" + appkinds.Version)
	u.SetKind(f.kind.Kind)
	if name != "" {
		u.SetName(name)
	}
	return u
}

func (f *fixture) create(name, body string) *unstructured.Unstructured {
	f.t.Helper()
	out, err := f.rest.Create(f.ctx, f.newApp(name, body), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create %s: %v", name, err)
	}
	return out.(*unstructured.Unstructured)
}

func (f *fixture) get(name string) *unstructured.Unstructured {
	f.t.Helper()
	out, err := f.rest.Get(f.ctx, name, &metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("get %s: %v", name, err)
	}
	return out.(*unstructured.Unstructured)
}

func (f *fixture) helmRelease(name string) (*helmv2.HelmRelease, error) {
	hr := &helmv2.HelmRelease{}
	return hr, f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: f.kind.HelmReleaseName(name)}, hr)
}

func (f *fixture) mustHelmRelease(name string) *helmv2.HelmRelease {
	f.t.Helper()
	hr, err := f.helmRelease(name)
	if err != nil {
		f.t.Fatalf("HelmRelease of %s: %v", name, err)
	}
	return hr
}

func (f *fixture) helmReleaseNames() []string {
	f.t.Helper()
	var list helmv2.HelmReleaseList
	if err := f.c.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, hr := range list.Items {
		out = append(out, hr.Name)
	}
	sort.Strings(out)
	return out
}

// setReady writes the Ready condition and the attempted chart version on the
// HelmRelease's status, as helm-controller would: it does not run in these
// tests, so nothing else ever reports a status.
func (f *fixture) setReady(name, message, version string) {
	f.t.Helper()
	hr := f.mustHelmRelease(name)
	hr.Status.ObservedGeneration = hr.Generation
	hr.Status.LastAttemptedRevision = version
	hr.Status.Conditions = []metav1.Condition{{
		Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: "InstallSucceeded", Message: message,
		LastTransitionTime: metav1.Now(), ObservedGeneration: hr.Generation,
	}}
	if err := f.c.Status().Update(context.Background(), hr); err != nil {
		f.t.Fatal(err)
	}
}

func values(t *testing.T, hr *helmv2.HelmRelease) map[string]any {
	t.Helper()
	if hr.Spec.Values == nil {
		return nil
	}
	var v map[string]any
	if err := json.Unmarshal(hr.Spec.Values.Raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func itemNames(l runtime.Object) []string {
	var out []string
	if err := apimeta.EachListItem(l, func(o runtime.Object) error {
		out = append(out, o.(*unstructured.Unstructured).GetName())
		return nil
	}); err != nil {
		panic(err)
	}
	sort.Strings(out)
	return out
}

// causes returns the field paths of a 422.
func causes(t *testing.T, err error) []string {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error = %v, want 422 Invalid", err)
	}
	st := err.(apierrors.APIStatus).Status()
	var out []string
	for _, c := range st.Details.Causes {
		out = append(out, c.Field)
	}
	return out
}

// recorder collects Warning headers, as the handler chain's recorder does.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) AddWarning(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, text)
}

func (r *recorder) warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

func withWarnings(ctx context.Context) (context.Context, *recorder) {
	rec := &recorder{}
	return warning.WithWarningRecorder(ctx, rec), rec
}

// The application is written as the HelmRelease K1 describes, with the
// user's spec (no defaults) as values, and reads back with defaults.
func TestCreateWritesHelmRelease(t *testing.T) {
	f := newFixture(t, storageKind(t))
	out := f.create("main", `
metadata: {labels: {team: db}, annotations: {note: keep}}
spec: {replicas: 3, users: {app: {password: x}}}
`)
	if out.GetName() != "main" || out.GetNamespace() != f.ns || out.GetUID() == "" || out.GetResourceVersion() == "" {
		t.Errorf("created metadata: name=%s ns=%s uid=%s rv=%s", out.GetName(), out.GetNamespace(), out.GetUID(), out.GetResourceVersion())
	}
	if out.GetKind() != "Postgres" || out.GetAPIVersion() != "apps.cozystack.io/v1alpha1" {
		t.Errorf("created %s %s", out.GetAPIVersion(), out.GetKind())
	}

	hr := f.mustHelmRelease("main")
	if hr.Name != "postgres-main" || hr.UID != out.GetUID() || hr.ResourceVersion != out.GetResourceVersion() {
		t.Errorf("HelmRelease %s uid=%s rv=%s, want postgres-main with the application's uid and rv", hr.Name, hr.UID, hr.ResourceVersion)
	}
	checkMainRelease(t, hr)
	// size is required and has a default: validation saw the default, the
	// values do not carry it.
	if diff := cmp.Diff(map[string]any{"replicas": float64(3), "users": map[string]any{"app": map[string]any{"password": "x"}}}, values(t, hr)); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if hr.Spec.Install.Timeout == nil || hr.Spec.Install.Timeout.Duration != 15*time.Minute || hr.Spec.Interval.Duration != ReleaseInterval {
		t.Errorf("install timeout %v, interval %v", hr.Spec.Install.Timeout, hr.Spec.Interval)
	}

	got := f.get("main")
	spec, _, _ := unstructured.NestedMap(got.Object, "spec")
	want := map[string]any{"replicas": int64(3), "size": "10Gi", "version": "v18", "users": map[string]any{"app": map[string]any{"password": "x"}}}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("spec read back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"team": "db"}, got.GetLabels()); diff != "" {
		t.Errorf("labels read back (-want +got):\n%s", diff)
	}
	if ready, _ := readyCondition(got); ready != "Unknown" {
		t.Errorf("Ready = %q before helm-controller reports, want Unknown", ready)
	}
}

// Every invalid field is reported in one 422 naming the application, and
// nothing is written.
func TestCreateRejectsInvalid(t *testing.T) {
	f := newFixture(t, storageKind(t))
	tooLong := strings.Repeat("a", f.kind.MaxNameLength+1)
	for _, tc := range []struct {
		name, body string
		reason     string
		app        string
		wantFields []string
		wantMsg    string
	}{
		{
			name:       "name one character too long",
			reason:     "a name past the kind's limit is refused, saying the limit: the release name built from it must fit",
			app:        tooLong,
			body:       `spec: {}`,
			wantFields: []string{"metadata.name"},
			wantMsg:    fmt.Sprintf("must be no more than %d characters", f.kind.MaxNameLength),
		},
		{
			name:       "name not a DNS-1035 label",
			reason:     "an application name is a DNS-1035 label, as the objects named after it must be",
			app:        "1st",
			body:       `spec: {}`,
			wantFields: []string{"metadata.name"},
		},
		{
			name:       "name missing",
			reason:     "a name is required",
			body:       `spec: {}`,
			wantFields: []string{"metadata.name"},
		},
		{
			name:       "reserved top-level key",
			reason:     "keys starting with _ are the platform's values (_cluster, _namespace): a user may not set them",
			app:        "a",
			body:       `spec: {_secret: x}`,
			wantFields: []string{"spec._secret"},
			wantMsg:    "reserved",
		},
		{
			name:       "wrong type",
			reason:     "values are checked against the application's schema: a wrong type is refused",
			app:        "a",
			body:       `spec: {replicas: three}`,
			wantFields: []string{"spec.replicas"},
		},
		{
			name:       "below minimum",
			reason:     "bounds of the schema are enforced",
			app:        "a",
			body:       `spec: {replicas: 0}`,
			wantFields: []string{"spec.replicas"},
		},
		{
			name:       "not in enum",
			reason:     "an enum of the schema is enforced",
			app:        "a",
			body:       `spec: {version: v9}`,
			wantFields: []string{"spec.version"},
		},
		{
			name:       "nested type",
			reason:     "errors inside nested objects name their full path",
			app:        "a",
			body:       `spec: {users: {app: {password: 1}}}`,
			wantFields: []string{"spec.users.app.password"},
		},
		{
			name:       "spec not an object",
			reason:     "spec is an object of values",
			app:        "a",
			body:       `spec: text`,
			wantFields: []string{"spec"},
		},
		{
			name:       "reserved label",
			reason:     "the platform's labels on an application are reserved",
			app:        "a",
			body:       `{metadata: {labels: {apps.cozystack.io/application.name: x}}, spec: {}}`,
			wantFields: []string{"metadata.labels[apps.cozystack.io/application.name]"},
		},
		{
			name:       "all errors in one response",
			reason:     "every error is returned in one response, so a user fixes all at once",
			app:        tooLong,
			body:       `spec: {_secret: x, replicas: three, version: v9}`,
			wantFields: []string{"metadata.name", "spec._secret", "spec.replicas", "spec.version"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			_, err := f.rest.Create(f.ctx, f.newApp(tc.app, tc.body), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			got := causes(t, err)
			for _, want := range tc.wantFields {
				if !slices.Contains(got, want) {
					t.Errorf("causes %v lack %s (error: %v)", got, want, err)
				}
			}
			st := err.(apierrors.APIStatus).Status()
			if st.Details.Group != "apps.cozystack.io" || st.Details.Kind != "Postgres" {
				t.Errorf("details %s/%s, want apps.cozystack.io/Postgres", st.Details.Group, st.Details.Kind)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
		})
	}
	if hrs := f.helmReleaseNames(); len(hrs) > 0 {
		t.Errorf("invalid creates wrote HelmReleases %v", hrs)
	}
	// The longest allowed name fills Helm's limit exactly.
	longest := strings.Repeat("a", f.kind.MaxNameLength)
	f.create(longest, `spec: {}`)
	if hr := f.mustHelmRelease(longest); len(hr.Name) != appkinds.HelmReleaseNameMaxLength {
		t.Errorf("HelmRelease name %q is %d characters, want %d", hr.Name, len(hr.Name), appkinds.HelmReleaseNameMaxLength)
	}
}

func TestCreateDryRunWritesNothing(t *testing.T) {
	f := newFixture(t, storageKind(t))
	out, err := f.rest.Create(f.ctx, f.newApp("main", `spec: {replicas: 3}`), rest.ValidateAllObjectFunc,
		&metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if out.(*unstructured.Unstructured).GetName() != "main" {
		t.Errorf("dry run returned %v", out)
	}
	if _, err := f.helmRelease("main"); !apierrors.IsNotFound(err) {
		t.Errorf("HelmRelease after dry run: err = %v, want NotFound", err)
	}
	// Dry run still validates.
	_, err = f.rest.Create(f.ctx, f.newApp("main", `spec: {replicas: 0}`), rest.ValidateAllObjectFunc,
		&metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsInvalid(err) {
		t.Errorf("invalid dry run: err = %v, want 422", err)
	}
}

func TestCreateAlreadyExistsNamesTheApplication(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("main", `spec: {}`)
	_, err := f.rest.Create(f.ctx, f.newApp("main", `spec: {}`), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("err = %v, want AlreadyExists", err)
	}
	st := err.(apierrors.APIStatus).Status()
	if d := st.Details; d.Group != "apps.cozystack.io" || d.Kind != "postgreses" || d.Name != "main" {
		t.Errorf("details %+v, want apps.cozystack.io postgreses main", d)
	}
	if want := `postgreses.apps.cozystack.io "main" already exists`; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
}

func TestCreateGenerateName(t *testing.T) {
	f := newFixture(t, storageKind(t))
	for _, base := range []string{"pg-", strings.Repeat("b", 60)} {
		a := f.newApp("", `spec: {}`)
		a.SetGenerateName(base)
		out, err := f.rest.Create(f.ctx, a, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("generateName %q: %v", base, err)
		}
		name := out.(*unstructured.Unstructured).GetName()
		// A long base is shortened so the generated name fits the kind.
		if wantPrefix := base[:min(len(base), f.kind.MaxNameLength-5)]; !strings.HasPrefix(name, wantPrefix) || len(name) != len(wantPrefix)+5 {
			t.Errorf("generateName %q gave %q", base, name)
		}
		f.mustHelmRelease(name)
	}
}

// createValidation (admission) sees the application and can refuse it.
func TestCreateRunsAdmission(t *testing.T) {
	f := newFixture(t, storageKind(t))
	var seen *unstructured.Unstructured
	deny := func(_ context.Context, obj runtime.Object) error {
		seen = obj.(*unstructured.Unstructured)
		return apierrors.NewForbidden(schema.GroupResource{Group: "apps.cozystack.io", Resource: "postgreses"}, "main", fmt.Errorf("denied by policy"))
	}
	_, err := f.rest.Create(f.ctx, f.newApp("main", `spec: {replicas: 3}`), deny, &metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("err = %v, want the admission error", err)
	}
	if seen == nil || seen.GetKind() != "Postgres" || seen.GetNamespace() != f.ns {
		t.Errorf("admission saw %v", seen)
	}
	if hrs := f.helmReleaseNames(); len(hrs) > 0 {
		t.Errorf("denied create wrote %v", hrs)
	}
}

// Get finds only HelmReleases written for this kind.
func TestGetNotFound(t *testing.T) {
	f := newFixture(t, storageKind(t))
	chart := &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "x", Namespace: "cozy-system"}
	for name, lbls := range map[string]map[string]string{
		"unlabelled": nil,
		"redis":      {v1alpha1.LabelApplicationKind: "Redis"},
	} {
		hr := &helmv2.HelmRelease{
			ObjectMeta: metav1.ObjectMeta{Name: f.kind.HelmReleaseName(name), Namespace: f.ns, Labels: lbls},
			Spec:       helmv2.HelmReleaseSpec{ChartRef: chart, Interval: metav1.Duration{Duration: time.Minute}},
		}
		if err := f.c.Create(context.Background(), hr); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"missing", "unlabelled", "redis"} {
		_, err := f.rest.Get(f.ctx, name, &metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("get %s: err = %v, want NotFound", name, err)
			continue
		}
		st := err.(apierrors.APIStatus).Status()
		if want := fmt.Sprintf(`postgreses.apps.cozystack.io %q not found`, name); st.Message != want || st.Details.Name != name {
			t.Errorf("get %s: %q (details %+v), want %q", name, st.Message, st.Details, want)
		}
	}
	// resourceVersion passes through: "0" may be served from the watch
	// cache, which may not hold a just-created object yet (any version is
	// a valid answer), so the test waits for it.
	f.create("main", `spec: {}`)
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err = f.rest.Get(f.ctx, "main", &metav1.GetOptions{ResourceVersion: "0"}); err == nil {
			break
		}
	}
	if err != nil {
		t.Errorf("get at resourceVersion 0: %v", err)
	}
}

func TestList(t *testing.T) {
	f := newFixture(t, storageKind(t))
	other := f.namespace()
	run := f.ns // a label value unique to this test, for all-namespace lists
	f.create("a", fmt.Sprintf(`{metadata: {labels: {team: db, run: %s}}, spec: {}}`, run))
	f.create("b", `{metadata: {labels: {team: web}}, spec: {}}`)
	otherCtx := genericapirequest.WithNamespace(context.Background(), other)
	if _, err := f.rest.Create(otherCtx, f.newApp("c", fmt.Sprintf(`{metadata: {labels: {team: db, run: %s}}, spec: {}}`, run)), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A HelmRelease of another kind with this kind's name prefix.
	if err := f.c.Create(context.Background(), &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "postgres-redis", Namespace: f.ns, Labels: map[string]string{v1alpha1.LabelApplicationKind: "Redis"}},
		Spec:       helmv2.HelmReleaseSpec{ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "x"}, Interval: metav1.Duration{Duration: time.Minute}},
	}); err != nil {
		t.Fatal(err)
	}
	all := genericapirequest.WithNamespace(context.Background(), "")
	cached := f.cachedREST(3, f.ns, other)
	sel := func(s string) labels.Selector {
		l, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, tc := range []struct {
		name   string
		reason string
		ctx    context.Context
		opts   *metainternalversion.ListOptions
		want   []string
	}{
		{
			name:   "namespace",
			reason: "a namespace lists only its own applications",
			ctx:    f.ctx,
			opts:   nil,
			want:   []string{"a", "b"},
		},
		{
			name:   "label selector",
			reason: "label selectors are applied",
			ctx:    f.ctx,
			opts:   &metainternalversion.ListOptions{LabelSelector: sel("team=db")},
			want:   []string{"a"},
		},
		{
			name:   "label selector no match",
			reason: "a label selector matching nothing lists nothing, not everything",
			ctx:    f.ctx,
			opts:   &metainternalversion.ListOptions{LabelSelector: sel("team=none")},
			want:   nil,
		},
		{
			name:   "metadata.name",
			reason: "a metadata.name field selector is applied",
			ctx:    f.ctx,
			opts:   &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "b")},
			want:   []string{"b"},
		},
		{
			name:   "metadata.name not equal",
			reason: "a != field selector is applied too",
			ctx:    f.ctx,
			opts:   &metainternalversion.ListOptions{FieldSelector: fields.OneTermNotEqualSelector("metadata.name", "b")},
			want:   []string{"a"},
		},
		{
			name:   "metadata.namespace",
			reason: "across namespaces a metadata.namespace field selector picks one",
			ctx:    all,
			opts: &metainternalversion.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("metadata.namespace", other)},
			want: []string{"c"},
		},
		{
			name:   "all namespaces",
			reason: "an all-namespaces list returns every namespace's applications",
			ctx:    all,
			opts:   &metainternalversion.ListOptions{LabelSelector: sel("run=" + run)},
			want:   []string{"a", "c"},
		},
		{
			name:   "label and field selector",
			reason: "label and field selectors are applied together",
			ctx:    all,
			opts: &metainternalversion.ListOptions{
				LabelSelector: sel("run=" + run), FieldSelector: fields.OneTermEqualSelector("metadata.name", "c")},
			want: []string{"c"},
		},
		{
			name:   "resourceVersion 0",
			reason: "resourceVersion 0 (served from a cache) lists the same applications",
			ctx:    f.ctx,
			opts:   &metainternalversion.ListOptions{ResourceVersion: "0"},
			want:   []string{"a", "b"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			out, err := f.rest.List(tc.ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, itemNames(out)); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			l := out.(*List)
			if l.GetKind() != "PostgresList" || l.GetAPIVersion() != "apps.cozystack.io/v1alpha1" || l.GetResourceVersion() == "" {
				t.Errorf("list %s %s rv=%q", l.GetAPIVersion(), l.GetKind(), l.GetResourceVersion())
			}

			// The same list at resourceVersion "0" from the cache: the same
			// objects, field for field.
			opts := &metainternalversion.ListOptions{}
			if tc.opts != nil {
				opts = tc.opts.DeepCopy()
			}
			opts.ResourceVersion = "0"
			fromCache, err := cached.List(tc.ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			items := decodedItems(t, l)
			if diff := cmp.Diff(items, decodedItems(t, fromCache)); diff != "" {
				t.Errorf("cached list differs from the consistent list (-consistent +cached):\n%s", diff)
			}
			// Items (memoized JSON, interned specs) are what a fresh
			// conversion of each HelmRelease gives.
			for _, item := range items {
				got, err := f.rest.Get(genericapirequest.WithNamespace(context.Background(), item.GetNamespace()), item.GetName(), &metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got.(*unstructured.Unstructured).GetResourceVersion() != item.GetResourceVersion() {
					continue // changed since the list (helm-controller does not run here, so it should not)
				}
				if diff := cmp.Diff(got.(*unstructured.Unstructured).Object, item.Object); diff != "" {
					t.Errorf("list item %s differs from Get (-get +list):\n%s", item.GetName(), diff)
				}
			}
		})
	}

	_, err := f.rest.List(f.ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.replicas", "2")})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "metadata.name") {
		t.Errorf("unsupported field selector: err = %v, want 400 naming the supported fields", err)
	}

	// Paging: limit and continue reach the HelmRelease list unchanged.
	page, err := f.rest.List(f.ctx, &metainternalversion.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	first := page.(*List)
	if n := len(itemNames(first)); n != 1 || first.GetContinue() == "" {
		t.Fatalf("first page: %d items, continue %q", n, first.GetContinue())
	}
	page, err = f.rest.List(f.ctx, &metainternalversion.ListOptions{Limit: 1, Continue: first.GetContinue()})
	if err != nil {
		t.Fatal(err)
	}
	// The second page holds b or the other kind's HelmRelease, which is
	// filtered out after the HelmRelease page was cut.
	second := page.(*List)
	got := append(itemNames(first), itemNames(second)...)
	if got[0] != "a" || (len(got) == 2 && got[1] != "b") {
		t.Errorf("pages = %v", got)
	}
}

func TestUpdate(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("main", `{metadata: {labels: {team: db}}, spec: {replicas: 3}}`)
	// What the application does not own: a status (written as
	// helm-controller would; it does not run here), a HelmRelease spec field
	// the application does not set, and a platform-injected value.
	f.setReady("main", "Helm install succeeded", "0.4.1")
	hr := f.mustHelmRelease("main")
	hr.Spec.Suspend = true
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"replicas":3,"_cluster":{"host":"example.org"}}`)}
	if err := f.c.Update(context.Background(), hr); err != nil {
		t.Fatal(err)
	}

	stale := f.get("main")
	current := stale.DeepCopy()
	_ = unstructured.SetNestedField(current.Object, int64(5), "spec", "replicas")
	current.SetLabels(map[string]string{"team": "platform"})
	out, created, err := f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(current), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil || created {
		t.Fatalf("update: created=%v err=%v", created, err)
	}
	updated := out.(*unstructured.Unstructured)
	if r, _, _ := unstructured.NestedInt64(updated.Object, "spec", "replicas"); r != 5 || updated.GetResourceVersion() == stale.GetResourceVersion() {
		t.Errorf("updated replicas=%d rv=%s (was %s)", r, updated.GetResourceVersion(), stale.GetResourceVersion())
	}
	hr = f.mustHelmRelease("main")
	v := values(t, hr)
	if v["replicas"] != float64(5) || v["_cluster"] == nil {
		t.Errorf("values = %v, want replicas 5 and the injected _cluster kept", v)
	}
	if !hr.Spec.Suspend || hr.Status.LastAttemptedRevision != "0.4.1" || len(hr.Status.Conditions) != 1 {
		t.Errorf("suspend=%v status=%+v: what the application does not own was lost", hr.Spec.Suspend, hr.Status)
	}
	if hr.Labels["team"] != "platform" || hr.Labels[v1alpha1.LabelApplicationKind] != "Postgres" {
		t.Errorf("labels = %v", hr.Labels)
	}

	// A stale resourceVersion is a 409 for the application.
	_ = unstructured.SetNestedField(stale.Object, int64(7), "spec", "replicas")
	_, _, err = f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(stale), nil, nil, false, &metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale update: err = %v, want Conflict", err)
	}
	if d := err.(apierrors.APIStatus).Status().Details; d.Group != "apps.cozystack.io" || d.Kind != "postgreses" || d.Name != "main" {
		t.Errorf("conflict details %+v", d)
	}
	if strings.Contains(strings.ToLower(err.Error()), "helmrelease") {
		t.Errorf("conflict leaks the HelmRelease: %v", err)
	}

	// An empty resourceVersion is an unconditional update.
	stale.SetResourceVersion("")
	if _, _, err := f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(stale), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatalf("unconditional update: %v", err)
	}

	// A patch: the new object is computed from the current one.
	patch := rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		u := old.(*unstructured.Unstructured).DeepCopy()
		return u, unstructured.SetNestedField(u.Object, "20Gi", "spec", "size")
	})
	out, _, err = f.rest.Update(f.ctx, "main", patch, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	if s, _, _ := unstructured.NestedString(out.(*unstructured.Unstructured).Object, "spec", "size"); s != "20Gi" {
		t.Errorf("patched size = %q", s)
	}
	if v := values(t, f.mustHelmRelease("main")); v["size"] != "20Gi" || v["replicas"] != float64(7) {
		t.Errorf("values after patch = %v", v)
	}
	before := f.mustHelmRelease("main").ResourceVersion

	for _, tc := range []struct {
		name       string
		reason     string
		mutate     func(u *unstructured.Unstructured)
		wantFields []string
	}{
		{
			name:   "schema violation",
			reason: "an update is checked against the schema as a create is",
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "replicas")
			},
			wantFields: []string{"spec.replicas"},
		},
		{
			name:       "rename",
			reason:     "an application cannot be renamed by an update",
			mutate:     func(u *unstructured.Unstructured) { u.SetName("other") },
			wantFields: []string{"metadata.name"},
		},
		{
			name:       "reserved key",
			reason:     "an update may not set the platform's _ keys",
			mutate:     func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "x", "spec", "_secret") },
			wantFields: []string{"spec._secret"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			u := f.get("main")
			tc.mutate(u)
			_, _, err := f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, &metav1.UpdateOptions{})
			if got := causes(t, err); !slices.Equal(got, tc.wantFields) {
				t.Errorf("causes %v, want %v (%v)", got, tc.wantFields, err)
			}
		})
	}

	// Dry run validates and writes nothing.
	u := f.get("main")
	_ = unstructured.SetNestedField(u.Object, int64(9), "spec", "replicas")
	out, _, err = f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, &metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(out.(*unstructured.Unstructured).Object, "spec", "replicas"); r != 9 {
		t.Errorf("dry-run result replicas = %d", r)
	}
	if hr := f.mustHelmRelease("main"); hr.ResourceVersion != before || values(t, hr)["replicas"] != float64(7) {
		t.Errorf("dry run changed the HelmRelease: rv %s → %s, values %v", before, hr.ResourceVersion, values(t, hr))
	}

	// A UID precondition that does not match is a 409.
	u = f.get("main")
	u.SetUID("00000000-0000-0000-0000-000000000000")
	if _, _, err := f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, &metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("UID precondition: err = %v, want Conflict", err)
	}

	// updateValidation (admission) sees new and old.
	u = f.get("main")
	deny := func(_ context.Context, obj, old runtime.Object) error {
		if obj.(*unstructured.Unstructured).GetName() != "main" || old.(*unstructured.Unstructured).GetName() != "main" {
			t.Errorf("admission saw %v and %v", obj, old)
		}
		return apierrors.NewForbidden(f.rest.groupResource(), "main", fmt.Errorf("denied"))
	}
	if _, _, err := f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(u), nil, deny, false, &metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("update admission: err = %v, want Forbidden", err)
	}
}

// Another writer of the HelmRelease between the storage's read and write
// (helm-controller writing status; here the test writes it, since
// helm-controller does not run) does not fail a patch, which is recomputed
// from the fresh object, but does fail an update carrying the
// resourceVersion the client read.
func TestUpdateRacesAnotherWriter(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("main", `spec: {replicas: 3}`)
	calls := 0
	patch := rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		calls++
		if calls == 1 {
			f.setReady("main", "reconciled meanwhile", "0.4.1")
		}
		u := old.(*unstructured.Unstructured).DeepCopy()
		return u, unstructured.SetNestedField(u.Object, int64(4), "spec", "replicas")
	})
	out, _, err := f.rest.Update(f.ctx, "main", patch, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("patch racing a status write: %v", err)
	}
	if calls != 2 {
		t.Errorf("patch computed %d times, want 2 (once more after the conflict)", calls)
	}
	if v, _, _ := unstructured.NestedString(out.(*unstructured.Unstructured).Object, "status", "version"); v != "0.4.1" {
		t.Errorf("status.version = %q: the update did not start from the fresh object", v)
	}

	read := f.get("main")
	calls = 0
	put := rest.DefaultUpdatedObjectInfo(nil, func(context.Context, runtime.Object, runtime.Object) (runtime.Object, error) {
		calls++
		if calls == 1 {
			f.setReady("main", "reconciled again", "0.4.2")
		}
		return read.DeepCopy(), nil
	})
	if _, _, err := f.rest.Update(f.ctx, "main", put, nil, nil, false, &metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update with the resourceVersion read before another write: err = %v, want Conflict", err)
	}
}

func TestUpdateMissing(t *testing.T) {
	f := newFixture(t, storageKind(t))
	u := f.newApp("fresh", `spec: {replicas: 3}`)
	_, _, err := f.rest.Update(f.ctx, "fresh", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, &metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("update of a missing application: err = %v, want NotFound", err)
	}
	// forceAllowCreate (server-side apply) creates it.
	out, created, err := f.rest.Update(f.ctx, "fresh", rest.DefaultUpdatedObjectInfo(u), rest.ValidateAllObjectFunc, nil, true, &metav1.UpdateOptions{})
	if err != nil || !created {
		t.Fatalf("create on update: created=%v err=%v", created, err)
	}
	if out.(*unstructured.Unstructured).GetUID() == "" {
		t.Errorf("created object has no uid")
	}
	if v := values(t, f.mustHelmRelease("fresh")); v["replicas"] != float64(3) {
		t.Errorf("values = %v", v)
	}
}

func TestDelete(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("gone", `spec: {}`)
	f.create("held", `spec: {}`)
	// A finalizer on the HelmRelease (a tenant may not add one through
	// the application, K1; one from before that rule).
	heldHR := f.mustHelmRelease("held")
	heldHR.Finalizers = append(heldHR.Finalizers, "example.com/hold")
	if err := f.c.Update(context.Background(), heldHR); err != nil {
		t.Fatal(err)
	}
	f.create("kept", `spec: {}`)

	// Dry run deletes nothing.
	out, deleted, err := f.rest.Delete(f.ctx, "kept", nil, &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || !deleted || out.(*unstructured.Unstructured).GetName() != "kept" {
		t.Fatalf("dry-run delete: %v deleted=%v err=%v", out, deleted, err)
	}
	f.mustHelmRelease("kept")

	// Preconditions reach kube-apiserver.
	wrong := types.UID("00000000-0000-0000-0000-000000000000")
	if _, _, err := f.rest.Delete(f.ctx, "kept", nil, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrong}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with a wrong UID: err = %v, want Conflict", err)
	}
	// deleteValidation (admission) can refuse.
	deny := func(context.Context, runtime.Object) error {
		return apierrors.NewForbidden(f.rest.groupResource(), "kept", fmt.Errorf("denied"))
	}
	if _, _, err := f.rest.Delete(f.ctx, "kept", deny, &metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete admission: err = %v, want Forbidden", err)
	}
	f.mustHelmRelease("kept")

	out, deleted, err = f.rest.Delete(f.ctx, "gone", nil, &metav1.DeleteOptions{})
	if err != nil || !deleted || out.(*unstructured.Unstructured).GetName() != "gone" {
		t.Fatalf("delete: %v deleted=%v err=%v", out, deleted, err)
	}
	if _, err := f.helmRelease("gone"); !apierrors.IsNotFound(err) {
		t.Errorf("HelmRelease after delete: err = %v, want NotFound", err)
	}

	// A finalizer holds the object: marked for deletion, not deleted.
	uid := f.get("held").GetUID()
	out, deleted, err = f.rest.Delete(f.ctx, "held", nil, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil || deleted {
		t.Fatalf("delete held: deleted=%v err=%v", deleted, err)
	}
	if out.(*unstructured.Unstructured).GetDeletionTimestamp() == nil {
		t.Errorf("held object has no deletionTimestamp")
	}
	// Removing the finalizer through the application lets it go.
	held := f.get("held")
	held.SetFinalizers(nil)
	if _, _, err := f.rest.Update(f.ctx, "held", rest.DefaultUpdatedObjectInfo(held), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.helmRelease("held"); !apierrors.IsNotFound(err) {
		t.Errorf("HelmRelease after its finalizer went: err = %v, want NotFound", err)
	}

	if _, _, err := f.rest.Delete(f.ctx, "gone", nil, &metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: err = %v, want NotFound", err)
	}
}

func TestDeleteCollection(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("a", `{metadata: {labels: {tier: tmp}}, spec: {}}`)
	f.create("b", `{metadata: {labels: {tier: tmp}}, spec: {}}`)
	f.create("keep", `spec: {}`)
	redis := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "redis-a", Namespace: f.ns, Labels: map[string]string{v1alpha1.LabelApplicationKind: "Redis", "tier": "tmp"}},
		Spec:       helmv2.HelmReleaseSpec{ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "x"}, Interval: metav1.Duration{Duration: time.Minute}},
	}
	if err := f.c.Create(context.Background(), redis); err != nil {
		t.Fatal(err)
	}
	sel, _ := labels.Parse("tier=tmp")
	out, err := f.rest.DeleteCollection(f.ctx, nil, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, itemNames(out)); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"postgres-keep", "redis-a"}, f.helmReleaseNames()); diff != "" {
		t.Errorf("HelmReleases left (-want +got):\n%s", diff)
	}
}

// The upstream postgres ApplicationDefinition is served as it is.
func TestUpstreamPostgres(t *testing.T) {
	testenv.Need(t, env)
	var ad *v1alpha1.ApplicationDefinition
	for _, file := range testenv.UpstreamADs(t) {
		var candidate v1alpha1.ApplicationDefinition
		if data, err := os.ReadFile(file); err == nil && yaml.Unmarshal(data, &candidate) == nil && candidate.Name == "postgres" {
			ad = &candidate
		}
	}
	if ad == nil {
		t.Fatal("no postgres ApplicationDefinition among the upstream fixtures")
	}
	k, fail := appkinds.Compile(ad)
	if fail != nil {
		t.Fatal(fail)
	}
	f := newFixture(t, k)
	body := `spec: {replicas: 3, size: 20Gi, users: {app: {password: secret}}, databases: {app: {roles: {admin: [app]}}}}`
	f.create("main", body)
	want := map[string]any{"replicas": float64(3), "size": "20Gi", "users": map[string]any{"app": map[string]any{"password": "secret"}},
		"databases": map[string]any{"app": map[string]any{"roles": map[string]any{"admin": []any{"app"}}}}}
	if diff := cmp.Diff(want, values(t, f.mustHelmRelease("main"))); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	_, err := f.rest.Create(f.ctx, f.newApp("bad", `spec: {resourcesPreset: huge, quorum: {maxSyncReplicas: many}}`), nil, &metav1.CreateOptions{})
	got := causes(t, err)
	for _, want := range []string{"spec.resourcesPreset", "spec.quorum.maxSyncReplicas"} {
		if !slices.Contains(got, want) {
			t.Errorf("causes %v lack %s", got, want)
		}
	}
}

// HelmRelease errors are rewritten to name the application; errors about
// other resources pass through.
func TestMapError(t *testing.T) {
	r := NewREST(storageKind(t), Backend{})
	hrGR := schema.GroupResource{Group: helmv2.GroupVersion.Group, Resource: "helmreleases"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: helmv2.GroupVersion.Group, Kind: "HelmRelease"}, "postgres-main",
		field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations"), "x", `too long for HelmRelease.helm.toolkit.fluxcd.io "postgres-main"`)})
	for _, tc := range []struct {
		name    string
		reason  string
		err     error
		check   func(error) bool
		message string
		kind    string
	}{
		{
			name:    "not found",
			reason:  "a HelmRelease not found is reported as the application not found, by its name",
			err:     apierrors.NewNotFound(hrGR, "postgres-main"),
			check:   apierrors.IsNotFound,
			message: `postgreses.apps.cozystack.io "main" not found`,
			kind:    "postgreses",
		},
		{
			name:    "already exists",
			reason:  "already exists names the application, not its HelmRelease",
			err:     apierrors.NewAlreadyExists(hrGR, "postgres-main"),
			check:   apierrors.IsAlreadyExists,
			message: `postgreses.apps.cozystack.io "main" already exists`,
			kind:    "postgreses",
		},
		{
			name:    "conflict",
			reason:  "a conflict names the application and keeps the retry advice",
			err:     apierrors.NewConflict(hrGR, "postgres-main", fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again")),
			check:   apierrors.IsConflict,
			message: `Operation cannot be fulfilled on postgreses.apps.cozystack.io "main": the object has been modified; please apply your changes to the latest version and try again`,
			kind:    "postgreses",
		},
		{
			name:    "invalid",
			reason:  "an invalid HelmRelease is reported as an invalid application, its message rewritten",
			err:     invalid,
			check:   apierrors.IsInvalid,
			message: `Postgres.apps.cozystack.io "main" is invalid: metadata.annotations: Invalid value: "x": too long for Postgres.apps.cozystack.io "main"`,
			kind:    "Postgres",
		},
		{
			name:    "other resource",
			reason:  "errors about other resources pass through unchanged",
			err:     apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "tenant-a"),
			check:   apierrors.IsNotFound,
			message: `namespaces "tenant-a" not found`,
			kind:    "namespaces",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			err := r.mapError(tc.err, "main")
			if !tc.check(err) {
				t.Fatalf("mapped to %v, lost its reason", err)
			}
			st := err.(apierrors.APIStatus).Status()
			if st.Message != tc.message {
				t.Errorf("message\n got %q\nwant %q", st.Message, tc.message)
			}
			if st.Details.Kind != tc.kind {
				t.Errorf("details kind %q, want %q", st.Details.Kind, tc.kind)
			}
			if tc.kind != "namespaces" && (st.Details.Group != "apps.cozystack.io" || st.Details.Name != "main") {
				t.Errorf("details %+v", st.Details)
			}
			for _, c := range st.Details.Causes {
				if strings.Contains(c.Message, "HelmRelease") {
					t.Errorf("cause leaks the HelmRelease: %q", c.Message)
				}
			}
		})
	}
}

// Interface facts the server wiring relies on.
func TestNames(t *testing.T) {
	r := NewREST(storageKind(t), Backend{})
	if r.Kind() != "Postgres" || r.GetSingularName() != "postgres" || !slices.Equal(r.ShortNames(), []string{"pg"}) || !r.NamespaceScoped() {
		t.Errorf("names: %s %s %v %v", r.Kind(), r.GetSingularName(), r.ShortNames(), r.NamespaceScoped())
	}
	if gvk := r.New().GetObjectKind().GroupVersionKind(); gvk.String() != "apps.cozystack.io/v1alpha1, Kind=Postgres" {
		t.Errorf("New() = %s", gvk)
	}
	if gvk := r.NewList().GetObjectKind().GroupVersionKind(); gvk.Kind != "PostgresList" {
		t.Errorf("NewList() = %s", gvk)
	}
}

// A namespace moved back to the legacy Secret (contract K2 migration) gets
// new HelmReleases that read it, and an update keeps what
// cozystack-controller chose.
func TestCreateTakesValuesSourceFromNamespace(t *testing.T) {
	f := newFixture(t, storageKind(t))
	ns := &corev1.Namespace{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Name: f.ns}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Annotations = map[string]string{v1alpha1.AnnotationValuesSource: v1alpha1.ValuesSourceSecret}
	if err := f.c.Update(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(env.Config), 0)
	lister := factory.Core().V1().Namespaces().Lister()
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := lister.Get(f.ns)
		if err == nil && n.Annotations[v1alpha1.AnnotationValuesSource] == v1alpha1.ValuesSourceSecret {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("namespace annotation never reached the informer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.rest = NewREST(f.kind, Backend{Client: f.c, Lister: newLister(t), Namespaces: lister})
	f.create("main", `{spec: {}}`)
	hr, err := f.helmRelease("main")
	if err != nil {
		t.Fatal(err)
	}
	if got := hr.Spec.ValuesFrom; len(got) != 1 || got[0].Kind != "Secret" || got[0].Name != v1alpha1.ValuesName {
		t.Fatalf("valuesFrom = %+v, want the legacy Secret %s", got, v1alpha1.ValuesName)
	}
}

// decodedItems are the items of list, decoded as the API server's
// handlers decode them (meta.EachListItem).
func decodedItems(t *testing.T, list runtime.Object) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	if err := apimeta.EachListItem(list, func(o runtime.Object) error {
		out = append(out, o.(*unstructured.Unstructured))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
