package restore_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/restore"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// helmRelease returns the HelmRelease of application name in ns.
func helmRelease(t *testing.T, ns, name string) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{}
	if err := c.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: prefix + name}, hr); err != nil {
		t.Fatalf("HelmRelease of %s %s/%s: %v", kind, ns, name, err)
	}
	return hr
}

func appSpec(t *testing.T, ns, name string) map[string]any {
	t.Helper()
	u := getApp(t, ns, name)
	if u == nil {
		t.Fatalf("%s %s/%s does not exist", kind, ns, name)
	}
	// As JSON decodes it (numbers float64), as the Backup stores it.
	raw, err := json.Marshal(u.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// TestSameTenantRestoreToNewName: alice restores a Backup of her
// application db into a new application copy. The core creates copy
// through cozystack-api from the Backup's snapshot, labelled with the job,
// binds the job to the Backup's driver with the class's timeouts, and
// never writes the source: its HelmRelease is the same object, byte for
// byte, before and after. Once bound the binding stands, even when the
// driver goes away.
func TestSameTenantRestoreToNewName(t *testing.T) {
	start(t)
	ctx := testContext(t)
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	createApp(t, alice, "db", nil, map[string]any{"size": "2Gi", "users": map[string]any{"reporting": "ro"}})
	snapshot := appSpec(t, alice, "db")
	before := helmRelease(t, alice, "db")

	// The Backup's job and class, as a Plan and the binder would leave
	// them; the class's timeouts are copied into the restore's binding.
	class := &backupsv1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: "restore-demo"}, Spec: backupsv1alpha1.BackupClassSpec{
		Strategies: []backupsv1alpha1.ClassStrategy{{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: kind},
			Strategy:        backupsv1alpha1.Strategy{Kind: "Demo"},
		}},
		RunTimeout: dur(2 * time.Hour), DriverWaitTimeout: dur(30 * time.Minute),
	}}
	if err := c.Create(ctx, class); err != nil {
		t.Fatal(err)
	}
	bj := &backupsv1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Namespace: alice, Name: "db-snap-job"}, Spec: backupsv1alpha1.BackupJobSpec{
		ApplicationRef:  backupsv1alpha1.ApplicationRef{ApplicationKind: class.Spec.Strategies[0].ApplicationKind, Name: "db"},
		BackupClassName: class.Name,
	}}
	if err := c.Create(ctx, bj); err != nil {
		t.Fatal(err)
	}
	b := takeBackup(t, alice, "db-snap", "db", "demo", snapshot)

	alicec := as(t, "alice", "tenant-alice-admin")
	waitTenantRoles(t, alicec, alice)
	job := newRestore(t, alicec, alice, "copy-db", "", "db-snap", "copy")
	got := waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	if a := conditionOf(got, backupsv1alpha1.ConditionAuthorized); a.Status != metav1.ConditionTrue || a.Reason != backupsv1alpha1.ReasonGranted {
		t.Errorf("Authorized %+v, want True Granted", a)
	}
	want := &backupsv1alpha1.Binding{
		DriverRef:       backupsv1alpha1.DriverRef{Name: "demo", ProtocolVersion: backupsv1alpha1.ProtocolVersion},
		Strategy:        b.Spec.Strategy,
		BackupClassName: class.Name,
		Timeouts:        class.Timeouts(),
		BoundTime:       metav1.NewTime(clk.Now().Truncate(time.Second)),
	}
	if d := cmp.Diff(want, got.Status.Binding); d != "" {
		t.Errorf("binding (-want +got):\n%s", d)
	}
	if got.Status.Phase != backupsv1alpha1.PhasePending || got.Labels[backupsv1alpha1.LabelDriver] != "demo" {
		t.Errorf("phase %s, labels %v: want Pending and %s=demo", got.Status.Phase, got.Labels, backupsv1alpha1.LabelDriver)
	}
	wantRef := &backupsv1alpha1.ApplicationRef{ApplicationKind: b.Spec.ApplicationRef.ApplicationKind, Name: "copy"}
	if d := cmp.Diff(wantRef, got.Status.TargetRef); d != "" {
		t.Errorf("targetRef (-want +got):\n%s", d)
	}
	if conditionOf(got, backupsv1alpha1.ConditionReady) != nil {
		t.Errorf("Ready %+v after binding: Ready is the driver's from then on", conditionOf(got, backupsv1alpha1.ConditionReady))
	}
	copyApp := getApp(t, alice, "copy")
	if copyApp == nil || copyApp.GetLabels()[restore.LabelRestoreJob] != string(got.UID) {
		t.Fatalf("application copy %v: want it labelled %s=%s", copyApp, restore.LabelRestoreJob, got.UID)
	}
	if d := cmp.Diff(snapshot, releaseValues(t, alice, "copy")); d != "" {
		t.Errorf("copy is not the captured spec (-want +got):\n%s", d)
	}
	if d := cmp.Diff(before, helmRelease(t, alice, "db")); d != "" {
		t.Errorf("the source's HelmRelease changed (-before +after):\n%s", d)
	}
	// Managed fields: the core's manager only, and only on status.
	for _, mf := range got.ManagedFields {
		if mf.Manager == backupsv1alpha1.CoreFieldManager && mf.Subresource != "status" {
			t.Errorf("the core applied %s outside status", mf.Operation)
		}
	}

	// The binding stands: the driver goes away and the job is touched.
	registerDriver(t, "demo", false, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	patch := client.MergeFrom(got.DeepCopy())
	got.Annotations = map[string]string{"touched": "yes"}
	if err := c.Patch(ctx, got, patch); err != nil {
		t.Fatal(err)
	}
	consistently(t, "the binding stands", 2*time.Second, func() error {
		cur := &backupsv1alpha1.RestoreJob{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), cur); err != nil {
			return err
		}
		if d := cmp.Diff(want, cur.Status.Binding); d != "" {
			return fmt.Errorf("binding changed (-want +got):\n%s", d)
		}
		if r := conditionOf(cur, backupsv1alpha1.ConditionDriverBound); r.Reason != backupsv1alpha1.ReasonBound {
			return fmt.Errorf("DriverBound %+v", r)
		}
		return nil
	})
}

