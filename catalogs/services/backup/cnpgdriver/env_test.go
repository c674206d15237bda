package cnpgdriver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/cnpgdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/charttest"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

const (
	driverNamespace = "cozy-cnpg-backup-driver"
	credentials     = "s3-creds"
	destination     = "s3://backups/cnpg"
	endpoint        = "https://s3.example.org"
)

// cnpgCRDs are the upstream CNPG CRDs the catalog's operator chart ships.
var cnpgCRDs = []string{"postgresql.cnpg.io_backups.yaml", "postgresql.cnpg.io_clusters.yaml"}

// need skips under -short; it applies the backups.cozystack.io and CNPG
// CRDs, creates the driver's namespace and its credentials Secret, and
// returns a live client.
func need(t *testing.T) client.Client {
	t.Helper()
	testenv.Need(t, env)
	ctx := context.Background()
	if err := crds.Apply(ctx, env.Config); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range cnpgCRDs {
		files = append(files, filepath.Join("..", "..", "charts", "cnpg-operator", "crds", f))
	}
	if err := localcp.ApplyCRDFiles(ctx, env.Config, files...); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: cnpgdriver.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: driverNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: credentials, Namespace: driverNamespace},
			Data: map[string][]byte{cnpgdriver.KeyAccessKeyID: []byte("AKIA"), cnpgdriver.KeySecretAccessKey: []byte("secret")}},
	} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return c
}

func params(t testing.TB, p map[string]any) *apiextensionsv1.JSON {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.JSON{Raw: raw}
}

func objectStoreParams() map[string]any {
	return map[string]any{"barmanObjectStore": map[string]any{
		"destinationPath": destination, "endpointURL": endpoint, "credentialsSecret": credentials}}
}

// postgresSpec is a tenant's Postgres spec the tests use as the
// application's (the conformance suite's snapshot, {"version":"16"}, is
// not a valid postgres spec: the chart's versions are v15..v17).
func postgresSpec() map[string]any {
	return map[string]any{"replicas": 1, "version": "v16", "size": "1Gi"}
}

// renderCluster renders the postgres chart as release with spec (a
// tenant's values; the K2 values are added as valuesFrom adds them) and
// returns its CNPG Cluster.
func renderCluster(release string, spec map[string]any) (*cnpgv1.Cluster, error) {
	ch, err := charttest.Load(filepath.Join("..", "..", "charts", "postgres"))
	if err != nil {
		return nil, err
	}
	out, err := charttest.Render(ch, release, charttest.WithK2(spec))
	if err != nil {
		return nil, err
	}
	objs, err := charttest.Objects(out)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetKind() != "Cluster" {
			continue
		}
		cl := &cnpgv1.Cluster{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, cl); err != nil {
			return nil, err
		}
		return cl, nil
	}
	return nil, fmt.Errorf("the postgres chart rendered no Cluster for %s", release)
}

// withOverlay applies overlay (a JSON merge patch, RFC 7386) to spec, as
// the core does when it creates a new application from a Backup.
func withOverlay(spec map[string]any, overlay *apiextensionsv1.JSON) (map[string]any, error) {
	doc, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if overlay != nil {
		if doc, err = jsonpatch.MergePatch(doc, overlay.Raw); err != nil {
			return nil, fmt.Errorf("apply the restore overlay: %w", err)
		}
	}
	var out map[string]any
	return out, json.Unmarshal(doc, &out)
}

// playApplications plays what no process here runs, until the test ends:
//   - the applications: for every BackupJob, the CNPG Cluster the
//     postgres chart renders for its Postgres exists (Helm would have
//     installed it);
//   - the core, Flux and Helm for a RestoreJob of mode NewApplication:
//     the new application's Cluster, rendered from the chart with the
//     Backup's restoreOverlay applied to the spec;
//   - CNPG for that Cluster: once the recovery credentials the driver
//     projects exist, it writes the Cluster's status healthy and Ready, as
//     CNPG does when the recovery finished.
func playApplications(t *testing.T, c client.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := playOnce(ctx, c); err != nil && ctx.Err() == nil {
				t.Logf("playing the applications: %v", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

func playOnce(ctx context.Context, c client.Client) error {
	var jobs v1alpha1.BackupJobList
	if err := c.List(ctx, &jobs); err != nil {
		return err
	}
	for _, j := range jobs.Items {
		if err := ensureCluster(ctx, c, j.Namespace, cnpgdriver.ClusterName(j.Spec.ApplicationRef.Name), postgresSpec()); err != nil {
			return err
		}
	}
	var restores v1alpha1.RestoreJobList
	if err := c.List(ctx, &restores); err != nil {
		return err
	}
	for _, rj := range restores.Items {
		if rj.Spec.Target.Mode != v1alpha1.RestoreNewApplication || rj.Status.TargetRef == nil {
			continue
		}
		b := &v1alpha1.Backup{}
		ns := rj.Spec.BackupRef.Namespace
		if ns == "" {
			ns = rj.Namespace
		}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: rj.Spec.BackupRef.Name}, b); err != nil {
			continue
		}
		name := cnpgdriver.ClusterName(rj.Status.TargetRef.Name)
		spec, err := withOverlay(postgresSpec(), b.Spec.RestoreOverlay)
		if err != nil {
			return err
		}
		if err := ensureCluster(ctx, c, rj.Namespace, name, spec); err != nil {
			return err
		}
		if err := c.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: cnpgdriver.RecoverySecretName(name)}, &corev1.Secret{}); err != nil {
			continue
		}
		if err := markHealthy(ctx, c, rj.Namespace, name); err != nil {
			return err
		}
	}
	return nil
}

