package cnpgdriver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// pollInterval is how often a run waiting on CNPG looks again when no
// watch event wakes it.
const pollInterval = 5 * time.Second

// Driver is the CNPG driver (driver.Driver and driver.Reclaimer).
type Driver struct {
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// New returns the CNPG driver.
func New() *Driver { return &Driver{} }

var (
	_ driver.Driver    = (*Driver)(nil)
	_ driver.Reclaimer = (*Driver)(nil)
)

func (d *Driver) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// DriverData is the backup's locator in the Backup's spec.driverData.
type DriverData struct {
	// BackupName and Namespace of the CNPG Backup; ClusterName its Cluster.
	BackupName  string `json:"backupName"`
	Namespace   string `json:"namespace"`
	ClusterName string `json:"clusterName"`
	Method      string `json:"method"`
	// The barman locator (method barmanObjectStore), from CNPG's status.
	ServerName      string `json:"serverName,omitempty"`
	DestinationPath string `json:"destinationPath,omitempty"`
	EndpointURL     string `json:"endpointURL,omitempty"`
	BackupID        string `json:"backupID,omitempty"`
	// The WAL range, LSNs and times of the backup.
	BeginWal  string       `json:"beginWal,omitempty"`
	EndWal    string       `json:"endWal,omitempty"`
	BeginLSN  string       `json:"beginLSN,omitempty"`
	EndLSN    string       `json:"endLSN,omitempty"`
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	StoppedAt *metav1.Time `json:"stoppedAt,omitempty"`
}

// ValidateParameters decodes the parameters strictly (Parameters).
func (d *Driver) ValidateParameters(_ context.Context, _ driver.Operation, s v1alpha1.Strategy) error {
	p := &Parameters{}
	if err := driver.DecodeParameters(s.Parameters, p); err != nil {
		return err
	}
	return p.validate()
}

// ClusterName is the CNPG Cluster of the Postgres application app.
func ClusterName(app string) string { return ReleasePrefix + app }

// ReconcileBackup takes one CNPG Backup of the application's Cluster and
// maps its phase (Classify).
func (d *Driver) ReconcileBackup(ctx context.Context, run *driver.BackupRun) (driver.Outcome, error) {
	p, err := decode(&run.Run)
	if err != nil {
		return driver.Outcome{}, err
	}
	ns := run.Job.Namespace
	cluster := &cnpgv1.Cluster{}
	name := ClusterName(run.Job.Spec.ApplicationRef.Name)
	if err := run.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return waiting(fmt.Sprintf("waiting for the CNPG Cluster %s/%s of the application", ns, name)), nil
		}
		return driver.Outcome{}, err
	}
	switch p.Method {
	case string(cnpgv1.BackupMethodBarmanObjectStore):
		if err := d.configureCluster(ctx, run, cluster, p.BarmanObjectStore); err != nil {
			return driver.Outcome{}, err
		}
	case string(cnpgv1.BackupMethodVolumeSnapshot):
		if err := configureSnapshots(ctx, run, cluster, p.VolumeSnapshot); err != nil {
			return driver.Outcome{}, err
		}
	}
	bk := &cnpgv1.Backup{}
	bk.Name, bk.Namespace = run.ObjectName("cnpg"), ns
	bk.Spec = cnpgv1.BackupSpec{Cluster: cnpgv1.LocalObjectReference{Name: name}, Method: cnpgv1.BackupMethod(p.Method)}
	if p.VolumeSnapshot != nil && p.VolumeSnapshot.Online != nil {
		bk.Spec.Online = ptr.To(*p.VolumeSnapshot.Online)
	}
	if _, err := run.CreateOrAdopt(ctx, bk); err != nil {
		return driver.Outcome{}, err
	}
	class, percent := Classify(bk.Status.Phase)
	switch class {
	case Completed:
		return driver.Outcome{Done: true, DriverData: dataOf(bk, name, p), RestoreOverlay: RestoreOverlay(dataOf(bk, name, p))}, nil
	case Failed:
		msg := bk.Status.Error
		if msg == "" {
			msg = "no error reported"
		}
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "CNPG Backup %s/%s failed: %s", ns, bk.Name, msg)
	case Running:
		return driver.Outcome{RequeueAfter: pollInterval, Progress: &driver.Progress{Percent: ptr.To(percent),
			Message: fmt.Sprintf("CNPG Backup %s/%s is %s", ns, bk.Name, bk.Status.Phase)}}, nil
	}
	bound, _ := p.waitTimeout()
	if waited := d.now().Sub(bk.CreationTimestamp.Time); waited > bound {
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed,
			"CNPG Backup %s/%s stayed in phase %q for %s, longer than waitTimeout %s: check that the CNPG operator runs and that the Cluster %s archives WAL (its status and the operator's logs)",
			ns, bk.Name, bk.Status.Phase, waited.Round(time.Second), bound, name)
	}
	phase := string(bk.Status.Phase)
	if phase == "" {
		phase = "not yet seen by the CNPG operator"
	}
	return waiting(fmt.Sprintf("CNPG Backup %s/%s: %s", ns, bk.Name, phase)), nil
}

