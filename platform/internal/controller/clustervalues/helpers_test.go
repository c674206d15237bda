package clustervalues_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/schemas"
	"cozystack.io/platform/internal/controller"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/sdk/testenv"
)

var (
	env *testenv.Env
	// c knows the kinds cozystack-controller uses (env.Client lacks
	// cozystack.io) and ExternalArtifacts.
	c client.Client
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{HelmController: true}, &env))
}

// need skips under -short and makes the client.
func need(t testing.TB) {
	t.Helper()
	testenv.Need(t, env)
	if c == nil {
		var err error
		scheme := controllermanager.Scheme()
		if err := sourcev1.AddToScheme(scheme); err != nil {
			t.Fatal(err)
		}
		if c, err = client.New(env.Config, client.Options{Scheme: scheme}); err != nil {
			t.Fatal(err)
		}
	}
}

// instance is one in-process cozystack-controller.
type instance struct {
	mgr     manager.Manager
	metrics string // host:port of /metrics
	cancel  context.CancelFunc
	done    chan error
}

// startController runs cozystack-controller's manager (as the command
// builds it, with --install-crds) until stop or the end of the test.
// Leader election is off unless configure turns it on.
func startController(t *testing.T, configure func(*controller.Options)) *instance {
	t.Helper()
	o := controller.NewOptions()
	o.LeaderElect = false
	o.InstallCRDs = true
	o.MetricsBindAddress = freeAddr(t)
	o.HealthProbeBindAddress = "0"
	o.Projection.StatusInterval = 100 * time.Millisecond
	o.SkipNameValidation = true
	if configure != nil {
		configure(o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := controller.NewManager(ctx, env.Config, o)
	if err != nil {
		cancel()
		t.Fatalf("build the manager: %v", err)
	}
	ctl := &instance{mgr: mgr, metrics: o.MetricsBindAddress, cancel: cancel, done: make(chan error, 1)}
	go func() { ctl.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { ctl.stop(t) })
	return ctl
}

// stop stops the manager and waits for it (idempotent).
func (ctl *instance) stop(t *testing.T) {
	t.Helper()
	if ctl.cancel == nil {
		return
	}
	ctl.cancel()
	ctl.cancel = nil
	select {
	case err := <-ctl.done:
		if err != nil {
			t.Errorf("manager stopped with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("manager did not stop within 30s")
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it returns nil, failing the test with its
// last error after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s: %v", what, timeout, last)
	}
}

func spec() v1alpha1.ClusterValuesSpec {
	return v1alpha1.ClusterValuesSpec{
		RootHost:          "example.org",
		APIServerEndpoint: "https://api.example.org:6443",
		Publishing:        v1alpha1.ClusterValuesPublishing{ExposedServices: []string{"dashboard", "api"}},
		OIDC:              v1alpha1.ClusterValuesOIDC{Enabled: true},
	}
}

// createClusterValues creates the singleton (the CRD must be installed:
// start a controller first) and deletes it at the end of the test.
func createClusterValues(t *testing.T, s v1alpha1.ClusterValuesSpec) *v1alpha1.ClusterValues {
	t.Helper()
	cv := &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterValuesName}, Spec: s}
	if err := c.Create(testContext(t), cv); err != nil {
		t.Fatalf("create ClusterValues: %v", err)
	}
	t.Cleanup(func() { deleteClusterValues(t) })
	return cv
}

func deleteClusterValues(t *testing.T) {
	cv := &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterValuesName}}
	if err := c.Delete(context.Background(), cv); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete ClusterValues: %v", err)
	}
	eventually(t, 30*time.Second, "ClusterValues deleted", func() error {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(cv), cv)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

func getClusterValues(t testing.TB) *v1alpha1.ClusterValues {
	t.Helper()
	cv := &v1alpha1.ClusterValues{}
	if err := c.Get(testContext(t), client.ObjectKey{Name: v1alpha1.ClusterValuesName}, cv); err != nil {
		t.Fatal(err)
	}
	return cv
}

// updateSpec applies change to the singleton's spec.
func updateSpec(t *testing.T, change func(*v1alpha1.ClusterValuesSpec)) *v1alpha1.ClusterValues {
	t.Helper()
	for {
		cv := getClusterValues(t)
		change(&cv.Spec)
		err := c.Update(testContext(t), cv)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatalf("update ClusterValues: %v", err)
		}
		return cv
	}
}

// createNamespace creates a namespace (a tenant one when tenant), named
// with a unique suffix, and deletes it at the end of the test.
func createNamespace(t *testing.T, prefix string, tenant bool, labels map[string]string) *corev1.Namespace {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: map[string]string{}}}
	maps.Copy(ns.Labels, labels)
	if tenant {
		ns.Labels[v1alpha1.LabelTenant] = prefix
	}
	if err := c.Create(testContext(t), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	if tenant {
		if _, ok := labels[v1alpha1.LabelHost]; !ok {
			// The tenant chart sets the host; these tests default it.
			patchNamespace(t, ns.Name, func(ns *corev1.Namespace) { ns.Labels[v1alpha1.LabelHost] = ns.Name + ".example.org" })
			if err := c.Get(testContext(t), client.ObjectKeyFromObject(ns), ns); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return ns
}

// tenantNamespaces creates n tenant namespaces.
func tenantNamespaces(t *testing.T, prefix string, n int) []*corev1.Namespace {
	t.Helper()
	out := make([]*corev1.Namespace, n)
	for i := range out {
		out[i] = createNamespace(t, prefix, true, nil)
	}
	return out
}

func patchNamespace(t *testing.T, name string, change func(*corev1.Namespace)) {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := c.Get(testContext(t), client.ObjectKey{Name: name}, ns); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(ns.DeepCopy())
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	change(ns)
	if err := c.Patch(testContext(t), ns, patch); err != nil {
		t.Fatalf("patch namespace %s: %v", name, err)
	}
}

func getConfigMap(ctx context.Context, namespace string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: v1alpha1.ValuesName}, cm)
	return cm, err
}