// TestInPlace: an InPlace restore binds to the Backup's application in
// the job's namespace and writes nothing to it; InPlace from another
// namespace fails at once, before any grant is looked at; InPlace of an
// application that is gone waits with ApplicationNotFound.
func TestInPlace(t *testing.T) {
	start(t)
	registerDriver(t, "basic", true, []string{backupsv1alpha1.ProtocolVersion})
	createApp(t, alice, "inplace", nil, map[string]any{"size": "3Gi"})
	before := helmRelease(t, alice, "inplace")
	takeBackup(t, alice, "inplace-1", "inplace", "basic", nil)

	job := newRestore(t, c, alice, "inplace", "", "inplace-1", "")
	got := waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	if got.Status.TargetRef == nil || got.Status.TargetRef.Name != "inplace" || got.Status.Binding.DriverRef.Name != "basic" {
		t.Errorf("targetRef %+v, binding %+v: want inplace, basic", got.Status.TargetRef, got.Status.Binding)
	}
	// No class to be found (no BackupJob): the default timeouts.
	if d := cmp.Diff((&backupsv1alpha1.BackupClass{}).Timeouts(), got.Status.Binding.Timeouts); d != "" || got.Status.Binding.BackupClassName != "" {
		t.Errorf("timeouts (-want +got):\n%s, class %q", d, got.Status.Binding.BackupClassName)
	}
	if d := cmp.Diff(before, helmRelease(t, alice, "inplace")); d != "" {
		t.Errorf("the application's HelmRelease changed (-before +after):\n%s", d)
	}

	across := newRestore(t, c, bob, "inplace-across", alice, "inplace-1", "")
	got = waitCondition(t, across, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonInPlaceAcrossNamespaces)
	t.Logf("%s: %s", backupsv1alpha1.ReasonInPlaceAcrossNamespaces, conditionOf(got, backupsv1alpha1.ConditionReady).Message)
	if got.Status.Phase != backupsv1alpha1.PhaseFailed || got.Status.CompletionTime == nil || got.Status.Binding != nil ||
		!strings.Contains(conditionOf(got, backupsv1alpha1.ConditionReady).Message, "NewApplication") {
		t.Errorf("status %+v: want Failed, unbound, pointing at NewApplication", got.Status)
	}

	takeBackup(t, alice, "gone-1", "gone", "basic", nil)
	gone := newRestore(t, c, alice, "gone", "", "gone-1", "")
	got = waitCondition(t, gone, backupsv1alpha1.ConditionDriverBound, metav1.ConditionFalse, backupsv1alpha1.ReasonApplicationNotFound)
	if got.Status.Phase != backupsv1alpha1.PhasePending {
		t.Errorf("phase %s, want Pending", got.Status.Phase)
	}
}

