package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"cozystack.io/platform/backupaccess"
	"cozystack.io/platform/internal/backup"
	"cozystack.io/platform/internal/controller/clustervalues"
	"cozystack.io/platform/internal/controller/tenantquota"
	"cozystack.io/platform/internal/controller/tenantrbac"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/tenantaccess"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// The controllers cozystack-controller can run (--controllers).
const (
	// ControllerClusterValues is the K2 projection (clustervalues).
	ControllerClusterValues = "clustervalues"
	// ControllerTenantRBAC is the tenant roles and installer identities.
	ControllerTenantRBAC = "tenantrbac"
	// ControllerBackupCore is the backup core of contract K7: the Plan
	// scheduler, the binder, the run bounds and the restore reconciler.
	ControllerBackupCore = "backup-core"
	// ControllerBackupJobDriver is the built-in Job backup driver.
	ControllerBackupJobDriver = "backup-job-driver"
	// ControllerTenantQuota is the quota tree of contract K2: the
	// ResourceQuota tenant-subtree of every tenant namespace
	// (tenantquota).
	ControllerTenantQuota = tenantquota.Name
)

// Controllers lists every controller name, in the order they are set up.
var Controllers = []string{ControllerClusterValues, ControllerTenantRBAC, ControllerBackupCore, ControllerBackupJobDriver, ControllerTenantQuota}

// Options are the command-line options of cozystack-controller: those of
// every controller binary (controllermanager.Options), the K2
// projection's, and the backups'.
type Options struct {
	controllermanager.Options
	// Projection configures the K2 clustervalues.
	Projection clustervalues.Options
	// Controllers names the controllers to run (default: all of
	// Controllers). A replica running only the Job driver, say, takes its
	// own --leader-election-id.
	Controllers []string
	// Backup configures the backup core and the built-in Job driver; which
	// of them run is Controllers' (backup-core, backup-job-driver), and
	// the Job driver's Namespace defaults to LeaderElectionNamespace.
	Backup backup.Options
}

// Runs reports whether o runs the controller named name.
func (o *Options) Runs(name string) bool { return slices.Contains(o.Controllers, name) }

