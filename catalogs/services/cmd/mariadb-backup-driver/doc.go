// Command mariadb-backup-driver runs the MariaDB backup driver of the
// services catalog (catalogs/services/backup/mariadbdriver; contract k7,
// contracts/schemas/v1alpha1/k7-backup-driver.md) as one replica until it
// receives SIGINT or SIGTERM. Its chart is charts/mariadb-backup-driver.
//
//	mariadb-backup-driver --namespace cozy-mariadb-backup-driver [--kubeconfig FILE]
//	    [--name mariadb] [--identity POD] [--lease-duration 30s] [--claim-duration 60s]
//
// Exit codes: 0 stopped by a signal, 1 an error (no configuration, the API
// server refused the registration, a controller failed), 2 a usage error
// (unknown flag, an argument, missing --namespace, invalid duration or
// name).
package main
