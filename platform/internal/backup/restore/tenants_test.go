package restore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// waitTenantRoles waits until cl (a tenant admin) may list RestoreJobs in
// ns: the tenantrbac reconciler has bound the tenant roles there and
// kube-controller-manager has aggregated them.
func waitTenantRoles(t *testing.T, cl client.Client, ns string) {
	t.Helper()
	backuptest.Eventually(t, patience, "tenant roles bound in "+ns, func() error {
		return cl.List(context.Background(), &backupsv1alpha1.RestoreJobList{}, client.InNamespace(ns))
	})
}

func grant(ns, name string, from []string, backups ...string) *backupsv1alpha1.BackupGrant {
	g := &backupsv1alpha1.BackupGrant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: backupsv1alpha1.BackupGrantSpec{BackupNames: backups}}
	for _, f := range from {
		g.Spec.From = append(g.Spec.From, backupsv1alpha1.GrantFrom{Namespace: f})
	}
	return g
}

// releaseValues returns the values of application name's HelmRelease in
// ns: the spec as created, without schema defaults.
func releaseValues(t *testing.T, ns, name string) map[string]any {
	t.Helper()
	hr := &helmv2.HelmRelease{}
	if err := c.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: prefix + name}, hr); err != nil {
		t.Fatalf("HelmRelease of %s %s/%s: %v", kind, ns, name, err)
	}
	var v map[string]any
	if hr.Spec.Values != nil {
		if err := json.Unmarshal(hr.Spec.Values.Raw, &v); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// TestCrossTenantRestoreNeedsGrant: bob (a tenant-bob admin, with the
// platform's tenant roles) restores alice's Backup into his namespace.
// Without a BackupGrant in tenant-alice the job is Authorized=False,
// GrantMissing, naming the grant to create, and nothing is bound or
// created; grants for another Backup or another namespace change nothing;
// alice's grant lets it bind and create the application. A Backup that
// does not exist gets the same GrantMissing message as one that does,
// until a grant covers it (then BackupNotFound).
func TestCrossTenantRestoreNeedsGrant(t *testing.T) {
	start(t)
	ctx := testContext(t)
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	snapshot := map[string]any{"size": "5Gi", "users": map[string]any{"app": "rw"}}
	takeBackup(t, alice, "db-1", "db", "demo", snapshot)
	bobc := as(t, "bob", "tenant-bob-admin")
	alicec := as(t, "alice", "tenant-alice-admin")
	waitTenantRoles(t, bobc, bob)
	waitTenantRoles(t, alicec, alice)

	job := newRestore(t, bobc, bob, "from-alice", alice, "db-1", "from-alice")
	ghost := newRestore(t, bobc, bob, "ghost", alice, "no-such-backup", "ghost")
	got := waitCondition(t, job, backupsv1alpha1.ConditionAuthorized, metav1.ConditionFalse, backupsv1alpha1.ReasonGrantMissing)
	msg := conditionOf(got, backupsv1alpha1.ConditionAuthorized).Message
	t.Logf("GrantMissing: %s", msg)
	for _, want := range []string{"BackupGrant (backups.cozystack.io/v1alpha1) in namespace tenant-alice", "spec.from [{namespace: tenant-bob}]", "spec.backupNames [db-1]"} {
		if !strings.Contains(msg, want) {
			t.Errorf("GrantMissing message %q lacks %q", msg, want)
		}
	}
	notBound := func(j *backupsv1alpha1.RestoreJob) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(j), j); err != nil {
			return err
		}
		if j.Status.Phase != backupsv1alpha1.PhasePending || j.Status.Binding != nil || conditionOf(j, backupsv1alpha1.ConditionDriverBound) != nil ||
			j.Labels[backupsv1alpha1.LabelDriver] != "" || j.Status.TargetRef != nil {
			return fmt.Errorf("not Pending and unbound: labels %v, status %+v", j.Labels, j.Status)
		}
		if r := conditionOf(j, backupsv1alpha1.ConditionAuthorized); r == nil || r.Reason != backupsv1alpha1.ReasonGrantMissing {
			return fmt.Errorf("Authorized %+v, want GrantMissing", r)
		}
		return nil
	}
	nothingInBob := func() error {
		list, err := apps.Resource(gvr).Namespace(bob).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var hrs helmv2.HelmReleaseList
		if err := c.List(ctx, &hrs, client.InNamespace(bob)); err != nil {
			return err
		}
		if len(list.Items) > 0 || len(hrs.Items) > 0 {
			return fmt.Errorf("%d applications, %d HelmReleases in %s", len(list.Items), len(hrs.Items), bob)
		}
		return nil
	}
	if err := notBound(job); err != nil {
		t.Fatal(err)
	}
	if err := nothingInBob(); err != nil {
		t.Fatal(err)
	}
	// A Backup that does not exist reads exactly as one that does: the
	// job learns nothing of tenant-alice.
	g := waitCondition(t, ghost, backupsv1alpha1.ConditionAuthorized, metav1.ConditionFalse, backupsv1alpha1.ReasonGrantMissing)
	if d := cmp.Diff(msg, strings.ReplaceAll(conditionOf(g, backupsv1alpha1.ConditionAuthorized).Message, "no-such-backup", "db-1")); d != "" {
		t.Errorf("GrantMissing for a missing Backup differs from an existing one's (-existing +missing):\n%s", d)
	}

	// Grants for another Backup, or for another namespace, do not count.
	for _, gr := range []*backupsv1alpha1.BackupGrant{
		grant(alice, "bob-other-backup", []string{bob}, "db-2"),
		grant(alice, "carol-db-1", []string{"tenant-carol"}, "db-1"),
	} {
		if err := alicec.Create(ctx, gr); err != nil {
			t.Fatalf("alice creates BackupGrant %s: %v", gr.Name, err)
		}
	}
	consistently(t, "RestoreJob with grants that do not cover it", 3*time.Second, func() error {
		if err := notBound(job); err != nil {
			return err
		}
		return nothingInBob()
	})

	// alice's grant: the job proceeds.
	if err := alicec.Create(ctx, grant(alice, "bob-db-1", []string{bob}, "db-1")); err != nil {
		t.Fatalf("alice creates BackupGrant: %v", err)
	}
	got = waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	if a := conditionOf(got, backupsv1alpha1.ConditionAuthorized); a.Status != metav1.ConditionTrue || a.Reason != backupsv1alpha1.ReasonGranted ||
		!strings.Contains(a.Message, "BackupGrant tenant-alice/bob-db-1") {
		t.Errorf("Authorized %+v, want True Granted naming tenant-alice/bob-db-1", a)
	}
	if got.Status.Binding == nil || got.Status.Binding.DriverRef.Name != "demo" || got.Labels[backupsv1alpha1.LabelDriver] != "demo" {
		t.Errorf("binding %+v, labels %v: want driver demo", got.Status.Binding, got.Labels)
	}
	if d := cmp.Diff(snapshot, releaseValues(t, bob, "from-alice")); d != "" {
		t.Errorf("application tenant-bob/from-alice is not the snapshot (-want +got):\n%s", d)
	}
	// The grant names db-1 only: the other job still learns nothing.
	consistently(t, "RestoreJob of a Backup outside the grant", time.Second, func() error { return notBound(ghost) })
	// A grant of every Backup of tenant-alice: now bob may know it is missing.
	if err := alicec.Create(ctx, grant(alice, "bob-all", []string{bob})); err != nil {
		t.Fatal(err)
	}
	g = waitCondition(t, ghost, backupsv1alpha1.ConditionAuthorized, metav1.ConditionFalse, backupsv1alpha1.ReasonBackupNotFound)
	t.Logf("BackupNotFound: %s", conditionOf(g, backupsv1alpha1.ConditionAuthorized).Message)
}

