package crds_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

// client knows the backup kinds; the CRDs are applied once.
func setup(t *testing.T) client.Client {
	t.Helper()
	testenv.Need(t, env)
	ctx := context.Background()
	if err := crds.Apply(ctx, env.Config); err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = backupsv1alpha1.AddToScheme(s)
	c, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func namespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func job(ns, name string) *backupsv1alpha1.BackupJob {
	return &backupsv1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: backupsv1alpha1.BackupJobSpec{
			ApplicationRef:  backupsv1alpha1.ApplicationRef{ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db"},
			BackupClassName: "default",
		},
	}
}

func binding(driver string) *backupsv1alpha1.Binding {
	return &backupsv1alpha1.Binding{
		DriverRef:       backupsv1alpha1.DriverRef{Name: driver, ProtocolVersion: backupsv1alpha1.ProtocolVersion},
		Strategy:        backupsv1alpha1.Strategy{Kind: "Job"},
		BackupClassName: "default",
		Timeouts:        (&backupsv1alpha1.BackupClass{}).Timeouts(),
		BoundTime:       metav1.Now(),
	}
}

// The CEL rules of the CRDs hold in a real kube-apiserver: a job's binding
// is written once (never changed, never removed), a terminal phase never
// changes, a cancel is never undone, a Backup's spec never changes, a
// restore target is consistent, and a class's timeouts are bounded and
// defaulted.
func TestRules(t *testing.T) {
	c := setup(t)
	ctx := context.Background()
	ns := "rules"
	namespace(t, c, ns)
	core := backupsv1alpha1.CoreFieldManager

	j := job(ns, "bound")
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	st := backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{Binding: binding("job"), Phase: backupsv1alpha1.PhasePending}}
	if err := apply.Status(ctx, c, j, st, core); err != nil {
		t.Fatalf("first binding: %v", err)
	}
	// Resending the same binding is fine (every apply sends it).
	if err := apply.Status(ctx, c, j, st, core); err != nil {
		t.Fatalf("same binding again: %v", err)
	}
	other := st
	other.Binding = binding("velero")
	other.Binding.BoundTime = st.Binding.BoundTime
	for _, tc := range []struct {
		name    string
		status  any
		manager string
		want    string
	}{
		{"rebind to another driver", other, core, "written once"},
		{"rebind by a driver's manager", other, backupsv1alpha1.DriverFieldManager("velero"), "written once"},
		{"remove the binding", backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{Phase: backupsv1alpha1.PhasePending}}, core, "never removed"},
	} {
		err := apply.Status(ctx, c, j, tc.status, tc.manager)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want 422 mentioning %q", tc.name, err, tc.want)
		}
	}

	// Terminal phases are sticky.
	done := st
	done.Phase = backupsv1alpha1.PhaseFailed
	if err := apply.Status(ctx, c, j, done, core); err != nil {
		t.Fatal(err)
	}
	driver := backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{Phase: backupsv1alpha1.PhaseRunning}}
	if err := apply.Status(ctx, c, j, driver, backupsv1alpha1.DriverFieldManager("job")); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "terminal phase") {
		t.Errorf("Failed -> Running: got %v, want 422 naming the terminal phase", err)
	}

	// A cancel is never undone; applicationRef is immutable.
	j2 := job(ns, "cancel")
	j2.Spec.Cancel = true
	if err := c.Create(ctx, j2); err != nil {
		t.Fatal(err)
	}
	j2.Spec.Cancel = false
	if err := c.Update(ctx, j2); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "cannot be resumed") {
		t.Errorf("uncancel: got %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(j2), j2); err != nil {
		t.Fatal(err)
	}
	j2.Spec.ApplicationRef.Name = "other"
	if err := c.Update(ctx, j2); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("change applicationRef: got %v", err)
	}

	// A Backup's spec is immutable.
	b := &backupsv1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b1"}, Spec: backupsv1alpha1.BackupSpec{
		ApplicationRef: j.Spec.ApplicationRef, DriverRef: binding("job").DriverRef, Strategy: backupsv1alpha1.Strategy{Kind: "Job"},
		BackupJobName: "bound", TakenAt: metav1.Now(),
		DriverData: &backupsv1alpha1.RawSpec{Raw: []byte(`{"path":"s3://bucket/x"}`)},
	}}
	if err := c.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	b.Spec.DriverData = &backupsv1alpha1.RawSpec{Raw: []byte(`{"path":"s3://elsewhere"}`)}
	if err := c.Update(ctx, b); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("edit a Backup's spec: got %v", err)
	}

	// Restore targets.
	for _, tc := range []struct {
		target backupsv1alpha1.RestoreTarget
		ok     bool
	}{
		{backupsv1alpha1.RestoreTarget{Mode: backupsv1alpha1.RestoreInPlace}, true},
		{backupsv1alpha1.RestoreTarget{Mode: backupsv1alpha1.RestoreNewApplication, ApplicationName: "copy"}, true},
		{backupsv1alpha1.RestoreTarget{Mode: backupsv1alpha1.RestoreNewApplication}, false},
		{backupsv1alpha1.RestoreTarget{Mode: backupsv1alpha1.RestoreInPlace, ApplicationName: "copy"}, false},
	} {
		r := &backupsv1alpha1.RestoreJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "r-"},
			Spec: backupsv1alpha1.RestoreJobSpec{BackupRef: backupsv1alpha1.BackupRef{Name: "b1"}, Target: tc.target}}
		err := c.Create(ctx, r)
		if tc.ok != (err == nil) {
			t.Errorf("restore target %+v: got %v, want ok=%v", tc.target, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "applicationName is required") {
			t.Errorf("restore target %+v: message %v does not say what to do", tc.target, err)
		}
	}

	// Class timeouts: defaults filled in; bounded.
	class := &backupsv1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: "rules"}, Spec: backupsv1alpha1.BackupClassSpec{
		Strategies: []backupsv1alpha1.ClassStrategy{{ApplicationKind: j.Spec.ApplicationRef.ApplicationKind, Strategy: backupsv1alpha1.Strategy{Kind: "Job"}}},
	}}
	if err := c.Create(ctx, class); err != nil {
		t.Fatal(err)
	}
	if got := class.Spec.RunTimeout; got == nil || got.Duration != 6*time.Hour {
		t.Errorf("runTimeout default = %v, want 6h", got)
	}
	class2 := class.DeepCopy()
	class2.ObjectMeta = metav1.ObjectMeta{Name: "too-long"}
	class2.Spec.RunTimeout = &metav1.Duration{Duration: 200 * time.Hour}
	if err := c.Create(ctx, class2); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "at most 168h") {
		t.Errorf("runTimeout 200h: got %v", err)
	}
}

