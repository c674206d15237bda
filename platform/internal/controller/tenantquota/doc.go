// Package tenantquota keeps, in every tenant namespace N, the ResourceQuota
// tenant-subtree (quotatree.SubtreeQuotaName) of contract K2
// (contracts/schemas/v1alpha1/k2-cluster-values.md, "Tenant quotas"):
//
//	hard[r] = N's limit of r - the sum of r over N's child Tenants' limits
//
// for every resource r N is limited in (quotatree.Limits: its Tenant's
// resourceQuotas and its ResourceQuota tenant-quota). All ResourceQuotas of
// a namespace apply together, so N's own use plus what it gave its
// children never exceeds its limit, and, as each child is held to its own
// limit the same way, a Tenant's resourceQuotas bind its whole subtree:
// count/pods of a parent included.
//
// The quota is written with server-side apply (field manager
// FieldManager), labelled app.kubernetes.io/managed-by=cozystack-controller,
// and deleted when N is no longer limited. When N's children already hold
// more than its limit (Tenants made before the rule, or a limit lowered by
// hand), hard[r] is 0 and a Warning event (reason ChildrenExceedLimit) on
// the quota names them; cozystack-api refuses such changes otherwise.
// A namespace is reconciled again when it, its Tenant, a child Tenant's
// HelmRelease or one of the two quotas changes.
package tenantquota
