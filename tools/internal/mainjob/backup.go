package mainjob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/tools/internal/podrun"
)

// backupDrivers are the catalogs' backup drivers the job runs as processes:
// the Deployment each driver component's chart installed in its namespace,
// run with that Deployment's arguments, as its ServiceAccount.
var backupDrivers = []struct{ component, namespace string }{
	{"cnpg-backup-driver", "cozy-cnpg-backup-driver"},
	{"velero-backup-driver", "cozy-velero-backup-driver"},
}

// The object store the cluster operator configures for the CNPG
// BackupClass (through the services Package's component values), and the
// Secret with its credentials in the driver's namespace. Nothing connects
// to it here: no CNPG operator runs.
const (
	objectStoreSecret = "demo-object-store"
	objectStorePath   = "s3://demo-backups/postgres"
)

// serviceValues are the services Package's values of its driver
// component: the shipped BackupClass "postgres" backs up to the object
// store above.
func serviceValues() map[string]any {
	return map[string]any{"backupClass": map[string]any{"parameters": map[string]any{
		"method": "barmanObjectStore",
		"barmanObjectStore": map[string]any{
			"destinationPath": objectStorePath, "credentialsSecret": objectStoreSecret,
		},
	}}}
}

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

// startDrivers runs each catalog backup driver as a process (contract K7:
// a driver is its catalog's component), the way its Deployment would run
// it in a pod: the container's arguments with the pod's environment, as
// the Deployment's ServiceAccount (a token from the TokenRequest API, as a
// kubelet mounts it), so the rights it has are exactly the chart's RBAC.
// Only the health probe's address moves to a free loopback port.
func (j *job) startDrivers(ctx context.Context) error {
	if j.cfg.StartProcess == nil || j.cfg.BinDir == "" {
		return fmt.Errorf("no way to start the backup drivers: Config.StartProcess and Config.BinDir are required (cozystack-local main-job sets them)")
	}
	for _, d := range backupDrivers {
		if err := j.startDriver(ctx, d.component, d.namespace); err != nil {
			return fmt.Errorf("%s: %w", d.component, err)
		}
	}
	return nil
}

func (j *job) startDriver(ctx context.Context, component, ns string) error {
	var list appsv1.DeploymentList
	if err := j.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return err
	}
	if len(list.Items) != 1 {
		return fmt.Errorf("%d Deployments in %s, want the one its chart installs", len(list.Items), ns)
	}
	d := list.Items[0]
	if len(d.Spec.Template.Spec.Containers) != 1 {
		return fmt.Errorf("Deployment %s/%s has %d containers, want 1", ns, d.Name, len(d.Spec.Template.Spec.Containers))
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	args, binds, err := podrun.Args(ctr, ns, d.Name+"-local")
	if err != nil {
		return fmt.Errorf("Deployment %s/%s: %w", ns, d.Name, err)
	}
	health, ok := binds["--health-probe-bind-address"]
	if !ok {
		return fmt.Errorf("Deployment %s/%s runs its driver without --health-probe-bind-address: its chart must set it (its probes use it)", ns, d.Name)
	}
	sa := d.Spec.Template.Spec.ServiceAccountName
	if err := os.MkdirAll(j.cfg.WorkDir, 0o700); err != nil {
		return err
	}
	kubeconfig := filepath.Join(j.cfg.WorkDir, ns+"."+sa+".kubeconfig")
	if err := podrun.Kubeconfig(ctx, j.cfg.Kube, ns, sa, driverTokenTTL, kubeconfig); err != nil {
		return err
	}
	binary := filepath.Join(j.cfg.BinDir, component)
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("%w: build it with `make api`", err)
	}
	args = append(args, "--kubeconfig="+kubeconfig)
	if err := j.cfg.StartProcess(ctx, component, binary, args, "http://"+health+"/readyz"); err != nil {
		return err
	}
	j.printf("  %s runs as system:serviceaccount:%s:%s with the arguments of Deployment %s", component, ns, sa, d.Name)
	return nil
}

// driverTokenTTL is the life of a driver's token. A kubelet would renew
// it; the local control plane keeps running after the job, so it is long.
const driverTokenTTL = 7 * 24 * time.Hour

