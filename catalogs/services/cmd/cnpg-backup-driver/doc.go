// Command cnpg-backup-driver runs the CNPG backup driver of the services
// catalog (catalogs/services/backup/cnpgdriver; contract k7,
// contracts/schemas/v1alpha1/k7-backup-driver.md) as one replica until it
// receives SIGINT or SIGTERM.
//
//	cnpg-backup-driver --namespace cozy-cnpg-backup-driver [--kubeconfig FILE]
//	    [--name cnpg] [--identity POD] [--lease-duration 30s] [--claim-duration 60s]
//
// Exit codes: 0 stopped by a signal, 1 an error (the API server refused
// the registration, a controller failed), 2 a usage error (unknown flag,
// missing --namespace, invalid duration or name).
package main
