package velerodriver_test

// Integration tests against the real local control plane (sdk/testenv)
// with the backups.cozystack.io CRDs and Velero's CRDs (charts/velero/crds,
// generated from the velero module) applied. No Velero runs here: the
// tests write the status of Velero's Backups, Restores and
// DeleteBackupRequests the way Velero's controllers would (complete,
// setPhase), and say so where they do. No platform core runs either: jobs
// are bound by writing status.binding as the core would (bind).

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/virtualization/backup/velerodriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/backup/driver"
	"cozystack.io/sdk/backup/snapshot"
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
	driverNamespace = "cozy-velero-backup-driver"
	veleroNamespace = "velero"
)

// need skips under -short, applies the CRDs and returns an admin client
// knowing velero.io/v1.
func need(t *testing.T) client.Client {
	t.Helper()
	testenv.Need(t, env)
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	velero, err := charttest.ChartCRDs("../../charts/velero")
	if err != nil {
		t.Fatal(err)
	}
	if err := localcp.ApplyCRDs(context.Background(), env.Config, append(all, velero...)...); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: velerodriver.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{driverNamespace, veleroNamespace} {
		if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return c
}

func namespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := "velero-" + rand.String(6)
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	return ns
}

// options are the driver's options for a test replica.
func options(identity string, claim time.Duration) velerodriver.Options {
	return velerodriver.Options{
		Driver: driver.Options{Namespace: driverNamespace, Identity: identity, ClaimDuration: claim, LeaseDuration: claim,
			SkipNameValidation: true},
		VeleroNamespace: veleroNamespace,
		VerifyInterval:  time.Second,
	}
}

// startDriver runs a replica in the test process until the test ends.
func startDriver(t *testing.T, o velerodriver.Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- velerodriver.Start(ctx, env.Config, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("driver did not stop within 30s")
		}
	})
}

func params(t testing.TB, p map[string]any) *apiextensionsv1.JSON {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.JSON{Raw: raw}
}

var vm = v1alpha1.ApplicationRef{ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "VMInstance"}, Name: "web"}

// coreStatus is what the core writes when it binds a job.
type coreStatus struct {
	Phase                  v1alpha1.JobPhase        `json:"phase,omitempty"`
	Binding                *v1alpha1.Binding        `json:"binding,omitempty"`
	Conditions             []metav1.Condition       `json:"conditions,omitempty"`
	ApplicationSnapshotRef *v1alpha1.SnapshotRef    `json:"applicationSnapshotRef,omitempty"`
	TargetRef              *v1alpha1.ApplicationRef `json:"targetRef,omitempty"`
}

// storeSnapshot stores values in ns as the core does (contract k7,
// "Snapshots": a ConfigMap per digest) and returns the reference.
func storeSnapshot(t *testing.T, c client.Client, ns string, values *apiextensionsv1.JSON) *v1alpha1.SnapshotRef {
	t.Helper()
	canonical, digest, err := snapshot.Canonical(values.Raw)
	if err != nil {
		t.Fatal(err)
	}
	name := snapshot.Name(vm.Name, digest)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{snapshot.LabelSnapshot: snapshot.LabelValues}},
		Data: map[string]string{snapshot.DataKey: string(canonical)}}
	if err := c.Create(context.Background(), cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return &v1alpha1.SnapshotRef{ReleaseName: "vm-instance-" + vm.Name, ReleaseGeneration: 1, Digest: digest, Size: int64(len(canonical)), ConfigMapName: name}
}