func waiting(msg string) driver.Outcome {
	return driver.Outcome{RequeueAfter: pollInterval, Progress: &driver.Progress{Percent: ptr.To(int32(0)), Message: msg}}
}

// BackupSecretName is the Secret the driver projects the object store's
// credentials to, beside the Cluster cluster, for its WAL archiving and
// base backups.
func BackupSecretName(cluster string) string { return cluster + "-backup-credentials" }

// TenantPath is where the Clusters of namespace ns archive in the object
// store at destinationPath (a BackupClass's barmanObjectStore.destinationPath,
// shared by every tenant): "<destinationPath>/<ns>", slashes between the two
// trimmed, e.g. s3://bucket/pg/tenant-acme. With the Cluster's name as
// barman's serverName, no two Clusters of the cluster ever share a barman
// directory (k7-backup-driver.md, "Tenant isolation"): a namespace name
// holds no "/", so one namespace's path is never inside another's.
func TenantPath(destinationPath, ns string) string {
	return strings.TrimRight(destinationPath, "/") + "/" + strings.Trim(ns, "/")
}

// configureCluster projects the credentials and points the Cluster's
// spec.backup.barmanObjectStore at the target, at the namespace's own
// path (TenantPath) under the Cluster's name as serverName (server-side
// apply, the driver's field manager): CNPG reads a Backup's object store from its
// Cluster. The credentials' copy lives as long as the Cluster (it owns the
// copy, whose run label is the Cluster's UID, so every backup of the
// Cluster adopts the same copy and brings a rotated credential in line):
// the Cluster archives WAL with it between backups too.
func (d *Driver) configureCluster(ctx context.Context, run *driver.BackupRun, cluster *cnpgv1.Cluster, store *ObjectStore) error {
	labels := map[string]string{v1alpha1.LabelRun: string(cluster.UID), v1alpha1.LabelDriver: run.Driver}
	secret, err := driver.ProjectSecret(ctx, run.Client, run.Namespace, store.CredentialsSecret, cluster, labels, BackupSecretName(cluster.Name))
	if err != nil {
		return err
	}
	path := TenantPath(store.DestinationPath, cluster.Namespace)
	want := map[string]any{
		"destinationPath": path,
		"serverName":      cluster.Name,
		"s3Credentials": map[string]any{
			"accessKeyId":     map[string]any{"name": secret, "key": KeyAccessKeyID},
			"secretAccessKey": map[string]any{"name": secret, "key": KeySecretAccessKey},
		},
	}
	if store.EndpointURL != "" {
		want["endpointURL"] = store.EndpointURL
	}
	if b := cluster.Spec.Backup; b != nil && b.BarmanObjectStore != nil {
		cur := b.BarmanObjectStore
		if cur.DestinationPath == path && cur.ServerName == cluster.Name && cur.EndpointURL == store.EndpointURL && cur.AWS != nil &&
			cur.AWS.AccessKeyIDReference != nil && cur.AWS.AccessKeyIDReference.Name == secret {
			return nil
		}
	}
	return applyBackupSection(ctx, run, cluster, "barmanObjectStore", want)
}

// configureSnapshots sets the Cluster's spec.backup.volumeSnapshot, which
// CNPG requires of a volumeSnapshot Backup ("no volumeSnapshot section
// defined on the target cluster"), by server-side apply under the
// driver's field manager: with className when the parameters give one,
// else empty, so that CNPG's defaults apply (the cluster's default
// VolumeSnapshotClass). Nothing is written when the section is already as
// wanted.
func configureSnapshots(ctx context.Context, run *driver.BackupRun, cluster *cnpgv1.Cluster, vs *VolumeSnapshot) error {
	class := ""
	if vs != nil {
		class = vs.ClassName
	}
	if b := cluster.Spec.Backup; b != nil && b.VolumeSnapshot != nil && b.VolumeSnapshot.ClassName == class {
		return nil
	}
	want := map[string]any{}
	if class != "" {
		want["className"] = class
	}
	return applyBackupSection(ctx, run, cluster, "volumeSnapshot", want)
}

