package mariadbdriver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// StrategyKind is the strategy kind the driver serves.
const StrategyKind = "MariaDB"

// DefaultName is the BackupDriver name of the MariaDB driver.
const DefaultName = "mariadb"

// Catalog is the catalog that ships the driver.
const Catalog = "services"

// ReleasePrefix is the mariadb ApplicationDefinition's release prefix: the
// HelmRelease of MariaDB application "db", and the k8s.mariadb.com MariaDB
// its chart renders (named .Release.Name), is "mariadb-db".
const ReleasePrefix = "mariadb-"

// The k8s.mariadb.com/v1alpha1 kinds the driver reads and writes, as
// unstructured objects: the operator's Go API module is not a dependency.
var (
	GroupVersion = schema.GroupVersion{Group: "k8s.mariadb.com", Version: "v1alpha1"}
	BackupGVK    = GroupVersion.WithKind("Backup")
	RestoreGVK   = GroupVersion.WithKind("Restore")
	MariaDBGVK   = GroupVersion.WithKind("MariaDB")
)

// New returns an empty unstructured object of gvk.
func New(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// MariaDBName is the name of the MariaDB object of the application app.
func MariaDBName(app string) string { return ReleasePrefix + app }

// Options configure the MariaDB driver.
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

// DriverOptions returns the driver.Options of the MariaDB driver: strategy
// kind MariaDB, capabilities Reclaim and RestoreToNew, watching
// k8s.mariadb.com Backups and Restores so the operator's status updates
// wake their runs.
func DriverOptions(o Options) driver.Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	return driver.Options{
		Name: o.Name, Namespace: o.Namespace, StrategyKinds: []string{StrategyKind},
		Capabilities: []v1alpha1.Capability{v1alpha1.CapabilityReclaim, v1alpha1.CapabilityRestoreToNew},
		Catalog:      Catalog, Version: o.Version, Identity: o.Identity, ClaimDuration: o.ClaimDuration, LeaseDuration: o.LeaseDuration,
		Watches:    []client.Object{New(BackupGVK), New(RestoreGVK)},
		WrapClient: o.WrapClient, SkipNameValidation: o.SkipNameValidation,
	}
}

// Start runs one MariaDB driver replica standalone on cfg until ctx ends
// (driver.Start with driver.Scheme(): the k8s.mariadb.com kinds are
// unstructured). Errors are driver.Start's.
func Start(ctx context.Context, cfg *rest.Config, o Options) error {
	return driver.Start(ctx, cfg, nil, Driver{}, DriverOptions(o))
}
