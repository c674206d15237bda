package restore

import (
	"context"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// checkDriver decides whether a job of mode restoring Backup b may bind
// to d (nil: not registered), live or not at the time of the check, for a
// core speaking protocols (newest first). It returns the protocol version
// agreed on, or why not: DriverUnavailable and ProtocolIncompatible wait,
// CapabilityMissing (NewApplication without RestoreToNew) fails.
func checkDriver(b *backupsv1alpha1.Backup, mode backupsv1alpha1.RestoreMode, d *backupsv1alpha1.BackupDriver, live bool, protocols []string) (string, outcome) {
	name := b.Spec.DriverRef.Name
	switch {
	case d == nil:
		return "", waiting(backupsv1alpha1.ReasonDriverUnavailable,
			"BackupDriver %s, which took Backup %s/%s and alone can restore it, is not registered: install or start its driver; the restore waits", name, b.Namespace, b.Name)
	case !live:
		return "", waiting(backupsv1alpha1.ReasonDriverUnavailable,
			"BackupDriver %s, which took Backup %s/%s and alone can restore it, does not renew its Lease %s/%s or is not accepted (its condition Accepted): the driver is not running or its registration is refused; the restore waits", name, b.Namespace, b.Name, d.Spec.Lease.Namespace, d.Spec.Lease.Name)
	}
	version := ""
	for _, v := range protocols {
		if slices.Contains(d.Spec.ProtocolVersions, v) {
			version = v
			break
		}
	}
	if version == "" {
		return "", waiting(backupsv1alpha1.ReasonProtocolIncompatible,
			"BackupDriver %s speaks protocol versions [%s], the platform's backup core speaks [%s]: upgrade the driver's catalog or the platform; the restore waits",
			name, strings.Join(d.Spec.ProtocolVersions, ", "), strings.Join(protocols, ", "))
	}
	if mode == backupsv1alpha1.RestoreNewApplication && !d.Has(backupsv1alpha1.CapabilityRestoreToNew) {
		return "", failed(backupsv1alpha1.ReasonCapabilityMissing,
			"BackupDriver %s cannot restore into a new application (it lacks the capability %s): restore Backup %s/%s with target.mode InPlace",
			name, backupsv1alpha1.CapabilityRestoreToNew, b.Namespace, b.Name)
	}
	return version, outcome{}
}

// classOf returns the name of the BackupClass Backup b was taken with
// (className) and the timeouts a restore of it gets: the class's when it
// still exists, the defaults otherwise. Errors are the reader's.
func classOf(ctx context.Context, r client.Reader, b *backupsv1alpha1.Backup) (string, backupsv1alpha1.Timeouts, error) {
	name, err := className(ctx, r, b)
	if err != nil {
		return "", backupsv1alpha1.Timeouts{}, err
	}
	class := &backupsv1alpha1.BackupClass{}
	if name != "" {
		if err := r.Get(ctx, client.ObjectKey{Name: name}, class); apierrors.IsNotFound(err) {
			class = &backupsv1alpha1.BackupClass{}
		} else if err != nil {
			return "", backupsv1alpha1.Timeouts{}, err
		}
	}
	return name, class.Timeouts(), nil
}

// className is the name of the BackupClass Backup b was taken with: its
// spec.backupClassName when set (what its driver recorded from the job's
// binding), else the spec.backupClassName of its BackupJob, else of its
// Plan; "" when neither is set and both are gone. Errors are the reader's.
func className(ctx context.Context, r client.Reader, b *backupsv1alpha1.Backup) (string, error) {
	if b.Spec.BackupClassName != "" {
		return b.Spec.BackupClassName, nil
	}
	job := &backupsv1alpha1.BackupJob{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.BackupJobName}, job)
	if err == nil || !apierrors.IsNotFound(err) {
		return job.Spec.BackupClassName, err
	}
	if b.Spec.PlanName == "" {
		return "", nil
	}
	plan := &backupsv1alpha1.Plan{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.PlanName}, plan); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return plan.Spec.BackupClassName, nil
}

// newBinding is the binding of a restore of b to its driver.
func newBinding(b *backupsv1alpha1.Backup, version, class string, timeouts backupsv1alpha1.Timeouts, now time.Time) *backupsv1alpha1.Binding {
	return &backupsv1alpha1.Binding{
		DriverRef:       backupsv1alpha1.DriverRef{Name: b.Spec.DriverRef.Name, ProtocolVersion: version},
		Strategy:        *b.Spec.Strategy.DeepCopy(),
		BackupClassName: class,
		Timeouts:        timeouts,
		BoundTime:       metav1.NewTime(now),
	}
}

// waitTimedOut turns a wait that began at since into DriverWaitTimeout
// once it has lasted limit at now.
func waitTimedOut(o outcome, since, now time.Time, limit time.Duration) outcome {
	if o.wait == nil || now.Sub(since) < limit {
		return o
	}
	return failed(backupsv1alpha1.ReasonDriverWaitTimeout,
		"waited %s (the driver wait timeout) for the restore's driver: %s; create a new RestoreJob once that is fixed", limit, o.wait.message)
}

// liveReader reads Leases and Namespaces from the API server and
// everything else from the cache: drivers renew Leases every few seconds,
// and an informer on every Lease of the cluster would cost more than the
// few reads at binding time; a Namespace's tenant label decides whether a
// NewApplication target is checked (access.go), a security decision that
// must not rest on a cache, and is read only while such a target is to be
// created.
type liveReader struct {
	cache client.Reader
	api   client.Reader
}

func (r liveReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	switch obj.(type) {
	case *coordinationv1.Lease, *corev1.Namespace, *corev1.ConfigMap:
		// ConfigMaps (application snapshots) are never cached: a cache
		// would hold every ConfigMap of the cluster.
		return r.api.Get(ctx, key, obj, opts...)
	}
	return r.cache.Get(ctx, key, obj, opts...)
}

func (r liveReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.cache.List(ctx, list, opts...)
}
