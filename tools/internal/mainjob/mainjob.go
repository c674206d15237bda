package mainjob

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/localcp"
)

// Config is where the job runs.
type Config struct {
	// RepoRoot holds platform/, catalogs/services and
	// catalogs/virtualization: the catalog directories published.
	RepoRoot string
	// Kube is an admin configuration of the cluster.
	Kube *rest.Config
	// Registry is host:port of the OCI registry catalogs are pushed to,
	// over plain HTTP (a loopback registry).
	Registry string
	// Out receives the progress lines.
	Out io.Writer
	// Timeout bounds each wait; 0 means 5 minutes.
	Timeout time.Duration
	// StartProcess starts a long-running process beside the control plane
	// (a catalog's backup driver), which must outlive Run, and returns once
	// healthURL answers 200; an already running one is left as it is.
	StartProcess func(ctx context.Context, name, binary string, args []string, healthURL string) error
	// BinDir holds the backup drivers' binaries, named after their
	// components (cnpg-backup-driver, velero-backup-driver; `make api`).
	BinDir string
	// WorkDir receives the drivers' kubeconfigs (mode 0600).
	WorkDir string
}

// Tenant and applications the job creates as a tenant.
const (
	RootNamespace = "tenant-root"
	TenantName    = "demo"
	TenantNS      = "tenant-demo"
	PostgresName  = "db"
	VMName        = "vm"
)

var (
	tenantsGVR  = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "tenants"}
	postgresGVR = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "postgreses"}
	vmGVR       = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "vminstances"}

	// The upstream objects the application charts render: real API objects
	// of the operators' CRDs, which no operator reconciles here.
	cnpgClusterGVR = schema.GroupVersionResource{Group: "postgresql.cnpg.io", Version: "v1", Resource: "clusters"}
	kubevirtVMGVR  = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	fieldManager   = client.FieldOwner("cozystack-main-job")
)

// Run runs the job. It is idempotent: objects are applied server-side, and
// a second run finds everything in place.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	j := &job{cfg: cfg, tags: map[string]string{}}
	scheme := localcp.Scheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	if err := backupsv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	var err error
	if j.c, err = client.New(cfg.Kube, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if j.dyn, err = dynamic.NewForConfig(cfg.Kube); err != nil {
		return err
	}
	for _, step := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"install the cozystack.io CRDs", j.installCRDs},
		{"publish the catalogs", j.publish},
		{"install the catalogs", j.install},
		{"set the cluster values and the root tenant", j.clusterValues},
		{"wait for the catalogs", j.waitCatalogs},
		{"wait for the application kinds", j.waitKinds},
		{"create a tenant", j.createTenant},
		{"create a Postgres as the tenant", j.createPostgres},
		{"create a VMInstance as the tenant", j.createVM},
		{"start the catalogs' backup drivers as their ServiceAccounts", j.startDrivers},
		{"configure the BackupClasses the catalogs ship", j.configureBackups},
		{"back up and restore as the tenant", j.backupsAndRestores},
		{"check the objects the charts created", j.checkObjects},
	} {
		start := time.Now()
		j.printf("%s", step.name)
		if err := step.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		j.printf("  done in %s", time.Since(start).Round(time.Millisecond))
	}
	j.summary()
	return nil
}

type job struct {
	cfg     Config
	c       client.Client
	dyn     dynamic.Interface
	tags    map[string]string // catalog name -> the tag publish pushed
	rows    []row             // the summary, one row per application
	backups []backupRow       // the summary's backups and restores
}

func (j *job) printf(format string, args ...any) {
	fmt.Fprintf(j.cfg.Out, "main job: "+format+"\n", args...)
}

func (j *job) poll(ctx context.Context, f func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	defer cancel()
	for {
		ok, err := f()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func ptr[T any](v T) *T { return &v }