// TestTargetExists: NewApplication into an application that exists and
// was not created by the job fails with TargetExists and leaves it as it
// was, whether it carries no restore label or another job's.
func TestTargetExists(t *testing.T) {
	start(t)
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	takeBackup(t, alice, "exists-1", "db", "demo", map[string]any{"size": "1Gi"})
	for _, labels := range []map[string]string{nil, {restore.LabelRestoreJob: "another-job"}} {
		name := "taken"
		if labels != nil {
			name = "taken-by-another"
		}
		createApp(t, alice, name, labels, map[string]any{"size": "9Gi"})
		before := helmRelease(t, alice, name)
		job := newRestore(t, c, alice, "into-"+name, "", "exists-1", name)
		got := waitCondition(t, job, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonTargetExists)
		t.Logf("TargetExists: %s", conditionOf(got, backupsv1alpha1.ConditionReady).Message)
		if got.Status.Phase != backupsv1alpha1.PhaseFailed || got.Status.Binding != nil || got.Labels[backupsv1alpha1.LabelDriver] != "" {
			t.Errorf("status %+v, labels %v: want Failed and unbound", got.Status, got.Labels)
		}
		if d := cmp.Diff(before, helmRelease(t, alice, name)); d != "" {
			t.Errorf("the existing application changed (-before +after):\n%s", d)
		}
	}
}

