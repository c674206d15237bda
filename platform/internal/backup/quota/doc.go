// Package quota keeps, in every tenant namespace (one labelled
// namespace.cozystack.io/tenant, v1alpha1.LabelTenant), the ResourceQuota cozy-backup-objects that bounds the backup objects a
// tenant can make (contract k7, "Limits"): object counts
// of Plans, BackupJobs, Backups and RestoreJobs (count/<plural>.<group>
// of backups.cozystack.io), so a tenant with the use role cannot grow
// etcd without bound by creating jobs. kube-apiserver's ResourceQuota
// admission refuses the create beyond the limit (403 Forbidden, "exceeded
// quota: cozy-backup-objects", naming the resource, the used and the
// limited count); it needs the quota's status, computed by
// kube-controller-manager's resourcequota controller.
//
// The quota is written with server-side apply as the field manager
// cozystack-backup-core, labelled app.kubernetes.io/managed-by:
// cozystack-controller, on every change of a tenant namespace and again
// every Options.Resync; the limits come from Options (cozystack-controller
// flags --backup-quota-*, a limit of 0 leaves that count unbounded). A
// namespace that is no longer a tenant keeps it (a cluster operator's to
// remove).
package quota
