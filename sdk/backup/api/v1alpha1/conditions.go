package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types of the backup kinds, besides the kstatus ones Ready,
// Reconciling and Stalled.
const (
	ConditionReady       = "Ready"
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"
	// ConditionDriverBound is the binder's one condition on a job.
	ConditionDriverBound = "DriverBound"
	// ConditionAuthorized is on a RestoreJob: may it read its Backup.
	ConditionAuthorized = "Authorized"
	// ConditionRetention is on a Plan: can its retention be carried out.
	ConditionRetention = "Retention"
	// ConditionReclaim is on a Backup being deleted: False (reason
	// ReasonReclaimFailed) while its driver cannot delete the data.
	ConditionReclaim = "Reclaim"
	// ConditionAccepted is the platform's one condition on a BackupDriver:
	// may jobs be bound to it (contract k7, "Registration").
	ConditionAccepted = "Accepted"
)

// The closed set of a BackupDriver's Accepted reasons (contract k7,
// "Registration"). A registration not Accepted is never bound to.
const (
	// ReasonAccepted: Accepted=True.
	ReasonAccepted = "Accepted"
	// ReasonWriterUnknown: the registration has no annotation
	// AnnotationRegisteredBy (the platform's admission policy sets it).
	ReasonWriterUnknown = "WriterUnknown"
	// ReasonWriterNotInCatalog: its writer is a ServiceAccount of a
	// namespace no Package's component is installed in.
	ReasonWriterNotInCatalog = "WriterNotInCatalog"
	// ReasonKindNotDeclared: a strategy kind is not in the
	// backupStrategyKinds of the writer's catalog component.
	ReasonKindNotDeclared = "KindNotDeclared"
	// ReasonCatalogMismatch: spec.catalog names another catalog than the
	// one the platform found.
	ReasonCatalogMismatch = "CatalogMismatch"
	// ReasonLeaseNotOwned: spec.lease is not the driver's own Lease (name,
	// label, or namespace of its writer).
	ReasonLeaseNotOwned = "LeaseNotOwned"
	// ReasonReservedForPlatform: the name or a kind belongs to a driver of
	// the platform (the Job driver: name job, kind Job).
	ReasonReservedForPlatform = "ReservedForPlatform"
)

// AcceptedReasons is the closed set of Accepted reasons.
var AcceptedReasons = []string{
	ReasonAccepted, ReasonWriterUnknown, ReasonWriterNotInCatalog, ReasonKindNotDeclared,
	ReasonCatalogMismatch, ReasonLeaseNotOwned, ReasonReservedForPlatform,
}

// AnnotationRegisteredBy on a BackupDriver is the user who created it,
// set on create and kept unchanged by the platform's admission policy
// (platform/backupaccess/policy.yaml), whatever a client writes: the
// platform finds a registration's catalog from it, and only that user
// (or a cluster admin, or the platform) may change or delete it.
const AnnotationRegisteredBy = "backups.cozystack.io/registered-by"

// The closed set of DriverBound reasons (contract k7, "Binding").
const (
	// ReasonBound: DriverBound=True; status.binding names the driver.
	ReasonBound = "Bound"
	// ReasonDriverNotInstalled: the strategy kind was handed to a catalog
	// (the platform's handoff list) that is not installed; the message
	// names the catalog and its minimum version. Phase Pending, retried.
	ReasonDriverNotInstalled = "DriverNotInstalled"
	// ReasonDriverUnavailable: the only registration serving the kind has
	// an expired Lease. Retried.
	ReasonDriverUnavailable = "DriverUnavailable"
	// ReasonDriverConflict: two live registrations serve the kind; the
	// message names both, and no driver runs the job. Retried.
	ReasonDriverConflict = "DriverConflict"
	// ReasonProtocolIncompatible: the registration speaks none of the
	// core's protocol versions; the message lists both. Retried.
	ReasonProtocolIncompatible = "ProtocolIncompatible"
	// ReasonUnknownStrategyKind: no registration serves the kind and the
	// handoff list does not name it: terminal, phase Failed.
	ReasonUnknownStrategyKind = "UnknownStrategyKind"
	// ReasonDriverWaitTimeout: one of the waiting reasons above lasted
	// longer than the class's driverWaitTimeout: terminal, phase Failed.
	ReasonDriverWaitTimeout = "DriverWaitTimeout"
	// ReasonClassNotFound: the BackupClass does not exist, or has no
	// strategy for the application's kind. Retried, bounded by the
	// default driverWaitTimeout.
	ReasonClassNotFound = "ClassNotFound"
	// ReasonApplicationNotFound: the application to back up does not
	// exist. Retried, bounded as ReasonClassNotFound.
	ReasonApplicationNotFound = "ApplicationNotFound"
	// ReasonSnapshotFailed: the core could not store the application's
	// snapshot (contract k7, "Snapshots"): its values are larger than a
	// snapshot holds (the message names the size and the limit), or the
	// stored snapshot of the same digest was changed (the message names
	// both digests). Terminal, phase Failed.
	ReasonSnapshotFailed = "SnapshotFailed"
)