func ensureCluster(ctx context.Context, c client.Client, ns, name string, spec map[string]any) error {
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &cnpgv1.Cluster{}); !apierrors.IsNotFound(err) {
		return err
	}
	cl, err := renderCluster(name, spec)
	if err != nil {
		return err
	}
	cl.Namespace = ns
	if err := c.Create(ctx, cl); err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err) &&
		!strings.Contains(err.Error(), "being terminated") {
		return err
	}
	return nil
}

// markHealthy writes the Cluster's status as CNPG does once every instance
// is up (no CNPG runs here).
func markHealthy(ctx context.Context, c client.Client, ns, name string) error {
	cl := &cnpgv1.Cluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cl); err != nil {
		return err
	}
	if cnpgdriver.ClusterReady(cl) {
		return nil
	}
	cl.Status.Instances, cl.Status.ReadyInstances = cl.Spec.Instances, cl.Spec.Instances
	cl.Status.Phase = cnpgv1.PhaseHealthy
	cl.Status.Conditions = append(cl.Status.Conditions, metav1.Condition{Type: string(cnpgv1.ConditionClusterReady),
		Status: metav1.ConditionTrue, Reason: "ClusterIsReady", Message: "Cluster is Ready", LastTransitionTime: metav1.Now()})
	return c.Status().Update(ctx, cl)
}

// completeBackup writes a CNPG Backup's status as CNPG does when a barman
// backup completed (no CNPG runs here): the locator from the Cluster's
// spec.backup.barmanObjectStore, a backup ID, WALs, LSNs and times.
func completeBackup(ctx context.Context, c client.Client, obj client.Object) error {
	bk, ok := obj.(*cnpgv1.Backup)
	if !ok || bk.Status.Phase == cnpgv1.BackupPhaseCompleted {
		return nil
	}
	cl := &cnpgv1.Cluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: bk.Namespace, Name: bk.Spec.Cluster.Name}, cl); err != nil {
		return err
	}
	now := metav1.Now()
	bk.Status.Phase = cnpgv1.BackupPhaseCompleted
	bk.Status.Method = bk.Spec.Method
	if s := cl.Spec.Backup; s != nil && s.BarmanObjectStore != nil {
		bk.Status.DestinationPath = s.BarmanObjectStore.DestinationPath
		bk.Status.EndpointURL = s.BarmanObjectStore.EndpointURL
	}
	bk.Status.ServerName = cl.Name
	bk.Status.BackupID = "20261202T073000"
	bk.Status.BackupName = "backup-" + bk.Status.BackupID
	bk.Status.BeginWal, bk.Status.EndWal = "000000010000000000000002", "000000010000000000000003"
	bk.Status.BeginLSN, bk.Status.EndLSN = "0/2000028", "0/3000060"
	bk.Status.StartedAt, bk.Status.StoppedAt = &now, &now
	return c.Status().Update(ctx, bk)
}

// setPhase writes a CNPG Backup's phase (and error) as CNPG would.
func setPhase(ctx context.Context, c client.Client, bk *cnpgv1.Backup, phase cnpgv1.BackupPhase, msg string) error {
	bk.Status.Phase = phase
	bk.Status.Error = msg
	return c.Status().Update(ctx, bk)
}

// cnpgBackups lists the CNPG Backups of run.
func cnpgBackups(ctx context.Context, c client.Client, run types.UID) ([]client.Object, error) {
	var list cnpgv1.BackupList
	if err := c.List(ctx, &list, client.MatchingLabels{v1alpha1.LabelRun: string(run)}); err != nil {
		return nil, err
	}
	out := make([]client.Object, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// coreStatus is the core's intent for a job's status.
type coreStatus struct {
	Phase               v1alpha1.JobPhase        `json:"phase,omitempty"`
	Binding             *v1alpha1.Binding        `json:"binding,omitempty"`
	Conditions          []metav1.Condition       `json:"conditions,omitempty"`
	ApplicationSnapshot *apiextensionsv1.JSON    `json:"applicationSnapshot,omitempty"`
	TargetRef           *v1alpha1.ApplicationRef `json:"targetRef,omitempty"`
}

var app = v1alpha1.ApplicationRef{ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db"}

// createBound creates job labelled for driverName and binds it as the core
// does (status.binding by server-side apply as v1alpha1.CoreFieldManager).
func createBound(t *testing.T, c client.Client, job client.Object, driverName string, p *apiextensionsv1.JSON, target *v1alpha1.ApplicationRef) {
	t.Helper()
	ctx := context.Background()
	l := job.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[v1alpha1.LabelDriver] = driverName
	job.SetLabels(l)
	if err := c.Create(ctx, job); err != nil {
		t.Fatalf("create %s: %v", job.GetName(), err)
	}
	snap, _ := json.Marshal(postgresSpec())
	st := coreStatus{
		Phase: v1alpha1.PhasePending,
		Binding: &v1alpha1.Binding{
			DriverRef:       v1alpha1.DriverRef{Name: driverName, ProtocolVersion: v1alpha1.ProtocolVersion},
			Strategy:        v1alpha1.Strategy{Kind: cnpgdriver.StrategyKind, Parameters: p},
			BackupClassName: "cnpg", BoundTime: metav1.Now(),
		},
		Conditions: []metav1.Condition{{Type: v1alpha1.ConditionDriverBound, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonBound, Message: "bound to BackupDriver " + driverName, LastTransitionTime: metav1.Now()}},
		TargetRef: target,
	}
	if _, ok := job.(*v1alpha1.BackupJob); ok {
		st.ApplicationSnapshot = &apiextensionsv1.JSON{Raw: snap}
	}
	if err := apply.Status(ctx, c, job, st, v1alpha1.CoreFieldManager); err != nil {
		t.Fatalf("bind %s: %v", job.GetName(), err)
	}
}

func namespace(t *testing.T, c client.Client, name string) string {
	t.Helper()
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
}
