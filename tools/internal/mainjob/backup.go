package mainjob

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// The tenant's backups: one Plan per application, a RestoreJob into a new
// application; each through the BackupClass its catalog ships.
type backupCase struct {
	kind, app, class, restored string
	appGVR                     schema.GroupVersionResource
	// backend is what the driver creates for a backup and a restore, and
	// completeBackup/completeRestore write its status as its operator would.
	backendBackup, backendRestore   schema.GroupVersionResource
	backendNamespace                string // "" is the application's
	completeBackup, completeRestore func(ctx context.Context, j *job, u *unstructured.Unstructured) error
}

var (
	cnpgBackupGVR    = schema.GroupVersionResource{Group: "postgresql.cnpg.io", Version: "v1", Resource: "backups"}
	veleroBackupGVR  = schema.GroupVersionResource{Group: "velero.io", Version: "v1", Resource: "backups"}
	veleroRestoreGVR = schema.GroupVersionResource{Group: "velero.io", Version: "v1", Resource: "restores"}
)

func backupCases() []backupCase {
	return []backupCase{
		{kind: "Postgres", app: PostgresName, class: "postgres", restored: PostgresName + "-restored", appGVR: postgresGVR,
			backendBackup: cnpgBackupGVR, backendRestore: cnpgClusterGVR,
			completeBackup: completeCNPGBackup, completeRestore: completeCNPGCluster},
		{kind: "VMInstance", app: VMName, class: "vm", restored: VMName + "-restored", appGVR: vmGVR,
			backendBackup: veleroBackupGVR, backendRestore: veleroRestoreGVR, backendNamespace: "cozy-velero",
			completeBackup: completeVelero("Completed", "itemsBackedUp"), completeRestore: completeVelero("Completed", "itemsRestored")},
	}
}

// backupRow is one line of the backups table of the summary.
type backupRow struct {
	kind, name, application, driver, phase, backend string
}

// tenant is a client acting as an administrator of the demo tenant: a
// member of its group tenant-demo-admin (contract K5, "Tenant roles").
func (j *job) tenant() (client.Client, error) {
	cfg := rest.CopyConfig(j.cfg.Kube)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "demo-admin", Groups: []string{TenantNS + "-admin", "system:authenticated"}}
	return client.New(cfg, client.Options{Scheme: j.c.Scheme()})
}

// plan is the tenant's Plan of bc's application: every minute, the last
// seven kept.
func plan(bc backupCase) *v1alpha1.Plan {
	return &v1alpha1.Plan{
		ObjectMeta: metav1.ObjectMeta{Namespace: TenantNS, Name: bc.app},
		Spec: v1alpha1.PlanSpec{
			ApplicationRef:  v1alpha1.ApplicationRef{ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: bc.kind}, Name: bc.app},
			BackupClassName: bc.class,
			Schedule:        v1alpha1.Schedule{Cron: "* * * * *"},
			Retention:       &v1alpha1.Retention{KeepLast: ptr(int32(7))},
		},
	}
}

// firstJob waits for the first BackupJob of the tenant's Plan of bc, then
// suspends the Plan: it runs every minute, and no operator would serve the
// next ones here.
func (j *job) firstJob(ctx context.Context, tc client.Client, bc backupCase) (v1alpha1.BackupJob, error) {
	var bj v1alpha1.BackupJob
	last := "no BackupJob yet (the Plan runs at the next minute)"
	err := j.poll(ctx, func() (bool, error) {
		var jobs v1alpha1.BackupJobList
		if err := tc.List(ctx, &jobs, client.InNamespace(TenantNS), client.MatchingLabels{v1alpha1.LabelPlan: bc.app}); err != nil {
			last = err.Error()
			return false, nil
		}
		if len(jobs.Items) == 0 {
			return false, nil
		}
		bj = oldest(jobs.Items)
		return true, nil
	})
	if err != nil {
		return bj, fmt.Errorf("Plan %s/%s: %s", TenantNS, bc.app, last)
	}
	if err := tc.Patch(ctx, &v1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Namespace: TenantNS, Name: bc.app}},
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":true}}`))); err != nil {
		return bj, fmt.Errorf("suspend Plan %s/%s as the tenant: %w", TenantNS, bc.app, err)
	}
	j.printf("  Plan %s/%s started BackupJob %s; the Plan is suspended after it", TenantNS, bc.app, bj.Name)
	return bj, nil
}

