// Command velero-backup-driver runs the Velero backup driver of the
// virtualization catalog (package backup/velerodriver) standalone: it
// registers the BackupDriver "velero" for the strategy kind Velero and
// runs the BackupJobs and RestoreJobs bound to it (contract k7,
// contracts/schemas/v1alpha1/k7-backup-driver.md), creating Velero
// objects in Velero's namespace.
//
//	velero-backup-driver [--kubeconfig FILE] --namespace NS [--identity ID]
//	    [--velero-namespace velero] [--lease-duration 30s] [--claim-duration 60s]
//	    [--verify-interval 5m]
//
// Exit codes, as the platform's binaries: 0 when it stopped cleanly
// (SIGINT, SIGTERM), 1 on any error ("error: ..." on stderr), 2 on a
// usage error (an unknown flag, a bad value, an argument).
package main
