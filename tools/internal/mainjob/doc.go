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
// objects its chart renders exist, and print a summary table.
//
// Every step prints one line of progress; an error names the step and the
// last state seen. Run runs it; `cozystack-local main-job` is its command,
// and README.md ("Quick start") describes it.
package mainjob
