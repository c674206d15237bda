package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"cozystack.io/catalogs/virtualization/backup/velerodriver"
	"cozystack.io/sdk/backup/driver"
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
	var (
		veleroNamespace string
		verify          time.Duration
	)
	return drivercmd.Spec{
		Use:         "velero-backup-driver",
		Short:       "Run the Velero backup driver (strategy kind Velero) of the virtualization catalog",
		DefaultName: velerodriver.DefaultName,
		Version:     version,
		AddFlags: func(fs *pflag.FlagSet) {
			fs.StringVar(&veleroNamespace, "velero-namespace", velerodriver.DefaultVeleroNamespace, "the namespace Velero runs in")
			fs.DurationVar(&verify, "verify-interval", 5*time.Minute, "how often every Backup's Velero backup is checked (capability Verify)")
		},
		Run: func(ctx context.Context, cfg *rest.Config, f drivercmd.Flags) error {
			return velerodriver.Start(ctx, cfg, velerodriver.Options{
				Driver: driver.Options{Name: f.Name, Namespace: f.Namespace, Identity: f.Identity, LeaseDuration: f.LeaseDuration,
					ClaimDuration: f.ClaimDuration, Catalog: "virtualization", Version: f.Version},
				VeleroNamespace: veleroNamespace,
				VerifyInterval:  verify,
			})
		},
	}
}
