// Package controller builds cozystack-controller: one controller-runtime
// manager (package cozystack.io/platform/internal/controllermanager:
// leader election on the Lease cozystack-controller.cozystack.io, metrics
// and health endpoints on loopback by default) running the platform's
// reconcilers: the K2 projection (package clustervalues), the tenant
// roles (package tenantrbac, with the cluster-wide roles of
// platform/tenantaccess applied at start), the tenant quota tree (package
// tenantquota), and the backups of K7 (package
// cozystack.io/platform/internal/backup: the backup core and the built-in
// Job driver, set up by one backup.Setup), each selectable with
// --controllers (Controllers). The reconcilers of this binary alone are
// this package's subdirectories, as cozystack-operator's are
// platform/internal/operator's.
// Of the cluster's Leases the cache holds only backup drivers'
// registrations. Options, NewManager and Run; command cozystack-controller
// is its flags and a call to Run.
package controller