// wantValues is the document the controller must write into ns for cv.
func wantValues(t *testing.T, cv *v1alpha1.ClusterValues, ns *corev1.Namespace) map[string]any {
	t.Helper()
	v, err := v1alpha1.Values(&cv.Spec, ns.Labels, ns.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// projected checks that ns's ConfigMap holds the document of cv, with the
// contract's labels and generation annotation, and validates it against
// the K2 schema.
func projected(ctx context.Context, cv *v1alpha1.ClusterValues, ns *corev1.Namespace) error {
	cm, err := getConfigMap(ctx, ns.Name)
	if err != nil {
		return err
	}
	if got := cm.Annotations[v1alpha1.AnnotationGeneration]; got != strconv.FormatInt(cv.Generation, 10) {
		return fmt.Errorf("%s: generation annotation %q, want %d", ns.Name, got, cv.Generation)
	}
	if cm.Labels[v1alpha1.LabelFluxWatch] != v1alpha1.FluxWatchEnabled || cm.Labels[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByController {
		return fmt.Errorf("%s: labels %v lack the Flux watch or managed-by label", ns.Name, cm.Labels)
	}
	if len(cm.Data) != 1 {
		return fmt.Errorf("%s: data keys %v, want only %s", ns.Name, slicesKeys(cm.Data), v1alpha1.ValuesKey)
	}
	var got map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data[v1alpha1.ValuesKey]), &got); err != nil {
		return fmt.Errorf("%s: %s is not YAML: %v", ns.Name, v1alpha1.ValuesKey, err)
	}
	want, err := v1alpha1.Values(&cv.Spec, ns.Labels, ns.Annotations)
	if err != nil {
		return err
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("%s: values (-want +got):\n%s", ns.Name, diff)
	}
	s, err := schemas.Compile(schemas.K2ClusterValues)
	if err != nil {
		return err
	}
	if err := s.Validate(got); err != nil {
		return fmt.Errorf("%s: the projected document fails the K2 schema: %v", ns.Name, err)
	}
	return nil
}

func slicesKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// statusIs checks the singleton's status.
func statusIs(ctx context.Context, generation int64, total, projectedN int32, projectedStatus metav1.ConditionStatus, reason string) error {
	cv := &v1alpha1.ClusterValues{}
	if err := c.Get(ctx, client.ObjectKey{Name: v1alpha1.ClusterValuesName}, cv); err != nil {
		return err
	}
	st := cv.Status
	cond := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ConditionProjected)
	ready := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	if st.ObservedGeneration != generation || st.TotalNamespaces != total || st.ProjectedNamespaces != projectedN ||
		cond == nil || cond.Status != projectedStatus || cond.Reason != reason || ready == nil || ready.Reason != reason {
		return fmt.Errorf("status observedGeneration=%d projected=%d/%d conditions=%s; want %d, %d/%d, Projected=%s %s",
			st.ObservedGeneration, st.ProjectedNamespaces, st.TotalNamespaces, conditionsString(st.Conditions),
			generation, projectedN, total, projectedStatus, reason)
	}
	return nil
}

func conditionsString(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s/%s(%q)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, " ")
}

// scrape reads the controller's /metrics into series -> value, keyed as
// the exposition writes them: name{label="value",...}.
func scrape(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	series := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		series[line[:i]] = v
	}
	return series, sc.Err()
}

// metricsAre checks the given series' values on the controller's
// endpoint.
func (ctl *instance) metricsAre(want map[string]float64) error {
	got, err := ctl.scrapeK2()
	if err != nil {
		return err
	}
	var diffs []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			diffs = append(diffs, fmt.Sprintf("%s = %v (present %v), want %v", k, g, ok, v))
		}
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "; "))
	}
	return nil
}

func (ctl *instance) scrapeK2() (map[string]float64, error) {
	all, err := scrape(ctl.metrics)
	if err != nil {
		return nil, err
	}
	k2 := map[string]float64{}
	for k, v := range all {
		if strings.HasPrefix(k, "cozystack_cluster_values_") {
			k2[k] = v
		}
	}
	return k2, nil
}

// writes is the total of the writes counter of kind.
func (ctl *instance) writes(t testing.TB, kind string) float64 {
	t.Helper()
	m, err := ctl.scrapeK2()
	if err != nil {
		t.Fatal(err)
	}
	return m[`cozystack_cluster_values_writes_total{kind="`+kind+`",operation="create"}`] +
		m[`cozystack_cluster_values_writes_total{kind="`+kind+`",operation="update"}`]
}

// eventFor finds an event (events.k8s.io) about the object named name
// with reason, in namespace (cluster-scoped objects' events go to
// "default").
func eventFor(ctx context.Context, namespace, name, reason string) (*eventsv1.Event, error) {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var seen []string
	for i, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			return &list.Items[i], nil
		}
		if e.Regarding.Name == name {
			seen = append(seen, e.Reason)
		}
	}
	return nil, fmt.Errorf("no event %s about %s/%s (seen: %v)", reason, namespace, name, seen)
}
