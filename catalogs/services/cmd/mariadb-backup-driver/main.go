package main

import (
	"context"
	"io"

	"k8s.io/client-go/rest"

	"cozystack.io/catalogs/services/backup/mariadbdriver"
	"cozystack.io/sdk/backup/drivercmd"
)

// version is set at build time (-ldflags -X main.version=...).
var version = "0.1.0"

func main() { drivercmd.Main(spec()) }

// run runs the command with args and returns its exit code.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	return drivercmd.Run(ctx, spec(), args, stderr)
}

func spec() drivercmd.Spec {
	return drivercmd.Spec{
		Use:         "mariadb-backup-driver",
		Short:       "Run the MariaDB backup driver (strategy kind MariaDB of backups.cozystack.io)",
		DefaultName: mariadbdriver.DefaultName,
		Version:     version,
		Run: func(ctx context.Context, cfg *rest.Config, f drivercmd.Flags) error {
			return mariadbdriver.Start(ctx, cfg, mariadbdriver.Options{Name: f.Name, Namespace: f.Namespace, Version: f.Version,
				Identity: f.Identity, ClaimDuration: f.ClaimDuration, LeaseDuration: f.LeaseDuration})
		},
	}
}