// BinderReasons is the closed set of DriverBound reasons, in the order of
// the contract's table.
var BinderReasons = []string{
	ReasonBound, ReasonDriverNotInstalled, ReasonDriverUnavailable, ReasonDriverConflict,
	ReasonProtocolIncompatible, ReasonUnknownStrategyKind, ReasonDriverWaitTimeout,
	ReasonClassNotFound, ReasonApplicationNotFound, ReasonSnapshotFailed,
}

// Reasons of a job's Ready, Reconciling and Stalled conditions.
const (
	// ReasonSucceeded: Ready=True, phase Succeeded.
	ReasonSucceeded = "Succeeded"
	// ReasonProgressing: Reconciling=True while the driver runs the job.
	ReasonProgressing = "Progressing"
	// ReasonWaitingForDriver: Reconciling=True while the job waits to be
	// bound or claimed.
	ReasonWaitingForDriver = "WaitingForDriver"
	// ReasonBackendFailed: Ready=False, phase Failed; the driver's
	// backend reported a failure, named in the message.
	ReasonBackendFailed = "BackendFailed"
	// ReasonTemplateError: Ready=False, phase Failed; a template in the
	// strategy's parameters did not parse or execute; the message names
	// the field and the error. Nothing was created on the backend.
	ReasonTemplateError = "TemplateError"
	// ReasonInvalidParameters: Ready=False, phase Failed; the strategy's
	// parameters have an unknown or invalid key, named in the message.
	ReasonInvalidParameters = "InvalidParameters"
	// ReasonCancelled: Ready=False, phase Cancelled (spec.cancel).
	ReasonCancelled = "Cancelled"
	// ReasonPendingTimeout: Ready=False, phase Failed; the bound driver
	// did not claim the job within the pending timeout.
	ReasonPendingTimeout = "PendingTimeout"
	// ReasonDeadlineExceeded: Ready=False, phase Failed; the run lasted
	// longer than the run timeout.
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonNoProgress: Stalled=True; the driver reported no progress for
	// the stall timeout. Cleared by the next report.
	ReasonNoProgress = "NoProgress"
	// ReasonDriverLost: Stalled=True; the claim was not renewed within its
	// lease. Only a replica of the bound driver may take it over.
	ReasonDriverLost = "DriverLost"
	// ReasonCapabilityMissing: Ready=False, phase Failed; the job needs a
	// capability (e.g. RestoreToNew) its driver lacks.
	ReasonCapabilityMissing = "CapabilityMissing"
	// ReasonPodSecurityViolation: Ready=False, phase Failed; a pod the
	// driver would create fails Pod Security "restricted", or runs as a
	// ServiceAccount other than the one made for backups; the message
	// names the fields and who must fix the class. Nothing was created.
	ReasonPodSecurityViolation = "PodSecurityViolation"
	// ReasonSecretNotAllowed: Ready=False, phase Failed; the parameters
	// name a Secret the driver may not project (not in the class's own
	// namespace, or not a credential); the message names it, the class's
	// owner and the rule. Nothing was created.
	ReasonSecretNotAllowed = "SecretNotAllowed"
)

// Reasons of a RestoreJob's Authorized condition and restore targets.
const (
	// ReasonGranted: Authorized=True; same namespace, or a BackupGrant
	// allows it.
	ReasonGranted = "Granted"
	// ReasonGrantMissing: Authorized=False; the Backup is in another
	// namespace and no BackupGrant there allows the RestoreJob's
	// namespace; the message names the grant to create. Retried.
	ReasonGrantMissing = "GrantMissing"
	// ReasonBackupNotFound: Authorized=False; the Backup does not exist
	// (or is not readable). Retried.
	ReasonBackupNotFound = "BackupNotFound"
	// ReasonTargetExists: Ready=False, phase Failed; mode NewApplication
	// names an application that already exists.
	ReasonTargetExists = "TargetExists"
	// ReasonTargetForbidden: Ready=False, phase Failed; mode
	// NewApplication would create a kind the namespace's tenant admins may
	// not create (e.g. a Tenant, which needs super-admin): the core, which
	// creates it, never does more than the requester's role allows.
	ReasonTargetForbidden = "TargetForbidden"
	// ReasonTargetInvalid: Ready=False, phase Failed; the application API
	// refused the application built from the Backup's snapshot; the
	// message carries its error.
	ReasonTargetInvalid = "TargetInvalid"
	// ReasonSnapshotMissing: Ready=False, phase Failed; mode
	// NewApplication from a Backup without an application snapshot, or
	// whose snapshot ConfigMap no longer exists.
	ReasonSnapshotMissing = "SnapshotMissing"
	// ReasonSnapshotTampered: Ready=False, phase Failed; the Backup's
	// snapshot ConfigMap does not match the digest of its reference (it
	// was changed after the core wrote it); the message names both
	// digests and nothing is created.
	ReasonSnapshotTampered = "SnapshotTampered"
	// ReasonInPlaceAcrossNamespaces: Ready=False, phase Failed; mode
	// InPlace with a Backup of another namespace (use NewApplication).
	ReasonInPlaceAcrossNamespaces = "InPlaceAcrossNamespaces"
)

