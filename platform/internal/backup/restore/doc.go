// Package restore is the backup core's RestoreJob reconciler (contract k7,
// contracts/schemas/v1alpha1/k7-backup-driver.md, sections "Restores",
// "Binding" and "Field managers"): it authorizes a RestoreJob, finds or
// creates its target application, and binds it, once, to the driver that
// took its Backup. The driver then claims and runs it; nothing here runs
// a restore.
//
// # Flow (reconciler.go, one decision per reconcile)
//
//  1. A bound job is left as bound: authorization is not checked again and
//     the job never rebinds; only a lost backups.cozystack.io/driver label
//     is put back. A terminal job is left alone. A job cancelled before it
//     is bound ends Cancelled (reason Cancelled): no driver holds it.
//  2. Mode InPlace with a Backup of another namespace fails at once
//     (reason InPlaceAcrossNamespaces): InPlace restores into the Backup's
//     own application, which lives in the Backup's namespace, and a job
//     only ever writes into its own namespace.
//  3. Authorization (authorize.go), condition Authorized: a Backup of the
//     job's namespace is Granted. A Backup of another namespace is read
//     only when a BackupGrant there Allows the job's namespace and the
//     Backup's name; otherwise GrantMissing, whose message names the grant
//     to create (kind, namespace, spec.from, spec.backupNames). The grants
//     are read first and the Backup only when one allows it, so the answer
//     for a Backup the grants do not cover is GrantMissing whether it
//     exists or not: BackupNotFound would tell a tenant what another
//     namespace holds, which only that namespace's owner may decide (by a
//     grant). A missing or deleting Backup a job may read is BackupNotFound.
//     Both wait; BackupGrants and Backups are watched, so a new grant moves
//     the job at once.
//  4. Target (target.go), status.targetRef: the kind's resource comes from
//     the ApplicationDefinition whose spec.application.kind is the
//     Backup's applicationRef.kind. InPlace: the Backup's application in
//     the job's namespace (gone: DriverBound=False ApplicationNotFound,
//     waiting). NewApplication: target.applicationName in the job's
//     namespace; an existing one is adopted only when it carries
//     LabelRestoreJob with the job's UID, else the job fails with
//     TargetExists. The source application is never read for writing.
//  5. Access (access.go), only when the target is to be created: the core
//     creates it with its own identity, so it first asks kube-apiserver
//     (a SubjectAccessReview, user ReviewUser with the groups
//     v1alpha1.TenantGroup(namespace, "admin") and system:authenticated)
//     whether the job's namespace's tenant admins, the least level that
//     may create a RestoreJob, may create the kind's resource there.
//     Without that a tenant admin could have the core create what only a
//     super-admin may (a Tenant). Refused: the job fails with
//     TargetForbidden, whose message names the kind, the namespace, the
//     level it takes (asked by further reviews of the levels above admin)
//     and the way out: create the application as someone who may, and
//     restore it InPlace. It is asked on every decision until the target
//     exists, so a forbidden kind fails at once, not after the driver
//     wait, and a right taken away meanwhile counts. A namespace without
//     the tenant label (v1alpha1.LabelTenant) is not checked: the tenant
//     roles are bound only in tenant namespaces
//     (platform/internal/controller/tenantrbac), so only cluster
//     administrators (and whom they give rights there themselves) create
//     RestoreJobs in it: there is no tenant boundary to guard, and a
//     review of a tenant group there would refuse every kind.
//     The label is read from the API server, not the cache; no tenant role
//     writes Namespaces (platform/tenantaccess).
//  6. Driver (bind.go): the Backup's spec.driverRef.name, read through
//     platform/internal/backup/drivers.Resolver.Get. Not registered or
//     Lease expired: DriverUnavailable; no protocol version in common:
//     ProtocolIncompatible; both wait, retried every Options.RetryInterval
//     and on BackupDriver events. NewApplication with a driver lacking
//     RestoreToNew fails with CapabilityMissing. Every wait of steps 4-6 is
//     bounded by the driver wait timeout (the class's, else
//     v1alpha1.DefaultDriverWaitTimeout), counted from the
//     lastTransitionTime of DriverBound=False: past it the job fails with
//     DriverWaitTimeout.
//  7. Only then, for NewApplication, the application is created through
//     the application API (apps.cozystack.io, cozystack-api) as the core,
//     from the Backup's application snapshot (spec.applicationSnapshotRef,
//     verified against its digest: SnapshotTampered), labelled LabelRestoreJob
//     (a missing snapshot fails with SnapshotMissing, a refusal by the API
//     with TargetInvalid). So nothing is created for a job that cannot
//     bind, nor of a kind step 5 refused. Its UID is recorded in
//     status.targetUID with the binding.
//  9. A job that ends Failed or Cancelled after that (its driver failed
//     it, or the run bounds did) has the application of status.targetUID
//     deleted (removeTarget, with a UID precondition: never one made
//     under the name meanwhile, never one that existed before the job),
//     so nothing stays behind Ready and empty and a retry into the name
//     binds instead of failing TargetExists.
//  8. Binding: the job is labelled backups.cozystack.io/driver: <name>,
//     then status.binding is written: driverRef {name, protocolVersion},
//     the Backup's strategy, the class name and timeouts (the class is the
//     Backup's spec.backupClassName when set, else the spec.backupClassName
//     of its BackupJob, else of its Plan; when the class is gone its name
//     stays and the timeouts are the defaults of an empty BackupClass;
//     when the Backup names none and both job and Plan are gone the name
//     is empty), boundTime from Options.Clock; DriverBound=True
//     Bound, phase Pending. Ready is not sent from then on: it is the
//     driver's.
//
// # Status (status.go)
//
// Every write is one server-side apply of the status subresource as
// v1alpha1.CoreFieldManager (package cozystack.io/sdk/backup/apply) with
// the core's whole intent: observedGeneration, phase, targetRef, targetUID, binding
// (resent once written) and the conditions Authorized, DriverBound and
// Ready (while waiting, Ready=False carries the reason it waits for; on a
// failure, phase Failed, Ready=False with the failure's reason, and
// completionTime). Conditions carry observedGeneration and keep their
// lastTransitionTime while their status holds. A decision equal to the
// current status is not written.
//
// # Reasons
//
// Every reason written is cozystack.io/sdk/backup/api/v1alpha1's (contract
// k7).
//
// # The restore label (label.go)
//
// LabelRestoreJob is how a retried job finds the application it created.
// Its key is outside the cozystack.io domain because cozystack-api refuses
// every label of that domain on an application, whoever asks, the core
// included (platform/internal/registry/application/metadata.go). So
// whoever may update an application may set it, and that is only in the
// application's namespace: for a tenant namespace, its tenant's users
// (tenant roles are bound only in tenant namespaces, to the groups of the
// tenant and of its ancestors). A RestoreJob adopts only an application
// of its own namespace, so forging the label, with the UID of a job of
// that namespace, reaches no other namespace and gives nothing beyond the
// forger's own rights: the job restores, creating nothing (so step 5 has
// nothing to check: whoever created the application had the right to),
// into an application the forger may already update, data of a Backup the
// job was authorized to read anyway (same namespace, or a grant). A kind
// only a super-admin may update (a Tenant) cannot be labelled by an admin.
//
// # Reading and rights
//
// Everything is read from the manager's cache except Leases (from the API
// server, at binding time only: an informer on every Lease of the cluster
// would cost more), Namespaces (from the API server, step 5) and
// applications (through the application API, whose client is
// Options.Apps). The core's identity needs, besides reading the cached
// kinds and writing RestoreJobs and their status: get on Leases and
// Namespaces; get and create on the application resources; create on
// subjectaccessreviews (authorization.k8s.io).
package restore