// NewOptions returns the defaults: leader election on, endpoints on
// loopback, legacy Secret off; a change of the source is one write per
// tenant namespace, hence the higher rate limits.
func NewOptions() *Options {
	return &Options{
		Options: controllermanager.NewOptions("cozystack-controller.cozystack.io", "127.0.0.1:8080", "127.0.0.1:8081", 200, 400),
		Projection: clustervalues.Options{
			LegacySecret: clustervalues.LegacySecretOff, Concurrency: 8, StatusInterval: 500 * time.Millisecond,
		},
		Controllers: slices.Clone(Controllers),
		Backup:      backup.Defaults(),
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Options.AddFlags(fs)
	fs.Var(legacyFlag{&o.Projection.LegacySecret}, "legacy-secret", "also write the legacy Secret cozystack-values into every tenant namespace: write or off (see contracts/schemas/v1alpha1/k2-migration.md)")
	fs.IntVar(&o.Projection.Concurrency, "concurrency", o.Projection.Concurrency, "tenant namespaces written in parallel")
	fs.DurationVar(&o.Projection.StatusInterval, "status-interval", o.Projection.StatusInterval, "least time between two ClusterValues status writes while a change is being projected")
	fs.Var(controllersFlag{&o.Controllers}, "controllers", "comma-separated controllers to run, of "+strings.Join(Controllers, ", "))
	fs.StringVar(&o.Backup.HandoffFile, "backup-handoff-file", o.Backup.HandoffFile, "a handoff list (YAML, the format of platform/internal/backup/handoff/handoff.yaml) to use instead of the one shipped with this release")
	fs.IntVar(&o.Backup.Concurrency, "backup-concurrency", o.Backup.Concurrency, "Plans, and jobs, each backup core reconciler works on in parallel")
	fs.Int64Var(&o.Backup.Quota.Plans, "backup-quota-plans", o.Backup.Quota.Plans, "most Plans per tenant namespace (ResourceQuota cozy-backup-objects; 0: unbounded)")
	fs.Int64Var(&o.Backup.Quota.BackupJobs, "backup-quota-backupjobs", o.Backup.Quota.BackupJobs, "most BackupJobs per tenant namespace (ResourceQuota cozy-backup-objects; 0: unbounded)")
	fs.Int64Var(&o.Backup.Quota.Backups, "backup-quota-backups", o.Backup.Quota.Backups, "most Backups per tenant namespace (ResourceQuota cozy-backup-objects; 0: unbounded)")
	fs.Int64Var(&o.Backup.Quota.RestoreJobs, "backup-quota-restorejobs", o.Backup.Quota.RestoreJobs, "most RestoreJobs per tenant namespace (ResourceQuota cozy-backup-objects; 0: unbounded)")
	fs.StringVar(&o.Backup.JobDriver.Namespace, "backup-driver-namespace", o.Backup.JobDriver.Namespace, "namespace of the Job driver's Lease (default: --leader-election-namespace)")
	fs.DurationVar(&o.Backup.JobDriver.LeaseDuration, "backup-driver-lease-duration", o.Backup.JobDriver.LeaseDuration, "how long the Job driver's registration Lease holds without renewal (0: the SDK's default)")
	fs.DurationVar(&o.Backup.JobDriver.ClaimDuration, "backup-claim-duration", o.Backup.JobDriver.ClaimDuration, "how long the Job driver's claim on a run holds without renewal (0: the SDK's default)")
	fs.StringVar(&o.Backup.JobDriver.Identity, "backup-driver-identity", o.Backup.JobDriver.Identity, "the Job driver's identity in claims (default: host name and a random suffix)")
}

// controllersFlag is the pflag.Value of --controllers.
type controllersFlag struct{ p *[]string }

func (f controllersFlag) String() string {
	if f.p == nil {
		return ""
	}
	return strings.Join(*f.p, ",")
}

func (f controllersFlag) Set(s string) error {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(Controllers, name) {
			return fmt.Errorf("unknown controller %q: want some of %s", name, strings.Join(Controllers, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("name at least one of %s", strings.Join(Controllers, ", "))
	}
	*f.p = out
	return nil
}

func (f controllersFlag) Type() string { return "names" }

// legacyFlag is the pflag.Value of --legacy-secret.
type legacyFlag struct{ p *clustervalues.LegacySecret }

func (f legacyFlag) String() string {
	if f.p == nil {
		return ""
	}
	return string(*f.p)
}

func (f legacyFlag) Set(s string) error {
	switch v := clustervalues.LegacySecret(s); v {
	case clustervalues.LegacySecretOff, clustervalues.LegacySecretWrite:
		*f.p = v
		return nil
	}
	return fmt.Errorf("want %q or %q", clustervalues.LegacySecretWrite, clustervalues.LegacySecretOff)
}

func (f legacyFlag) Type() string { return "write|off" }

// NewManager builds the manager for cfg with every reconciler set up, and,
// with InstallCRDs, installs the CRDs and the leader election namespace
// first. It does not start it.
func NewManager(ctx context.Context, cfg *rest.Config, o *Options) (manager.Manager, error) {
	if err := o.Prepare(ctx, cfg); err != nil {
		return nil, err
	}
	// The tenant roles and installer identities exist before any tenant
	// namespace is bound to them.
	direct, err := client.New(cfg, client.Options{Scheme: controllermanager.Scheme()})
	if err != nil {
		return nil, err
	}
	if err := tenantaccess.Apply(ctx, direct); err != nil {
		return nil, fmt.Errorf("install the tenant roles: %w", err)
	}
	// Driver registrations record their writer before any driver starts.
	policyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := backupaccess.Apply(policyCtx, direct); err != nil {
		return nil, fmt.Errorf("install the backup driver policies: %w", err)
	}
	caching := clustervalues.CacheOptions()
	for obj, by := range tenantrbac.CacheByObject() {
		caching.ByObject[obj] = by
	}
	// Of the cluster's Leases (one per node, renewed every 10 s) the
	// backup core reads only drivers' registrations.
	driverLeases, err := labels.Parse(backupsv1alpha1.LabelDriver)
	if err != nil {
		return nil, err
	}
	caching.ByObject[&coordinationv1.Lease{}] = cache.ByObject{Label: driverLeases}
	// Ready (package health) once the informers have synced: before that,
	// a status computed from an empty cache would report every namespace
	// as lagging.
	mgr, err := controllermanager.New(cfg, &o.Options, caching)
	if err != nil {
		return nil, err
	}
	if o.Runs(ControllerClusterValues) {
		if err := clustervalues.Setup(mgr, o.Projection); err != nil {
			return nil, fmt.Errorf("set up the K2 projection: %w", err)
		}
	}
	if o.Runs(ControllerTenantRBAC) {
		if err := tenantrbac.Setup(mgr); err != nil {
			return nil, fmt.Errorf("set up the tenant roles: %w", err)
		}
	}
	bo := o.Backup
	bo.RunCore, bo.RunJobDriver = o.Runs(ControllerBackupCore), o.Runs(ControllerBackupJobDriver)
	if bo.JobDriver.Namespace == "" {
		bo.JobDriver.Namespace = o.LeaderElectionNamespace
	}
	bo.JobDriver.SkipNameValidation = o.SkipNameValidation
	if err := backup.Setup(mgr, bo); err != nil {
		return nil, fmt.Errorf("set up %w", err)
	}
	if o.Runs(ControllerTenantQuota) {
		if err := tenantquota.Setup(mgr); err != nil {
			return nil, fmt.Errorf("set up the tenant quota tree: %w", err)
		}
	}
	return mgr, nil
}

// Run builds the manager from o and runs it until ctx ends.
func Run(ctx context.Context, o *Options) error {
	cfg, err := o.RESTConfig()
	if err != nil {
		return err
	}
	mgr, err := NewManager(ctx, cfg, o)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
