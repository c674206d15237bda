// Package mainjob is the main job of the project, end to end on a running
// cluster where cozystack-api, cozystack-controller and cozystack-operator
// already run (`make demo` starts them on the local control plane): as the
// cluster operator, push cozy-lib and publish the platform's own catalog
// and both service catalogs to the OCI registry and install them
// (PackageSources, whose artifacts carry the ApplicationDefinitions
// cozystack-operator installs, Packages, cluster values, the root tenant
// tenant-root); then, as a tenant, create the Tenant demo, and a Postgres
// and a VMInstance in its namespace, wait until each is Ready, check that
// each installs as its tenant's installer identity and that the upstream
// objects its chart renders exist. Then backups (contract K7,
// contracts/schemas/v1alpha1/k7-backup-driver.md; drivers.go, backup.go,
// restore.go, backends.go): run each catalog's backup driver as a process
// with its Deployment's arguments and its ServiceAccount's token
// (Config.StartProcess), configure the
// BackupClass the services catalog ships, and, as the tenant, back the
// Postgres up through the CNPG driver and the VMInstance through the
// Velero driver (a Plan each; the job writes the CNPG and Velero objects'
// completed status as their operators would, since none runs) and restore
// each as a new application. Last, print a summary: the applications, and
// the backups and restores.
//
// Every step prints one line of progress; an error names the step and the
// last state seen. Run runs it; `cozystack-local main-job` is its command,
// and docs/contributor/architecture.md ("The main job") describes it.
package mainjob
