// Package quotatree reads the tenant quota tree of contract K2
// (contracts/schemas/v1alpha1/k2-cluster-values.md, "Tenant quotas"): a
// Tenant's resourceQuotas is the limit of its whole subtree, so a child
// Tenant's limit fits in what its parent has left, and the parent's own
// namespace may use only its limit minus what it gave its children.
//
// Both sides of the rule use it: cozystack-api (package
// registry/application, quotas.go) refuses a child Tenant that does not
// fit, and cozystack-controller (package controller/tenantquota) keeps the
// ResourceQuota SubtreeQuotaName in every tenant namespace.
//
// Where the numbers come from:
//   - a tenant namespace's limits: the resourceQuotas of the Tenant that
//     renders it (its HelmRelease values in the parent namespace), and the
//     hard limits of the ResourceQuota TenantQuotaName the chart renders
//     from them (or an operator wrote, in tenant-root), the smaller of both
//     per resource;
//   - its children's limits: the resourceQuotas of the Tenant HelmReleases
//     in it, whether or not helm-controller has installed them yet;
//   - its own use: status.used of its unscoped ResourceQuotas, which
//     kube-controller-manager's resourcequota controller computes.
//
// Quantities are Kubernetes quantities (k8s.io/apimachinery
// resource.Quantity); resource names are ResourceQuota names (cpu,
// requests.memory, count/pods), compared as written.
package quotatree