// TestCapabilityMissing: a driver without RestoreToNew fails a
// NewApplication restore with CapabilityMissing before anything is
// created, and still binds an InPlace one.
func TestCapabilityMissing(t *testing.T) {
	start(t)
	registerDriver(t, "basic", true, []string{backupsv1alpha1.ProtocolVersion})
	createApp(t, alice, "capsrc", nil, map[string]any{"size": "1Gi"})
	takeBackup(t, alice, "caps-1", "capsrc", "basic", map[string]any{"size": "1Gi"})
	job := newRestore(t, c, alice, "caps-new", "", "caps-1", "caps-copy")
	got := waitCondition(t, job, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonCapabilityMissing)
	t.Logf("CapabilityMissing: %s", conditionOf(got, backupsv1alpha1.ConditionReady).Message)
	if got.Status.Phase != backupsv1alpha1.PhaseFailed || got.Status.Binding != nil {
		t.Errorf("status %+v: want Failed and unbound", got.Status)
	}
	if app := getApp(t, alice, "caps-copy"); app != nil {
		t.Errorf("application caps-copy was created for a job that cannot run")
	}
	inPlace := newRestore(t, c, alice, "caps-inplace", "", "caps-1", "")
	waitCondition(t, inPlace, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
}

// TestDriverWaits: a restore whose driver is not registered, or does not
// renew its Lease, waits (DriverUnavailable, phase Pending) and creates
// nothing; once the driver is live it binds, adopting the application a
// previous attempt of the same job created. A driver speaking no protocol
// of the core's waits with ProtocolIncompatible, and a wait longer than
// the driver wait timeout (default 1h, on the fake clock) fails the job
// with DriverWaitTimeout.
func TestDriverWaits(t *testing.T) {
	start(t)
	ctx := testContext(t)
	takeBackup(t, alice, "late-1", "db", "late", map[string]any{"size": "4Gi"})
	job := newRestore(t, c, alice, "late", "", "late-1", "late-copy")
	got := waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionFalse, backupsv1alpha1.ReasonDriverUnavailable)
	msg := conditionOf(got, backupsv1alpha1.ConditionDriverBound).Message
	t.Logf("DriverUnavailable (no registration): %s", msg)
	if !strings.Contains(msg, "BackupDriver late") || !strings.Contains(msg, "not registered") || got.Status.Phase != backupsv1alpha1.PhasePending {
		t.Errorf("message %q, phase %s: want the driver named as not registered, Pending", msg, got.Status.Phase)
	}
	if r := conditionOf(got, backupsv1alpha1.ConditionReady); r == nil || r.Reason != backupsv1alpha1.ReasonDriverUnavailable {
		t.Errorf("Ready %+v, want False DriverUnavailable", r)
	}
	if getApp(t, alice, "late-copy") != nil {
		t.Fatal("the application was created before a driver could restore into it")
	}

	registerDriver(t, "late", false, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	backuptest.Eventually(t, patience, "DriverUnavailable names the Lease", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return err
		}
		if m := conditionOf(got, backupsv1alpha1.ConditionDriverBound).Message; !strings.Contains(m, "Lease "+backuptest.DriverNamespace+"/backup-driver-late") {
			return fmt.Errorf("message %q", m)
		}
		return nil
	})
	// As if an earlier attempt of this job had created the application
	// and stopped before binding.
	mine := createApp(t, alice, "late-copy", map[string]string{restore.LabelRestoreJob: string(got.UID)}, map[string]any{"size": "4Gi"})
	registerDriver(t, "late", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	if cur := getApp(t, alice, "late-copy"); cur.GetUID() != mine.GetUID() || cur.GetResourceVersion() != mine.GetResourceVersion() {
		t.Errorf("the job's own application was not adopted as it was")
	}

	registerDriver(t, "old", true, []string{"v0alpha9"}, backupsv1alpha1.CapabilityRestoreToNew)
	takeBackup(t, alice, "old-1", "db", "old", map[string]any{"size": "4Gi"})
	old := newRestore(t, c, alice, "old", "", "old-1", "old-copy")
	got = waitCondition(t, old, backupsv1alpha1.ConditionDriverBound, metav1.ConditionFalse, backupsv1alpha1.ReasonProtocolIncompatible)
	msg = conditionOf(got, backupsv1alpha1.ConditionDriverBound).Message
	t.Logf("ProtocolIncompatible: %s", msg)
	if !strings.Contains(msg, "[v0alpha9]") || !strings.Contains(msg, "["+backupsv1alpha1.ProtocolVersion+"]") {
		t.Errorf("message %q lacks both lists", msg)
	}

	clk.Step(61 * time.Minute)
	// Still live on the new time: the wait is the protocol's.
	registerDriver(t, "old", true, []string{"v0alpha9"}, backupsv1alpha1.CapabilityRestoreToNew)
	got = waitCondition(t, old, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonDriverWaitTimeout)
	t.Logf("DriverWaitTimeout: %s", conditionOf(got, backupsv1alpha1.ConditionReady).Message)
	if b := conditionOf(got, backupsv1alpha1.ConditionDriverBound); b.Reason != backupsv1alpha1.ReasonDriverWaitTimeout || got.Status.Phase != backupsv1alpha1.PhaseFailed {
		t.Errorf("DriverBound %+v, phase %s: want DriverWaitTimeout, Failed", b, got.Status.Phase)
	}
	if getApp(t, alice, "old-copy") != nil {
		t.Error("an application was created for a job that never bound")
	}
}

