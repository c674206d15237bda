package mariadbdriver_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/mariadbdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// startDriver runs one driver replica, as the chart's ServiceAccount,
// until the test ends.
func startDriver(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- mariadbdriver.Start(ctx, driverConfig(), mariadbdriver.Options{
			Namespace: driverNamespace, Identity: "test-" + rand.String(4), ClaimDuration: 6 * time.Second,
			LeaseDuration: 6 * time.Second, SkipNameValidation: true,
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("driver stopped with %v", err)
		}
	})
}

func testNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := "mdb-" + rand.String(6)
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	return ns
}

// coreStatus is the core's part of a job's status.
type coreStatus struct {
	Phase               v1alpha1.JobPhase        `json:"phase,omitempty"`
	Binding             *v1alpha1.Binding        `json:"binding,omitempty"`
	Conditions          []metav1.Condition       `json:"conditions,omitempty"`
	ApplicationSnapshot *apiextensionsv1.JSON    `json:"applicationSnapshot,omitempty"`
	TargetRef           *v1alpha1.ApplicationRef `json:"targetRef,omitempty"`
}

// bind binds job to the MariaDB driver as the core does (status.binding
// by server-side apply as v1alpha1.CoreFieldManager, and the driver label
// set at creation).
func bind(t *testing.T, c client.Client, job client.Object, params string, target *v1alpha1.ApplicationRef) {
	t.Helper()
	st := coreStatus{
		Phase: v1alpha1.PhasePending,
		Binding: &v1alpha1.Binding{
			DriverRef:       v1alpha1.DriverRef{Name: mariadbdriver.DefaultName, ProtocolVersion: v1alpha1.ProtocolVersion},
			Strategy:        v1alpha1.Strategy{Kind: mariadbdriver.StrategyKind, Parameters: &apiextensionsv1.JSON{Raw: []byte(params)}},
			BackupClassName: "mariadb",
			BoundTime:       metav1.Now(),
		},
		Conditions: []metav1.Condition{{Type: v1alpha1.ConditionDriverBound, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonBound, Message: "bound to BackupDriver mariadb", LastTransitionTime: metav1.Now()}},
		TargetRef: target,
	}
	if _, ok := job.(*v1alpha1.BackupJob); ok {
		st.ApplicationSnapshot = &apiextensionsv1.JSON{Raw: []byte(`{"replicas":1,"version":"v11.8"}`)}
	}
	if err := apply.Status(context.Background(), c, job, st, v1alpha1.CoreFieldManager); err != nil {
		t.Fatalf("bind %s: %v", job.GetName(), err)
	}
}

var mariadbApp = v1alpha1.ApplicationRef{ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "MariaDB"}, Name: "db"}

func backupJob(t *testing.T, c client.Client, ns, name, params string) *v1alpha1.BackupJob {
	t.Helper()
	job := &v1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{v1alpha1.LabelDriver: mariadbdriver.DefaultName}},
		Spec:       v1alpha1.BackupJobSpec{ApplicationRef: mariadbApp, BackupClassName: "mariadb"},
	}
	if err := c.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	bind(t, c, job, params, nil)
	return job
}

