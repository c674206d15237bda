// Command cozystack-controller runs the platform's reconcilers under one
// leader-elected controller-runtime manager: the K2 projection of
// ClusterValues into every tenant namespace (package
// cozystack.io/platform/internal/controller/clustervalues; contract
// contracts/schemas/v1alpha1/k2-cluster-values.md) and the tenant roles
// (package cozystack.io/platform/internal/controller/tenantrbac; K5
// "Tenant roles", contracts/schemas/v1alpha1/k5-cozy-lib.md), the tenant
// quota tree (package
// cozystack.io/platform/internal/controller/tenantquota; K2 "Tenant
// quotas"), the backup
// core and the built-in Job backup driver (packages
// cozystack.io/platform/internal/backup and
// cozystack.io/platform/internal/backup/jobdriver; contract
// contracts/schemas/v1alpha1/k7-backup-driver.md). --controllers picks
// some of them. Its options are package
// cozystack.io/platform/internal/controller's.
//
// Its command line is package cozystack.io/platform/internal/command's:
// exit status 0 on a clean stop, 1 on an error, 2 on a usage error
// (docs/operator/install.md, "The platform binaries").
package main