// configureBackups is the cluster operator's part: the credentials of
// the object store the CNPG BackupClass names (its values were set on the
// services Package by install), in the driver's namespace.
func (j *job) configureBackups(ctx context.Context) error {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: backupDrivers[0].namespace, Name: objectStoreSecret},
		StringData: map[string]string{"ACCESS_KEY_ID": "demo", "ACCESS_SECRET_KEY": "demo-secret"},
	}
	if err := j.c.Patch(ctx, s, client.Apply, fieldManager, client.ForceOwnership); err != nil {
		return fmt.Errorf("Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	for _, bc := range backupCases() {
		var class v1alpha1.BackupClass
		if err := j.poll(ctx, func() (bool, error) { return j.c.Get(ctx, client.ObjectKey{Name: bc.class}, &class) == nil, nil }); err != nil {
			return fmt.Errorf("BackupClass %s (shipped by the catalog serving %s) never appeared", bc.class, bc.kind)
		}
		for _, s := range class.Spec.Strategies {
			if s.Kind == bc.kind {
				j.printf("  BackupClass %s: %s by strategy %s", bc.class, bc.kind, s.Strategy.Kind)
			}
		}
	}
	return nil
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

// restore: the tenant restores the Backup as a new application; the core
// creates it from the captured spec and the driver's overlay, the driver
// restores into it, and the job completes the backend's part as its
// operator would.
func (j *job) restore(ctx context.Context, tc client.Client, bc backupCase, b *v1alpha1.Backup) error {
	rj := &v1alpha1.RestoreJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: TenantNS, Name: bc.restored},
		Spec: v1alpha1.RestoreJobSpec{
			BackupRef: v1alpha1.BackupRef{Name: b.Name},
			Target:    v1alpha1.RestoreTarget{Mode: v1alpha1.RestoreNewApplication, ApplicationName: bc.restored},
		},
	}
	if err := tc.Create(ctx, rj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create RestoreJob %s/%s as the tenant: %w", TenantNS, rj.Name, err)
	}
	key := client.ObjectKeyFromObject(rj)
	if err := j.c.Get(ctx, key, rj); err != nil {
		return err
	}
	// The new application comes first: the core creates it, helm-controller
	// installs its release.
	if err := j.waitApp(ctx, bc.appGVR, TenantNS, bc.restored); err != nil {
		return err
	}
	backendNS := bc.backendNamespace
	if backendNS == "" {
		backendNS = TenantNS
	}
	var (
		obj *unstructured.Unstructured
		err error
	)
	if bc.backendRestore == cnpgClusterGVR {
		// CNPG restores by bootstrapping the new application's own Cluster,
		// which its chart rendered from the Backup's overlay.
		obj, err = j.restoredCluster(ctx, bc.restored)
	} else {
		obj, err = j.backend(ctx, "RestoreJob "+rj.Name, bc.backendRestore, backendNS, rj.UID, func() (v1alpha1.JobStatus, error) {
			err := j.c.Get(ctx, key, rj)
			return rj.Status.JobStatus, err
		})
	}
	if err != nil {
		return err
	}
	if err := bc.completeRestore(ctx, j, obj); err != nil {
		return fmt.Errorf("write the status of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	j.printf("  %s %s/%s: wrote its status as its operator would (none runs here)", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if err := j.waitJob(ctx, "RestoreJob", key, rj, func() v1alpha1.JobStatus { return rj.Status.JobStatus }); err != nil {
		return err
	}
	backend := fmt.Sprintf("%s.%s/%s", obj.GetKind(), bc.backendRestore.Group, obj.GetName())
	j.backups = append(j.backups, backupRow{"RestoreJob", rj.Name, bc.kind + "/" + bc.restored, rj.Status.Binding.DriverRef.Name, string(rj.Status.Phase), backend})
	return nil
}