// waitFor polls ok every 200ms for up to a minute.
func waitFor(t *testing.T, what string, ok func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		done, err := ok(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return done, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

func jobPhase(t *testing.T, c client.Client, obj client.Object, phase v1alpha1.JobPhase, onEach func(ctx context.Context) error) {
	t.Helper()
	waitFor(t, obj.GetName()+" "+string(phase), func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		var st v1alpha1.JobPhase
		switch j := obj.(type) {
		case *v1alpha1.BackupJob:
			st = j.Status.Phase
		case *v1alpha1.RestoreJob:
			st = j.Status.Phase
		}
		if st == phase {
			return true, nil
		}
		if st.Terminal() {
			t.Fatalf("%s ended %s, want %s: %s", obj.GetName(), st, phase, readyMessage(obj))
		}
		if onEach != nil {
			return false, onEach(ctx)
		}
		return false, nil
	})
}

func readyMessage(obj client.Object) string {
	var cs []metav1.Condition
	switch j := obj.(type) {
	case *v1alpha1.BackupJob:
		cs = j.Status.Conditions
	case *v1alpha1.RestoreJob:
		cs = j.Status.Conditions
	}
	if c := apimeta.FindStatusCondition(cs, v1alpha1.ConditionReady); c != nil {
		return c.Reason + ": " + c.Message
	}
	return "no Ready condition"
}

// completeRun completes the backend objects of run as the operator would.
func completeRun(c client.Client, run types.UID) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		objs, err := backend(ctx, c, run)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := complete(ctx, c, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// strictDryRun creates a copy of obj (spec only) with a server-side
// dry-run and strict field validation: a field the upstream CRD does not
// know is an error instead of being pruned.
func strictDryRun(t *testing.T, c client.Client, obj *unstructured.Unstructured) {
	t.Helper()
	cp := mariadbdriver.New(obj.GroupVersionKind())
	cp.SetNamespace(obj.GetNamespace())
	cp.SetName(obj.GetName() + "-dry")
	cp.Object["spec"] = obj.Object["spec"]
	if err := c.Create(context.Background(), cp, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
		t.Errorf("%s %s is not valid under the upstream CRD: %v", obj.GetKind(), obj.GetName(), err)
	}
}

// A backup to S3 makes one k8s.mariadb.com Backup of the application's
// MariaDB, valid under the upstream CRD, writing under a folder of its
// own with the projected credentials (owned by the job and by the
// k8s.mariadb.com Backup); the Backup's driverData and restoreOverlay
// name it. An InPlace restore of it is a k8s.mariadb.com Restore of the
// same MariaDB from that Backup, owned by the RestoreJob.
func TestBackupAndRestoreInPlace(t *testing.T) {
	c := need(t)
	ns := testNamespace(t, c)
	startDriver(t)
	job := backupJob(t, c, ns, "nightly-1", params)
	jobPhase(t, c, job, v1alpha1.PhaseSucceeded, completeRun(c, job.UID))

	objs, err := backend(context.Background(), c, job.UID)
	if err != nil || len(objs) != 1 {
		t.Fatalf("backend objects %d (%v), want 1", len(objs), err)
	}
	mb := objs[0].(*unstructured.Unstructured)
	strictDryRun(t, c, mb)
	spec := mb.Object["spec"].(map[string]any)
	if got, _, _ := unstructured.NestedString(spec, "mariaDbRef", "name"); got != "mariadb-db" {
		t.Errorf("mariaDbRef.name %q, want mariadb-db (charts/mariadb names the MariaDB after the release)", got)
	}
	wantPrefix := "mariadb/db/" + ns + "/" + mb.GetName()
	if got, _, _ := unstructured.NestedString(spec, "storage", "s3", "prefix"); got != wantPrefix {
		t.Errorf("s3.prefix %q, want %q", got, wantPrefix)
	}
	secretName, _, _ := unstructured.NestedString(spec, "storage", "s3", "accessKeyIdSecretKeyRef", "name")
	sec := &corev1.Secret{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: secretName}, sec); err != nil {
		t.Fatalf("projected credentials %s: %v", secretName, err)
	}
	var owners []string
	for _, o := range sec.OwnerReferences {
		owners = append(owners, o.Kind+"/"+o.Name)
	}
	if !slices.Contains(owners, "BackupJob/"+job.Name) || !slices.Contains(owners, "Backup/"+mb.GetName()) {
		t.Errorf("credentials owned by %v, want the BackupJob and the k8s.mariadb.com Backup", owners)
	}
	if string(sec.Data[mariadbdriver.SecretAccessKeyKey]) != "s3cret" {
		t.Errorf("projected credentials do not hold the source's data")
	}

	b := &v1alpha1.Backup{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: job.Status.BackupName}, b); err != nil {
		t.Fatal(err)
	}
	var dd mariadbdriver.DriverData
	if err := json.Unmarshal(b.Spec.DriverData.Raw, &dd); err != nil {
		t.Fatal(err)
	}
	if want := (mariadbdriver.DriverData{Backup: mb.GetName(), MariaDB: "mariadb-db", Storage: "s3://backups/" + wantPrefix}); dd != want {
		t.Errorf("driverData %+v, want %+v", dd, want)
	}
	if got := string(b.Spec.RestoreOverlay.Raw); got != `{"bootstrap":{"backupName":"`+mb.GetName()+`"}}` {
		t.Errorf("restoreOverlay %s", got)
	}

	rj := &v1alpha1.RestoreJob{
		ObjectMeta: metav1.ObjectMeta{Name: "back", Namespace: ns, Labels: map[string]string{v1alpha1.LabelDriver: mariadbdriver.DefaultName}},
		Spec: v1alpha1.RestoreJobSpec{BackupRef: v1alpha1.BackupRef{Name: b.Name},
			Target: v1alpha1.RestoreTarget{Mode: v1alpha1.RestoreInPlace}},
	}
	if err := c.Create(context.Background(), rj); err != nil {
		t.Fatal(err)
	}
	target := mariadbApp
	bind(t, c, rj, params, &target)
	jobPhase(t, c, rj, v1alpha1.PhaseSucceeded, completeRun(c, rj.UID))
	objs, err = backend(context.Background(), c, rj.UID)
	if err != nil || len(objs) != 1 {
		t.Fatalf("restore backend objects %d (%v), want 1", len(objs), err)
	}
	r := objs[0].(*unstructured.Unstructured)
	strictDryRun(t, c, r)
	if r.GetKind() != "Restore" || r.Object["spec"].(map[string]any)["backupRef"].(map[string]any)["name"] != mb.GetName() ||
		r.Object["spec"].(map[string]any)["mariaDbRef"].(map[string]any)["name"] != "mariadb-db" {
		t.Errorf("restore object %s: %v", r.GetKind(), r.Object["spec"])
	}
	if refs := r.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != rj.UID {
		t.Errorf("Restore owners %v, want the RestoreJob", refs)
	}
}