// TestTenantCannotReachAnotherTenantsBackups: with the platform's tenant
// roles (platform/tenantaccess, bound by tenantrbac), a tenant-bob admin
// may read Backups and create RestoreJobs in tenant-bob only: alice's
// Backups, RestoreJobs and grants are forbidden to him, he cannot grant
// himself access nor forge a Backup or a job's status; a BackupGrant
// created by alice is the only path to her Backups.
func TestTenantCannotReachAnotherTenantsBackups(t *testing.T) {
	start(t)
	ctx := testContext(t)
	takeBackup(t, alice, "rbac-1", "db", "demo", map[string]any{"size": "1Gi"})
	bobc := as(t, "bob", "tenant-bob-admin")
	waitTenantRoles(t, bobc, bob)

	forbidden := []struct {
		what string
		do   func() error
	}{
		{"get a Backup of tenant-alice", func() error {
			return bobc.Get(ctx, client.ObjectKey{Namespace: alice, Name: "rbac-1"}, &backupsv1alpha1.Backup{})
		}},
		{"list the Backups of tenant-alice", func() error {
			return bobc.List(ctx, &backupsv1alpha1.BackupList{}, client.InNamespace(alice))
		}},
		{"list Backups of every namespace", func() error { return bobc.List(ctx, &backupsv1alpha1.BackupList{}) }},
		{"create a BackupGrant in tenant-alice", func() error {
			return bobc.Create(ctx, grant(alice, "self-service", []string{bob}))
		}},
		{"create a RestoreJob in tenant-alice", func() error {
			return bobc.Create(ctx, &backupsv1alpha1.RestoreJob{ObjectMeta: metav1.ObjectMeta{Namespace: alice, Name: "bob-was-here"},
				Spec: backupsv1alpha1.RestoreJobSpec{BackupRef: backupsv1alpha1.BackupRef{Name: "rbac-1"},
					Target: backupsv1alpha1.RestoreTarget{Mode: backupsv1alpha1.RestoreInPlace}}})
		}},
		{"create a Backup in tenant-bob (pointing at anything)", func() error {
			b := &backupsv1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: bob, Name: "forged"}, Spec: backupsv1alpha1.BackupSpec{
				ApplicationRef: backupsv1alpha1.ApplicationRef{ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: kind}, Name: "db"},
				DriverRef:      backupsv1alpha1.DriverRef{Name: "demo", ProtocolVersion: "v1alpha1"}, Strategy: backupsv1alpha1.Strategy{Kind: "Demo"},
				BackupJobName: "x", TakenAt: metav1.Now(),
			}}
			return bobc.Create(ctx, b)
		}},
		{"write the status of his own RestoreJob (a binding)", func() error {
			job := newRestore(t, bobc, bob, "forge-status", "", "nothing-here", "")
			job.Status.Phase = backupsv1alpha1.PhaseSucceeded
			return bobc.Status().Update(ctx, job)
		}},
	}
	for _, f := range forbidden {
		if err := f.do(); !apierrors.IsForbidden(err) {
			t.Errorf("bob may %s: got %v, want 403 Forbidden", f.what, err)
		}
	}
	// What he may do in his own namespace.
	if err := bobc.List(ctx, &backupsv1alpha1.BackupList{}, client.InNamespace(bob)); err != nil {
		t.Errorf("bob lists the Backups of tenant-bob: %v", err)
	}
	if err := bobc.List(ctx, &backupsv1alpha1.BackupGrantList{}, client.InNamespace(bob)); err != nil {
		t.Errorf("bob lists the BackupGrants of tenant-bob: %v", err)
	}
}
