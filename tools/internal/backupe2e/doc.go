// Package backupe2e holds end-to-end tests of the backup framework
// (contract k7, contracts/schemas/v1alpha1/k7-backup-driver.md) across
// modules, with the real binaries: it has tests only.
//
// TestHandoffToCatalogDriver proves the handoff of a strategy kind from the
// platform to a catalog: at platform release N the built-in Job
// driver backs Postgres up; release N+1 hands the kind CNPG to the
// services catalog (a handoff list naming catalog services 0.2.0). During
// the window a new job waits with DriverBound reason DriverNotInstalled
// naming the catalog and version; the catalog's real CNPG driver
// registers, the job binds to it and succeeds with a Backup; the job bound
// before the upgrade finishes on the Job driver where it started; no job
// ever has two drivers' field managers on its status.
//
// What runs: a local control plane (cozystack.io/sdk/testenv: etcd,
// kube-apiserver, kube-controller-manager; `make build` builds it), and,
// built with `go build` from the workspace at the repository root, the
// platform's cozystack-controller (the backup core and the Job driver, two
// processes) and the services catalog's cnpg-backup-driver, run as the
// ServiceAccount its chart (catalogs/services/charts/cnpg-backup-driver)
// creates, with only the chart's RBAC: a kubeconfig holding a token from
// the TokenRequest API. The module tools imports neither the platform nor
// the catalog (boundaries.yaml); it only builds and runs their commands.
//
// What does not run, and what the test plays instead: no pods run, so the
// test writes a batch Job's completion as the Job controller would; no
// Helm installs the application, so the test creates its HelmRelease (as
// cozystack-api stores it) and the CNPG Cluster the postgres chart renders
// for it; no CNPG operator runs, so the test writes the CNPG Backup's
// status as CNPG does when a barman backup completes.
//
// Under -short nothing starts and the tests skip.
package backupe2e
