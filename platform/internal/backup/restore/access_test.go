package restore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/restore"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// takeVaultBackup writes, as driver would, the Backup name of the
// RestoreVault app in ns.
func takeVaultBackup(t *testing.T, ns, name, app, driver string) *backupsv1alpha1.Backup {
	t.Helper()
	b := backupOf(t, ns, name, app, driver, map[string]any{"size": "7Gi"})
	b.Spec.ApplicationRef.Kind = vaultKind
	return createBackup(t, b)
}

// appsAs is a client of the application API acting as a member of group.
func appsAs(t *testing.T, user, group string) dynamic.Interface {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{group, "system:authenticated"}}
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// noVault fails unless namespace ns holds no RestoreVault name and no
// HelmRelease of one.
func noVault(t *testing.T, ns, name string) error {
	t.Helper()
	ctx := testContext(t)
	if _, err := apps.Resource(vaultGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s/%s: got %v, want NotFound", vaultKind, ns, name, err)
	}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: vaultPrefix + name}, &helmv2.HelmRelease{})
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("HelmRelease %s/%s%s: got %v, want NotFound", ns, vaultPrefix, name, err)
	}
	return nil
}

// TestTargetForbidden: the core creates a NewApplication target with its
// own identity, so it restores only a kind the namespace's tenant admins
// may create. A RestoreVault, which only super-admins may create, fails
// TargetForbidden and nothing is created, whoever created the job (a
// tenant admin, a cluster admin, or another tenant through a grant); the
// message names the kind, the namespace, the level it takes and the way
// out, which works: a super-admin creates the application and the job
// restores InPlace.
func TestTargetForbidden(t *testing.T) {
	start(t)
	ctx := testContext(t)
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	takeVaultBackup(t, alice, "vault-1", "vault", "demo")
	alicec := as(t, "alice", "tenant-alice-admin")
	waitTenantRoles(t, alicec, alice)

	// What alice may not do herself, the core does not do for her.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": vaultKind,
		"metadata": map[string]any{"name": "vault-copy", "namespace": alice}, "spec": map[string]any{"size": "7Gi"},
	}}
	if _, err := appsAs(t, "alice", "tenant-alice-admin").Resource(vaultGVR).Namespace(alice).Create(ctx, u, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("alice creates a %s: got %v, want 403 Forbidden", vaultKind, err)
	}

	for _, j := range []struct {
		by   string
		cl   client.Client
		name string
	}{{"a tenant admin", alicec, "vault-copy"}, {"a cluster admin", c, "vault-copy-by-admin"}} {
		job := newRestore(t, j.cl, alice, j.name, "", "vault-1", j.name)
		got := waitCondition(t, job, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonTargetForbidden)
		msg := conditionOf(got, backupsv1alpha1.ConditionReady).Message
		t.Logf("TargetForbidden (job by %s): %s", j.by, msg)
		for _, want := range []string{vaultKind, "namespace " + alice, "super-admin", "tenant-alice-admin", "create the application " + vaultKind + " vault", "target.mode InPlace"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if got.Status.Phase != backupsv1alpha1.PhaseFailed || got.Status.CompletionTime == nil || got.Status.Binding != nil ||
			got.Labels[backupsv1alpha1.LabelDriver] != "" || conditionOf(got, backupsv1alpha1.ConditionDriverBound) != nil {
			t.Errorf("labels %v, status %+v: want Failed, completed, unbound", got.Labels, got.Status)
		}
		if a := conditionOf(got, backupsv1alpha1.ConditionAuthorized); a == nil || a.Reason != backupsv1alpha1.ReasonGranted {
			t.Errorf("Authorized %+v, want Granted", a)
		}
		consistently(t, "nothing created for "+j.name, 2*time.Second, func() error { return noVault(t, alice, j.name) })
	}

	// From another tenant, through a grant: the same.
	bobc := as(t, "bob", "tenant-bob-admin")
	waitTenantRoles(t, bobc, bob)
	if err := alicec.Create(ctx, grant(alice, "bob-vault-1", []string{bob}, "vault-1")); err != nil {
		t.Fatal(err)
	}
	cross := newRestore(t, bobc, bob, "vault-from-alice", alice, "vault-1", "vault-from-alice")
	got := waitCondition(t, cross, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonTargetForbidden)
	msg := conditionOf(got, backupsv1alpha1.ConditionReady).Message
	t.Logf("TargetForbidden (across namespaces): %s", msg)
	if !strings.Contains(msg, "namespace "+bob) || !strings.Contains(msg, "tenant-bob-super-admin") {
		t.Errorf("message %q: want namespace %s and group tenant-bob-super-admin named", msg, bob)
	}
	consistently(t, "nothing created in "+bob, time.Second, func() error { return noVault(t, bob, "vault-from-alice") })

	// The way out: a super-admin creates it, and alice restores InPlace.
	u.SetName("vault")
	if _, err := appsAs(t, "root", "tenant-alice-super-admin").Resource(vaultGVR).Namespace(alice).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a super-admin creates %s vault: %v", vaultKind, err)
	}
	inPlace := newRestore(t, alicec, alice, "vault-inplace", "", "vault-1", "")
	got = waitCondition(t, inPlace, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	if got.Status.TargetRef == nil || got.Status.TargetRef.Kind != vaultKind || got.Status.TargetRef.Name != "vault" {
		t.Errorf("targetRef %+v, want %s vault", got.Status.TargetRef, vaultKind)
	}
}