// A PVC target makes a Backup whose storage is a PVC, valid under the
// upstream CRD; a Backup the operator reports JobFailed fails the run
// BackendFailed; a Backup the operator never starts fails after the
// strategy's waitTimeout instead of waiting forever.
func TestBackupFailures(t *testing.T) {
	c := need(t)
	ns := testNamespace(t, c)
	startDriver(t)

	pvc := `{"persistentVolumeClaim":{"size":"5Gi","storageClassName":"fast"}}`
	failed := backupJob(t, c, ns, "pvc-failed", pvc)
	jobPhase(t, c, failed, v1alpha1.PhaseFailed, func(ctx context.Context) error {
		objs, err := backend(ctx, c, failed.UID)
		if err != nil {
			return err
		}
		for _, o := range objs {
			u := o.(*unstructured.Unstructured)
			strictDryRun(t, c, u)
			if got, _, _ := unstructured.NestedString(u.Object, "spec", "storage", "persistentVolumeClaim", "resources", "requests", "storage"); got != "5Gi" {
				t.Errorf("PVC size %q, want 5Gi", got)
			}
			if err := setConditions(ctx, c, u, metav1.Condition{Type: mariadbdriver.ConditionComplete, Status: metav1.ConditionTrue,
				Reason: mariadbdriver.ReasonJobFailed, Message: "Failed"}); err != nil {
				return err
			}
		}
		return nil
	})
	if c := apimeta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonBackendFailed || !strings.Contains(c.Message, "JobFailed") {
		t.Errorf("Ready %+v, want BackendFailed naming JobFailed", c)
	}

	stuck := backupJob(t, c, ns, "never-started", `{"persistentVolumeClaim":{"size":"1Gi"},"waitTimeout":"2s"}`)
	jobPhase(t, c, stuck, v1alpha1.PhaseFailed, nil)
	if c := apimeta.FindStatusCondition(stuck.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonBackendFailed || !strings.Contains(c.Message, "waitTimeout") {
		t.Errorf("Ready %+v, want BackendFailed naming the waitTimeout", c)
	}

	missing := backupJob(t, c, ns, "no-secret", `{"s3":{"bucket":"b","endpoint":"e:9000","credentialsSecret":"absent"}}`)
	jobPhase(t, c, missing, v1alpha1.PhaseFailed, nil)
	if objs, _ := backend(context.Background(), c, missing.UID); len(objs) != 0 {
		t.Errorf("a run without its credentials created %d backend objects", len(objs))
	}

	tmpl := backupJob(t, c, ns, "bad-template", `{"s3":{"bucket":"b","endpoint":"e:9000","credentialsSecret":"s3-creds","prefix":"{{ .Nope }}"}}`)
	jobPhase(t, c, tmpl, v1alpha1.PhaseFailed, nil)
	if c := apimeta.FindStatusCondition(tmpl.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonTemplateError || !strings.Contains(c.Message, "s3.prefix") {
		t.Errorf("Ready %+v, want TemplateError naming s3.prefix", c)
	}
}