// backUp: the first BackupJob of the tenant's Plan runs through the
// catalog's driver, which creates the backend object; the job writes that
// object's completed status as its operator would (none runs here) and
// waits for the BackupJob to succeed and its Backup to be Ready.
func (j *job) backUp(ctx context.Context, tc client.Client, bc backupCase, bj v1alpha1.BackupJob) (*v1alpha1.Backup, error) {
	backendNS := bc.backendNamespace
	if backendNS == "" {
		backendNS = TenantNS
	}
	obj, err := j.backend(ctx, "BackupJob "+bj.Name, bc.backendBackup, backendNS, bj.UID, func() (v1alpha1.JobStatus, error) {
		err := j.c.Get(ctx, client.ObjectKeyFromObject(&bj), &bj)
		return bj.Status.JobStatus, err
	})
	if err != nil {
		return nil, err
	}
	if err := bc.completeBackup(ctx, j, obj); err != nil {
		_ = j.c.Get(ctx, client.ObjectKeyFromObject(&bj), &bj)
		return nil, fmt.Errorf("write the status of %s %s/%s: %w (BackupJob %s: %s)", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err, bj.Name, describeJob(bj.Status.JobStatus))
	}
	j.printf("  %s %s/%s: wrote its status Completed, as its operator would (none runs here)", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if err := j.waitJob(ctx, "BackupJob", client.ObjectKeyFromObject(&bj), &bj, func() v1alpha1.JobStatus { return bj.Status.JobStatus }); err != nil {
		return nil, err
	}
	var b v1alpha1.Backup
	last := "not found"
	err = j.poll(ctx, func() (bool, error) {
		if err := tc.Get(ctx, client.ObjectKey{Namespace: TenantNS, Name: bj.Status.BackupName}, &b); err != nil {
			last = err.Error()
			return false, nil
		}
		c := apimeta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady)
		if c == nil {
			last = "no Ready condition"
			return false, nil
		}
		last = fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		return c.Status == metav1.ConditionTrue, nil
	})
	if err != nil {
		return nil, fmt.Errorf("Backup %s/%s never Ready (last: %s)", TenantNS, bj.Status.BackupName, last)
	}
	j.printf("  Backup %s/%s: %s", TenantNS, b.Name, last)
	app := bc.kind + "/" + bc.app
	backend := fmt.Sprintf("%s.%s/%s", obj.GetKind(), bc.backendBackup.Group, obj.GetName())
	j.backups = append(j.backups,
		backupRow{"BackupJob", bj.Name, app, bj.Status.Binding.DriverRef.Name, string(bj.Status.Phase), backend},
		backupRow{"Backup", b.Name, app, b.Spec.DriverRef.Name, "Ready", backend})
	return &b, nil
}

// waitJob waits for a BackupJob or RestoreJob to succeed.
func (j *job) waitJob(ctx context.Context, kind string, key client.ObjectKey, obj client.Object, status func() v1alpha1.JobStatus) error {
	last := ""
	err := j.poll(ctx, func() (bool, error) {
		if err := j.c.Get(ctx, key, obj); err != nil {
			last = err.Error()
			return false, nil
		}
		st := status()
		last = describeJob(st)
		if st.Phase.Terminal() && st.Phase != v1alpha1.PhaseSucceeded {
			return false, fmt.Errorf("ended %s", last)
		}
		return st.Phase == v1alpha1.PhaseSucceeded, nil
	})
	if err != nil {
		return fmt.Errorf("%s %s never Succeeded (last: %s): %w", kind, key, last, err)
	}
	j.printf("  %s %s: %s", kind, key, last)
	return nil
}

// describeJob is a job's phase, driver and Ready condition in one line.
func describeJob(st v1alpha1.JobStatus) string {
	s := "phase " + string(st.Phase)
	if st.Phase == "" {
		s = "no phase yet"
	}
	if st.Binding != nil {
		s += ", driver " + st.Binding.DriverRef.Name
	}
	for _, t := range []string{v1alpha1.ConditionReady, "DriverBound"} {
		if c := apimeta.FindStatusCondition(st.Conditions, t); c != nil && c.Status != metav1.ConditionTrue {
			s += fmt.Sprintf(", %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return s
}

func oldest(items []v1alpha1.BackupJob) v1alpha1.BackupJob {
	o := items[0]
	for _, it := range items[1:] {
		if it.CreationTimestamp.Before(&o.CreationTimestamp) {
			o = it
		}
	}
	return o
}

// createCounted creates obj, an object the tenant namespace's ResourceQuota
// cozy-backup-objects counts, waiting up to two minutes while quota
// admission refuses it because the quota's usage is not computed yet
// ("status unknown for quota": kube-controller-manager finds the
// resources of CRDs installed after it started by discovery, every 30 s).
func createCounted(ctx context.Context, c client.Client, obj client.Object) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := c.Create(ctx, obj)
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "status unknown for quota") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// backupsAndRestores runs backUp and restore for every case.
func (j *job) backupsAndRestores(ctx context.Context) error {
	tc, err := j.tenant()
	if err != nil {
		return err
	}
	// Every Plan first: they all run at the next minute.
	for _, bc := range backupCases() {
		p := plan(bc)
		if err := createCounted(ctx, tc, p); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create Plan %s/%s as the tenant: %w", TenantNS, p.Name, err)
		}
		j.printf("  Plan %s/%s created as the tenant: %s %s, class %s, cron %q", TenantNS, p.Name, bc.kind, bc.app, bc.class, p.Spec.Schedule.Cron)
	}
	jobs := map[string]v1alpha1.BackupJob{}
	for _, bc := range backupCases() {
		if jobs[bc.app], err = j.firstJob(ctx, tc, bc); err != nil {
			return fmt.Errorf("%s %s: %w", bc.kind, bc.app, err)
		}
	}
	for _, bc := range backupCases() {
		b, err := j.backUp(ctx, tc, bc, jobs[bc.app])
		if err != nil {
			return fmt.Errorf("%s %s: %w", bc.kind, bc.app, err)
		}
		if err := j.restore(ctx, tc, bc, b); err != nil {
			return fmt.Errorf("%s %s: restore: %w", bc.kind, bc.app, err)
		}
	}
	return nil
}