// TestNewApplicationOutsideTenants: in a namespace that is no tenant's
// (only cluster admins create RestoreJobs there), the kind is not
// checked: a RestoreVault is created and the job binds.
func TestNewApplicationOutsideTenants(t *testing.T) {
	start(t)
	ctx := testContext(t)
	const plain = "restore-plain"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: plain}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: plain}, ns); err != nil || ns.Labels[v1alpha1.LabelTenant] != "" {
		t.Fatalf("namespace %s: %v, labels %v", plain, err, ns.Labels)
	}
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	takeVaultBackup(t, plain, "vault-1", "vault", "demo")
	job := newRestore(t, c, plain, "vault-copy", "", "vault-1", "vault-copy")
	got := waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	app, err := apps.Resource(vaultGVR).Namespace(plain).Get(ctx, "vault-copy", metav1.GetOptions{})
	if err != nil || app.GetLabels()[restore.LabelRestoreJob] != string(got.UID) {
		t.Fatalf("%s %s/vault-copy: %v, labels %v: want it created by the job", vaultKind, plain, err, app)
	}
}

// TestClassFromBackup: a Backup's spec.backupClassName names the class
// of the restore's timeouts, before its BackupJob's class.
func TestClassFromBackup(t *testing.T) {
	start(t)
	ctx := testContext(t)
	registerDriver(t, "basic", true, []string{backupsv1alpha1.ProtocolVersion})
	classes := map[string]*backupsv1alpha1.BackupClass{}
	for name, run := range map[string]time.Duration{"restore-by-backup": 3 * time.Hour, "restore-by-job": 5 * time.Hour} {
		classes[name] = &backupsv1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: backupsv1alpha1.BackupClassSpec{
			Strategies: []backupsv1alpha1.ClassStrategy{{
				ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: kind},
				Strategy:        backupsv1alpha1.Strategy{Kind: "Demo"},
			}},
			RunTimeout: dur(run),
		}}
		if err := c.Create(ctx, classes[name]); err != nil {
			t.Fatal(err)
		}
	}
	createApp(t, alice, "classy", nil, map[string]any{"size": "1Gi"})
	bj := &backupsv1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Namespace: alice, Name: "classy-1-job"}, Spec: backupsv1alpha1.BackupJobSpec{
		ApplicationRef:  backupsv1alpha1.ApplicationRef{ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: kind}, Name: "classy"},
		BackupClassName: "restore-by-job",
	}}
	if err := c.Create(ctx, bj); err != nil {
		t.Fatal(err)
	}
	b := backupOf(t, alice, "classy-1", "classy", "basic", nil)
	b.Spec.BackupClassName = "restore-by-backup"
	createBackup(t, b)
	job := newRestore(t, c, alice, "classy", "", "classy-1", "")
	got := waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	want := classes["restore-by-backup"]
	if bd := got.Status.Binding; bd.BackupClassName != want.Name {
		t.Errorf("binding class %q, want %q", bd.BackupClassName, want.Name)
	}
	if d := cmp.Diff(want.Timeouts(), got.Status.Binding.Timeouts); d != "" {
		t.Errorf("timeouts (-want +got):\n%s", d)
	}
}