// restoredCluster returns the new Postgres's CNPG Cluster once its chart
// rendered it, and checks it bootstraps from the backup (the overlay of
// the CNPG driver: bootstrap.recovery).
func (j *job) restoredCluster(ctx context.Context, app string) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	last := "no Cluster yet"
	err := j.poll(ctx, func() (bool, error) {
		list, err := j.dyn.Resource(cnpgClusterGVR).Namespace(TenantNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for i := range list.Items {
			if strings.HasSuffix(list.Items[i].GetName(), "-"+app) {
				u = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the CNPG Cluster of Postgres %s/%s: %s", TenantNS, app, last)
	}
	rec, ok, _ := unstructured.NestedMap(u.Object, "spec", "bootstrap", "recovery")
	if !ok {
		return nil, fmt.Errorf("Cluster %s/%s has no spec.bootstrap.recovery: the restored Postgres does not bootstrap from the backup", u.GetNamespace(), u.GetName())
	}
	j.printf("  Cluster %s/%s bootstraps from the backup: bootstrap.recovery %v", u.GetNamespace(), u.GetName(), rec)
	return u, nil
}

// backend waits for the object of gvr in ns that the driver created for
// the job of UID uid (its run label), and fails early when the job ends
// first.
func (j *job) backend(ctx context.Context, what string, gvr schema.GroupVersionResource, ns string, uid types.UID, status func() (v1alpha1.JobStatus, error)) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	last := "no driver has claimed it yet"
	err := j.poll(ctx, func() (bool, error) {
		st, err := status()
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = describeJob(st)
		if st.Phase.Terminal() && st.Phase != v1alpha1.PhaseSucceeded {
			return false, fmt.Errorf("%s ended %s", what, last)
		}
		list, err := j.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: fmt.Sprintf("%s=%v", v1alpha1.LabelRun, uid)})
		if err != nil || len(list.Items) == 0 {
			return false, nil
		}
		u = &list.Items[0]
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: no %s in %s (last: %s): %w", what, gvr.GroupResource(), ns, last, err)
	}
	return u, nil
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

// completeCNPGBackup writes a CNPG Backup's status as CNPG writes it when
// barman finished: phase completed, where the data is, the WAL range.
func completeCNPGBackup(ctx context.Context, j *job, u *unstructured.Unstructured) error {
	if phase, _, _ := unstructured.NestedString(u.Object, "status", "phase"); phase == "completed" {
		return nil
	}
	cluster, _, _ := unstructured.NestedString(u.Object, "spec", "cluster", "name")
	now := time.Now().UTC().Format(time.RFC3339)
	id := time.Now().UTC().Format("20060102T150405")
	st := map[string]any{
		"phase": "completed", "method": "barmanObjectStore", "serverName": cluster,
		// The CNPG driver points each Cluster at its namespace's own path.
		"destinationPath": objectStorePath + "/" + u.GetNamespace(), "backupId": id, "backupName": "backup-" + id,
		"beginWal": "000000010000000000000002", "endWal": "000000010000000000000003",
		"beginLSN": "0/2000028", "endLSN": "0/3000060", "startedAt": now, "stoppedAt": now,
	}
	if m, ok, _ := unstructured.NestedString(u.Object, "spec", "method"); ok {
		st["method"] = m
	}
	return j.writeStatus(ctx, cnpgBackupGVR, u, st)
}

// completeCNPGCluster writes the restored Cluster's status as CNPG writes
// it once the recovered instance runs: healthy, every instance ready.
func completeCNPGCluster(ctx context.Context, j *job, u *unstructured.Unstructured) error {
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "instances")
	if n == 0 {
		n = 1
	}
	return j.writeStatus(ctx, cnpgClusterGVR, u, map[string]any{
		"phase": "Cluster in healthy state", "instances": n, "readyInstances": n,
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "ClusterIsReady", "message": "Cluster is Ready",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}},
	})
}

// completeVelero writes a Velero Backup's or Restore's status as Velero
// writes it when done: the phase, timestamps and item counts.
func completeVelero(phase, doneField string) func(ctx context.Context, j *job, u *unstructured.Unstructured) error {
	return func(ctx context.Context, j *job, u *unstructured.Unstructured) error {
		if p, _, _ := unstructured.NestedString(u.Object, "status", "phase"); p == phase {
			return nil
		}
		now := time.Now().UTC().Format(time.RFC3339)
		gvr := veleroBackupGVR
		if u.GetKind() == "Restore" {
			gvr = veleroRestoreGVR
		}
		return j.writeStatus(ctx, gvr, u, map[string]any{
			"phase": phase, "startTimestamp": now, "completionTimestamp": now,
			"progress": map[string]any{"totalItems": int64(6), doneField: int64(6)},
		})
	}
}

// writeStatus replaces the status of u. CNPG's CRDs have a status
// subresource; Velero's have none (Velero updates the whole object), so
// its status goes with an update of the object, as Velero writes it.
func (j *job) writeStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, status map[string]any) error {
	r := j.dyn.Resource(gvr).Namespace(u.GetNamespace())
	cur, err := r.Get(ctx, u.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	cur.Object["status"] = status
	opts := metav1.UpdateOptions{FieldManager: string(fieldManager)}
	if gvr.Group == veleroBackupGVR.Group {
		_, err = r.Update(ctx, cur, opts)
	} else {
		_, err = r.UpdateStatus(ctx, cur, opts)
	}
	return err
}