// TestCancelBeforeBinding: a job cancelled while it waits for its driver
// ends Cancelled by the core, since no driver holds it.
func TestCancelBeforeBinding(t *testing.T) {
	start(t)
	ctx := testContext(t)
	takeBackup(t, alice, "cancel-1", "db", "never", map[string]any{"size": "1Gi"})
	job := newRestore(t, c, alice, "cancel", "", "cancel-1", "cancel-copy")
	got := waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionFalse, backupsv1alpha1.ReasonDriverUnavailable)
	patch := client.MergeFrom(got.DeepCopy())
	got.Spec.Cancel = true
	if err := c.Patch(ctx, got, patch); err != nil {
		t.Fatal(err)
	}
	got = waitCondition(t, job, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonCancelled)
	if got.Status.Phase != backupsv1alpha1.PhaseCancelled || got.Status.CompletionTime == nil || got.Status.Binding != nil {
		t.Errorf("status %+v: want Cancelled, completed, unbound", got.Status)
	}
}

// A Backup's restoreOverlay (a JSON merge patch its driver wrote, e.g. to
// make the chart bootstrap from the backup) is applied to the captured
// spec when the core creates the new application: set keys change, null
// removes, the rest is the snapshot. A bad overlay is TargetInvalid and
// creates nothing.
func TestRestoreOverlay(t *testing.T) {
	start(t)
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	createApp(t, alice, "ov", nil, map[string]any{"size": "2Gi", "users": map[string]any{"reporting": "ro", "app": "rw"}})
	snapshot := appSpec(t, alice, "ov")
	b := backupOf(t, alice, "ov-snap", "ov", "demo", snapshot)
	b.Spec.RestoreOverlay = &backupsv1alpha1.RawSpec{Raw: []byte(`{"size":"3Gi","users":{"reporting":null}}`)}
	createBackup(t, b)
	job := newRestore(t, c, alice, "ov-copy", "", "ov-snap", "ovcopy")
	waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	want := map[string]any{}
	for k, v := range snapshot {
		want[k] = v
	}
	want["size"] = "3Gi"
	want["users"] = map[string]any{"app": "rw"}
	if d := cmp.Diff(want, releaseValues(t, alice, "ovcopy")); d != "" {
		t.Errorf("new application's values (-want +got):\n%s", d)
	}

	bad := backupOf(t, alice, "ov-bad", "ov", "demo", snapshot)
	bad.Spec.RestoreOverlay = &backupsv1alpha1.RawSpec{Raw: []byte(`{"size":{"not":"a string"}}`)}
	createBackup(t, bad)
	job = newRestore(t, c, alice, "ov-bad", "", "ov-bad", "ovbad")
	got := waitCondition(t, job, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonTargetInvalid)
	if got.Status.Phase != backupsv1alpha1.PhaseFailed || getApp(t, alice, "ovbad") != nil {
		t.Errorf("phase %s, application ovbad %v: want Failed and none", got.Status.Phase, getApp(t, alice, "ovbad"))
	}
}

// TestRestoreKeepsKeysTheSchemaDropped: a snapshot taken before a catalog
// upgrade renamed a key holds a value the kind's schema no longer
// declares; the restore fails TargetInvalid naming the field instead of
// creating the application without the value (the API's default
// directive prunes unknown fields with a warning).
func TestRestoreKeepsKeysTheSchemaDropped(t *testing.T) {
	start(t)
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	createApp(t, alice, "stale", nil, map[string]any{"size": "2Gi"})
	snapshot := appSpec(t, alice, "stale")
	snapshot["maxMemory"] = "128Mi"
	createBackup(t, backupOf(t, alice, "stale-snap", "stale", "demo", snapshot))
	job := newRestore(t, c, alice, "stale-copy", "", "stale-snap", "stalecopy")
	got := waitCondition(t, job, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonTargetInvalid)
	msg := conditionOf(got, backupsv1alpha1.ConditionReady).Message
	if !strings.Contains(msg, "spec.maxMemory") || !strings.Contains(msg, "never dropped") {
		t.Errorf("message %q: want the field and that it is not dropped", msg)
	}
	if getApp(t, alice, "stalecopy") != nil {
		t.Error("an application was created without the snapshot's maxMemory")
	}
}