// Reasons of a Plan's conditions and lastSkipped.
const (
	// ReasonScheduled: Ready=True; the Plan runs on its schedule.
	ReasonScheduled = "Scheduled"
	// ReasonSuspended: Ready=True with spec.suspend; lastSkipped reason.
	ReasonSuspended = "Suspended"
	// ReasonInvalidSchedule: Ready=False, Stalled=True; the cron
	// expression or time zone does not parse; the message names the
	// field.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonMissedSchedule: lastSkipped reason; the run's starting
	// deadline passed (e.g. the core was down). One record however many
	// runs were missed.
	ReasonMissedSchedule = "MissedSchedule"
	// ReasonConcurrencyForbidden: lastSkipped reason; Forbid and a job
	// was active.
	ReasonConcurrencyForbidden = "ConcurrencyForbidden"
	// ReasonRetentionApplied: Retention=True; every Backup due for
	// deletion was deleted.
	ReasonRetentionApplied = "RetentionApplied"
	// ReasonReclaimUnsupported: Retention=False; Backups due for deletion
	// belong to a driver without the Reclaim capability and are kept; the
	// message names them and the driver.
	ReasonReclaimUnsupported = "ReclaimUnsupported"
	// ReasonReclaimFailed: Backup Reclaim=False; the driver could not
	// delete the backend data; retried.
	ReasonReclaimFailed = "ReclaimFailed"
)

// Labels and finalizers.
const (
	// LabelPlan on a BackupJob and a Backup names the Plan that made it.
	// On a BackupJob a tenant may write it: it proves nothing (LabelPlanUID
	// does).
	LabelPlan = "backups.cozystack.io/plan"
	// LabelPlanUID on a Backup is the UID of the Plan whose job took it,
	// copied by the driver from the job's status.planUID (written by the
	// core): a Plan's retention counts, keeps and deletes only the Backups
	// with its own UID here (contract k7, "Retention").
	LabelPlanUID = "backups.cozystack.io/plan-uid"
	// LabelDriver on a BackupJob, RestoreJob and Backup names the bound
	// driver, so a driver's cache holds only its own jobs; on a driver's
	// registration Lease it names the driver, so the core caches only
	// those Leases (a Lease without it is not seen: DriverUnavailable).
	LabelDriver = "backups.cozystack.io/driver"
	// LabelRun on a backend object names the UID of the job that created
	// it: an AlreadyExists for an object with the same label is adopted.
	LabelRun = "backups.cozystack.io/run"
	// BackupFinalizer is the driver's finalizer on its Backups while it
	// has the Reclaim capability. The core adds none.
	BackupFinalizer = "backups.cozystack.io/reclaim"
	// JobFinalizer is the driver's finalizer on a BackupJob or RestoreJob
	// it claimed: when the job is deleted before it produced a Backup,
	// the driver removes the run's backend objects (Cancel*) before
	// releasing it, so nothing of the run is left in any namespace
	// (contract k7, "Deletion"). The core adds none.
	JobFinalizer = "backups.cozystack.io/backend-cleanup"
)

// CoreFieldManager is the field manager of every status write of the
// platform's backup core (server-side apply).
const CoreFieldManager = "cozystack-backup-core"

// PlanFieldManager is the field manager of the core's write of a
// BackupJob's status.planUID, apart from CoreFieldManager's intent so the
// binder's applies, which do not send it, leave it.
const PlanFieldManager = "cozystack-backup-plan"

// DriverFieldManager is the field manager of every write of the driver
// named driver (server-side apply), e.g. "backup-driver-job".
func DriverFieldManager(driver string) string { return "backup-driver-" + driver }

// GetConditions returns the status conditions of the Plan.
func (in *Plan) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions of the Plan.
func (in *Plan) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetConditions returns the status conditions of the BackupJob.
func (in *BackupJob) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions of the BackupJob.
func (in *BackupJob) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetConditions returns the status conditions of the RestoreJob.
func (in *RestoreJob) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions of the RestoreJob.
func (in *RestoreJob) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetConditions returns the status conditions of the Backup.
func (in *Backup) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions of the Backup.
func (in *Backup) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetConditions returns the status conditions of the BackupDriver.
func (in *BackupDriver) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions of the BackupDriver.
func (in *BackupDriver) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
