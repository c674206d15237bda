package cnpgdriver

import (
	"context"
	"time"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// StrategyKind is the strategy kind the driver serves.
const StrategyKind = "CNPG"

// DefaultName is the BackupDriver name of the CNPG driver.
const DefaultName = "cnpg"

// Catalog is the catalog that ships the driver.
const Catalog = "services"

// ReleasePrefix is the postgres ApplicationDefinition's release prefix: the
// HelmRelease of Postgres "db", and the CNPG Cluster its chart renders, is
// "postgres-db".
const ReleasePrefix = "postgres-"

// Options configure the CNPG driver.
type Options struct {
	// Name of its BackupDriver; default DefaultName.
	Name string
	// Namespace it runs in (its Lease, the source of credential Secrets).
	// Required.
	Namespace string
	// Version of the catalog, shown in the registration.
	Version string
	// Identity, ClaimDuration, LeaseDuration, WrapClient and
	// SkipNameValidation are driver.Options' (defaults there).
	Identity                     string
	ClaimDuration, LeaseDuration time.Duration
	WrapClient                   func(client.Client) client.Client
	SkipNameValidation           bool
}

// DriverOptions returns the driver.Options of the CNPG driver: strategy
// kind CNPG, capabilities Reclaim, RestoreToNew and PointInTime, watching
// CNPG Backups.
func DriverOptions(o Options) driver.Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	return driver.Options{
		Name: o.Name, Namespace: o.Namespace, StrategyKinds: []string{StrategyKind},
		Capabilities: []v1alpha1.Capability{v1alpha1.CapabilityReclaim, v1alpha1.CapabilityRestoreToNew, v1alpha1.CapabilityPointInTime},
		Catalog:      Catalog, Version: o.Version, Identity: o.Identity, ClaimDuration: o.ClaimDuration, LeaseDuration: o.LeaseDuration,
		Watches: []client.Object{&cnpgv1.Backup{}}, WrapClient: o.WrapClient, SkipNameValidation: o.SkipNameValidation,
	}
}

// Scheme returns driver.Scheme() with postgresql.cnpg.io/v1 added.
func Scheme() *runtime.Scheme {
	s := driver.Scheme()
	if err := cnpgv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Start runs one CNPG driver replica standalone on cfg until ctx ends
// (driver.Start). Errors are driver.Start's.
func Start(ctx context.Context, cfg *rest.Config, o Options) error {
	return driver.Start(ctx, cfg, Scheme(), New(), DriverOptions(o))
}