// applyBackupSection sets the Cluster's spec.backup.<section> to want by
// server-side apply under the driver's field manager (forcing ownership).
// The applied configuration keeps every other field the driver's manager
// owns on the Cluster as it is: the driver sets spec.backup.barmanObjectStore
// for the classes of one method and spec.backup.volumeSnapshot for those of
// the other, and an apply that left one out would remove it (and with
// barmanObjectStore the Cluster's WAL archiving). Within section, what the
// driver applied before and want lacks is removed.
func applyBackupSection(ctx context.Context, run *driver.BackupRun, cluster *cnpgv1.Cluster, section string, want map[string]any) error {
	manager := v1alpha1.DriverFieldManager(run.Driver)
	obj, err := appliedBy(cluster, manager)
	if err != nil {
		return err
	}
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	backup, _ := spec["backup"].(map[string]any)
	if backup == nil {
		backup = map[string]any{}
	}
	backup[section] = want
	spec["backup"] = backup
	obj["spec"] = spec
	obj["apiVersion"], obj["kind"] = cnpgv1.SchemeGroupVersion.String(), "Cluster"
	obj["metadata"] = map[string]any{"name": cluster.Name, "namespace": cluster.Namespace}
	u := &unstructured.Unstructured{Object: obj}
	return run.Client.Patch(ctx, u, client.Apply, client.FieldOwner(manager), client.ForceOwnership)
}

// appliedBy returns the part of obj that the server-side apply of manager
// owns (its managedFields entry of operation Apply on the main resource),
// with the live values: its applied configuration as it stands. Empty when
// manager owns nothing.
func appliedBy(obj client.Object, manager string) (map[string]any, error) {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.Raw, &fields); err != nil {
			return nil, fmt.Errorf("managedFields of %s on %s/%s: %w", manager, obj.GetNamespace(), obj.GetName(), err)
		}
		live, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		out, _ := ownedPart(live, fields).(map[string]any)
		delete(out, "metadata")
		delete(out, "status")
		return out, nil
	}
	return map[string]any{}, nil
}

// ownedPart returns the part of val that fields (a FieldsV1 tree) names:
// a map is walked by its keys "f:<name>" (one that names no child yields
// an empty map); any other value, a scalar or a list, is taken whole.
func ownedPart(val any, fields map[string]any) any {
	m, ok := val.(map[string]any)
	if !ok {
		return val
	}
	out := map[string]any{}
	for k, sub := range fields {
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			continue
		}
		if v, ok := m[name]; ok {
			child, _ := sub.(map[string]any)
			out[name] = ownedPart(v, child)
		}
	}
	return out
}

func dataOf(bk *cnpgv1.Backup, cluster string, p *Parameters) DriverData {
	st := bk.Status
	dd := DriverData{
		BackupName: bk.Name, Namespace: bk.Namespace, ClusterName: cluster, Method: p.Method,
		ServerName: st.ServerName, DestinationPath: st.DestinationPath, EndpointURL: st.EndpointURL, BackupID: st.BackupID,
		BeginWal: st.BeginWal, EndWal: st.EndWal, BeginLSN: st.BeginLSN, EndLSN: st.EndLSN,
		StartedAt: st.StartedAt, StoppedAt: st.StoppedAt,
	}
	if dd.Method == string(cnpgv1.BackupMethodBarmanObjectStore) {
		// CNPG leaves the locator out on some errors; the parameters say
		// where the Cluster was pointed.
		if dd.DestinationPath == "" {
			dd.DestinationPath = TenantPath(p.BarmanObjectStore.DestinationPath, bk.Namespace)
		}
		if dd.EndpointURL == "" {
			dd.EndpointURL = p.BarmanObjectStore.EndpointURL
		}
		if dd.ServerName == "" {
			dd.ServerName = cluster
		}
	}
	return dd
}

// CancelBackup deletes the run's CNPG Backups (CNPG does not abort a
// barman backup already running).
func (d *Driver) CancelBackup(ctx context.Context, run *driver.BackupRun) error {
	return deleteBackups(ctx, run.Client, run.Job.Namespace, run.UID())
}

// Reclaim deletes the CNPG Backups of the run that took run.Backup. The
// object-store data stays (CNPG never deletes it with the object).
func (d *Driver) Reclaim(ctx context.Context, run *driver.ReclaimRun) (driver.Outcome, error) {
	b := run.Backup
	if err := deleteBackups(ctx, run.Client, b.Namespace, types.UID(b.Labels[v1alpha1.LabelRun])); err != nil {
		return driver.Outcome{}, err
	}
	return driver.Outcome{Done: true}, nil
}

func deleteBackups(ctx context.Context, c client.Client, ns string, run types.UID) error {
	if run == "" {
		return nil
	}
	return c.DeleteAllOf(ctx, &cnpgv1.Backup{}, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRun: string(run)})
}