// bind writes status.binding as the core would (server-side apply as
// v1alpha1.CoreFieldManager): no core runs in these tests.
func bind(t *testing.T, c client.Client, job client.Object, p *apiextensionsv1.JSON, snapshot *apiextensionsv1.JSON, target *v1alpha1.ApplicationRef) {
	t.Helper()
	st := coreStatus{
		Phase: v1alpha1.PhasePending,
		Binding: &v1alpha1.Binding{
			DriverRef:       v1alpha1.DriverRef{Name: velerodriver.DefaultName, ProtocolVersion: v1alpha1.ProtocolVersion},
			Strategy:        v1alpha1.Strategy{Kind: velerodriver.StrategyKind, Parameters: p},
			BackupClassName: "vms",
			BoundTime:       metav1.Now(),
		},
		Conditions: []metav1.Condition{{Type: v1alpha1.ConditionDriverBound, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonBound, Message: "bound to BackupDriver velero", LastTransitionTime: metav1.Now()}},
		TargetRef: target,
	}
	if snapshot != nil {
		st.ApplicationSnapshotRef = storeSnapshot(t, c, job.GetNamespace(), snapshot)
	}
	if err := apply.Status(context.Background(), c, job, st, v1alpha1.CoreFieldManager); err != nil {
		t.Fatalf("bind %s: %v", job.GetName(), err)
	}
}

// backupJob creates a BackupJob of vm in ns (of Plan plan when set) and
// binds it.
func backupJob(t *testing.T, c client.Client, ns, name, plan string, p *apiextensionsv1.JSON) *v1alpha1.BackupJob {
	t.Helper()
	job := &v1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{v1alpha1.LabelDriver: velerodriver.DefaultName}},
		Spec:       v1alpha1.BackupJobSpec{ApplicationRef: vm, BackupClassName: "vms"},
	}
	if plan != "" {
		job.Labels[v1alpha1.LabelPlan] = plan
	}
	if err := c.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	bind(t, c, job, p, &apiextensionsv1.JSON{Raw: []byte(`{"disks":[{"name":"system"},{"name":"data"}],"runStrategy":"Always"}`)}, nil)
	return job
}

// veleroBackupOf waits for the Velero Backup of the job with UID run.
func veleroBackupOf(t *testing.T, c client.Client, run types.UID) *velerov1.Backup {
	t.Helper()
	var got *velerov1.Backup
	poll(t, "the Velero Backup of run "+string(run), func(ctx context.Context) (bool, error) {
		var list velerov1.BackupList
		if err := c.List(ctx, &list, client.InNamespace(veleroNamespace), client.MatchingLabels{v1alpha1.LabelRun: string(run)}); err != nil {
			return false, err
		}
		if len(list.Items) > 1 {
			t.Fatalf("run %s has %d Velero Backups", run, len(list.Items))
		}
		if len(list.Items) == 1 {
			got = &list.Items[0]
			return true, nil
		}
		return false, nil
	})
	return got
}

// setBackupStatus writes a Velero Backup's status as Velero's backup
// controller would (the CRD has no status subresource: a plain update).
func setBackupStatus(ctx context.Context, c client.Client, key types.NamespacedName, st velerov1.BackupStatus) error {
	return retryConflict(ctx, func() error {
		vb := &velerov1.Backup{}
		if err := c.Get(ctx, key, vb); err != nil {
			return err
		}
		vb.Status = st
		return c.Update(ctx, vb)
	})
}

func retryConflict(ctx context.Context, f func() error) error {
	for {
		err := f()
		if !apierrors.IsConflict(err) || ctx.Err() != nil {
			return err
		}
	}
}

func completed(total int) velerov1.BackupStatus {
	now := metav1.Now()
	return velerov1.BackupStatus{Phase: velerov1.BackupPhaseCompleted, StartTimestamp: &now, CompletionTimestamp: &now,
		Progress: &velerov1.BackupProgress{TotalItems: total, ItemsBackedUp: total}}
}

func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

func getJob(t *testing.T, c client.Client, ns, name string) *v1alpha1.BackupJob {
	t.Helper()
	j := &v1alpha1.BackupJob{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, j); err != nil {
		t.Fatal(err)
	}
	return j
}

// waitJob waits for the job's phase to be terminal and returns it.
func waitJob(t *testing.T, c client.Client, ns, name string) *v1alpha1.BackupJob {
	t.Helper()
	var j *v1alpha1.BackupJob
	poll(t, "BackupJob "+ns+"/"+name+" terminal", func(ctx context.Context) (bool, error) {
		j = getJob(t, c, ns, name)
		return j.Status.Phase.Terminal(), nil
	})
	return j
}