// kubectl get prints useful columns for every kind, and kubectl explain
// documents the fields from the Go docs.
func TestKubectl(t *testing.T) {
	c := setup(t)
	ctx := context.Background()
	ns := "kubectl"
	namespace(t, c, ns)
	j := job(ns, "nightly-1")
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	st := backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{Binding: binding("job"), Phase: backupsv1alpha1.PhaseRunning,
		Conditions: []metav1.Condition{{Type: backupsv1alpha1.ConditionDriverBound, Status: metav1.ConditionTrue, Reason: backupsv1alpha1.ReasonBound, Message: "bound", LastTransitionTime: metav1.Now()}}}}
	if err := apply.Status(ctx, c, j, st, backupsv1alpha1.CoreFieldManager); err != nil {
		t.Fatal(err)
	}
	plan := &backupsv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"}, Spec: backupsv1alpha1.PlanSpec{
		ApplicationRef: j.Spec.ApplicationRef, BackupClassName: "default", Schedule: backupsv1alpha1.Schedule{Cron: "0 3 * * *"},
	}}
	if err := c.Create(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if plan.Spec.ConcurrencyPolicy != backupsv1alpha1.ForbidConcurrent || plan.Spec.StartingDeadlineSeconds == nil || *plan.Spec.StartingDeadlineSeconds != 300 {
		t.Errorf("plan defaults: %+v", plan.Spec)
	}
	b := &backupsv1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly-1"}, Spec: backupsv1alpha1.BackupSpec{
		ApplicationRef: j.Spec.ApplicationRef, DriverRef: binding("job").DriverRef, Strategy: backupsv1alpha1.Strategy{Kind: "Job"},
		BackupJobName: "nightly-1", PlanName: "nightly", TakenAt: metav1.Now(),
	}}
	if err := c.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	r := &backupsv1alpha1.RestoreJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "undo"}, Spec: backupsv1alpha1.RestoreJobSpec{
		BackupRef: backupsv1alpha1.BackupRef{Name: "nightly-1"}, Target: backupsv1alpha1.RestoreTarget{Mode: backupsv1alpha1.RestoreNewApplication, ApplicationName: "db-copy"},
	}}
	if err := c.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	// "backups" is a plural, never a category: a category of that name
	// would make `kubectl get backups` list every kind of the group.
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"get", "plans", "-n", ns}, []string{"KIND", "APPLICATION", "SCHEDULE", "SUSPEND", "nightly", "Postgres", "0 3 * * *"}},
		{[]string{"get", "backupjobs", "-n", ns}, []string{"PHASE", "DRIVER", "BOUND", "BACKUP", "nightly-1", "Running", "job", "Bound"}},
		{[]string{"get", "backups", "-n", ns}, []string{"DRIVER", "TAKEN", "nightly-1", "job"}},
		{[]string{"get", "restorejobs", "-n", ns}, []string{"BACKUP", "MODE", "TARGET", "PHASE", "undo", "NewApplication"}},
		{[]string{"get", "plans,backupjobs,backups,restorejobs", "-n", ns}, []string{"plan.backups.cozystack.io/nightly", "backupjob.backups.cozystack.io/nightly-1"}},
		{[]string{"explain", "backupjob.status.binding"}, []string{"written once", "driverRef"}},
		{[]string{"explain", "plan.spec.concurrencyPolicy"}, []string{"Forbid", "Replace"}},
		{[]string{"explain", "backupclass.spec.strategies"}, []string{"apiGroup", "strategy"}},
	} {
		out, err := kubectl(t, tc.args...)
		if err != nil {
			t.Errorf("kubectl %v: %v", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("kubectl %v lacks %q", tc.args, w)
			}
		}
	}
}

func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(localcp.DefaultLayout().Binary("kubectl"), append([]string{"--kubeconfig", env.Kubeconfig, "--cache-dir", t.TempDir()}, args...)...)
	out, err := cmd.CombinedOutput()
	t.Logf("$ kubectl %s\n%s", strings.Join(args, " "), out)
	return string(out), err
}

// Every embedded manifest decodes, and the set is the seven kinds.
func TestAll(t *testing.T) {
	list, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, crd := range list {
		kinds = append(kinds, crd.Spec.Names.Kind)
		if crd.Spec.Group != backupsv1alpha1.GroupName {
			t.Errorf("%s: group %s", crd.Name, crd.Spec.Group)
		}
	}
	got, _ := json.Marshal(kinds)
	if want := `["BackupClass","BackupDriver","BackupGrant","BackupJob","Backup","Plan","RestoreJob"]`; string(got) != want {
		t.Errorf("kinds %s, want %s", got, want)
	}
}
