package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// Options configure one driver replica.
type Options struct {
	// Name of the BackupDriver (a DNS label); its field manager is
	// v1alpha1.DriverFieldManager(Name). Required.
	Name string
	// Namespace the driver runs in: its Lease (LeaseName) and the source of
	// ProjectSecret. Required.
	Namespace string
	// StrategyKinds the driver serves. Required.
	StrategyKinds []string
	// ProtocolVersions the driver speaks; default [v1alpha1.ProtocolVersion].
	ProtocolVersions []string
	// Capabilities the driver offers. Reclaim needs the Driver to implement
	// Reclaimer; RestoreToNew lets it run RestoreJobs of mode
	// NewApplication (without it they fail with CapabilityMissing).
	Capabilities []v1alpha1.Capability
	// Catalog and Version that ship the driver (messages only).
	Catalog, Version string
	// Identity of this replica in claims (e.g. the pod name); default
	// "<hostname>-<random>".
	Identity string
	// LeaseDuration of the registration's Lease, renewed every third of
	// it; whole seconds, default 30s.
	LeaseDuration time.Duration
	// ClaimDuration is a run's claim lease (claim.leaseDurationSeconds),
	// renewed every third of it; a claim older than it is taken over.
	// Whole seconds in [1s, 1h], default 60s.
	ClaimDuration time.Duration
	// PollInterval is the longest time between two calls of a running
	// run's Driver method when nothing changes; default a third of
	// ClaimDuration.
	PollInterval time.Duration
	// Watches are backend kinds whose objects created by Run.CreateOrAdopt
	// wake the run that created them (they carry the driver label and
	// AnnotationJob). The scheme must know them.
	Watches []client.Object
	// MaxConcurrentReconciles per job kind; default 4.
	MaxConcurrentReconciles int
	// WrapClient, when set, wraps the driver's client (every read and
	// write of the SDK and of Run.Client), e.g. to inject failures in
	// tests (sdk/backup/conformance).
	WrapClient func(client.Client) client.Client
	// SkipNameValidation lets several replicas share one process (tests):
	// controller names repeat.
	SkipNameValidation bool
}

func (o *Options) defaults() error {
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("driver name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	if o.Namespace == "" {
		return errors.New("driver namespace is required (Options.Namespace)")
	}
	if len(o.StrategyKinds) == 0 {
		return errors.New("a driver serves at least one strategy kind (Options.StrategyKinds)")
	}
	if len(o.ProtocolVersions) == 0 {
		o.ProtocolVersions = []string{v1alpha1.ProtocolVersion}
	}
	if o.Identity == "" {
		h, _ := os.Hostname()
		o.Identity = h + "-" + rand.String(5)
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 30 * time.Second
	}
	if o.ClaimDuration <= 0 {
		o.ClaimDuration = 60 * time.Second
	}
	if o.LeaseDuration < time.Second || o.ClaimDuration < time.Second || o.ClaimDuration > time.Hour {
		return fmt.Errorf("lease %s and claim %s durations must be whole seconds, the claim's at most 1h", o.LeaseDuration, o.ClaimDuration)
	}
	o.LeaseDuration = o.LeaseDuration.Truncate(time.Second)
	o.ClaimDuration = o.ClaimDuration.Truncate(time.Second)
	if o.PollInterval <= 0 {
		o.PollInterval = renewInterval(o.ClaimDuration)
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 4
	}
	return nil
}

// replica is one driver replica's shared state.
type replica struct {
	opts Options
	drv  Driver
	// client reads live and writes; cache holds only objects labelled
	// backups.cozystack.io/driver=<name> (the driver's jobs, Backups and
	// backend objects).
	client client.Client
	cache  cache.Cache
	// owned are the kinds of Options.Watches (contract k7, "Deletion").
	owned []schema.GroupVersionKind
}

// ownCache is the driver's private cache, started by the manager with the
// other caches (before controllers) on every replica: a caller's manager
// keeps its own cache unfiltered, the driver's holds only its own objects.
type ownCache struct{ cache.Cache }

func (c ownCache) GetCache() cache.Cache { return c.Cache }

// Setup adds one driver replica to mgr: the registration heartbeat and the
// controllers of BackupJobs, RestoreJobs and (with Reclaim) Backups, none
// leader-elected (claims decide which replica runs a job). It adds the
// backups.cozystack.io types to mgr's scheme, which must know core and
// coordination.k8s.io kinds and every kind in o.Watches. The driver's reads
// go through a cache of its own, filtered by the label
// backups.cozystack.io/driver=<Name>, so mgr's cache is left as it is.
// Errors: invalid Options, Reclaim declared by a driver that does not
// implement Reclaimer, or a controller that cannot be built.
func Setup(mgr manager.Manager, drv Driver, o Options) error {
	if err := o.defaults(); err != nil {
		return err
	}
	rec, isReclaimer := drv.(Reclaimer)
	if slices.Contains(o.Capabilities, v1alpha1.CapabilityReclaim) && !isReclaimer {
		return fmt.Errorf("driver %s declares the capability Reclaim but does not implement driver.Reclaimer", o.Name)
	}
	if err := v1alpha1.AddToScheme(mgr.GetScheme()); err != nil {
		return err
	}
	cfg := mgr.GetConfig()
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	if o.WrapClient != nil {
		c = o.WrapClient(c)
	}
	ca, err := cache.New(cfg, cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{v1alpha1.LabelDriver: o.Name}),
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(ownCache{ca}); err != nil {
		return err
	}
	rt := &replica{opts: o, drv: drv, client: c, cache: ca}
	for _, w := range o.Watches {
		gvk, err := apiutil.GVKForObject(w, mgr.GetScheme())
		if err != nil {
			return fmt.Errorf("driver %s: kind of Options.Watches %T: %w", o.Name, w, err)
		}
		rt.owned = append(rt.owned, gvk)
	}
	if err := mgr.Add(registration{rt}); err != nil {
		return err
	}
	opts := controller.Options{
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		NeedLeaderElection:      ptr.To(false),
		SkipNameValidation:      ptr.To(o.SkipNameValidation),
	}
	add := func(name string, obj client.Object, kind string, r reconcile.Reconciler) error {
		b := builder.ControllerManagedBy(mgr).Named("backup-driver-" + o.Name + "-" + name).WithOptions(opts).
			WatchesRawSource(source.Kind(ca, obj, &handler.TypedEnqueueRequestForObject[client.Object]{}))
		for _, w := range o.Watches {
			b = b.WatchesRawSource(source.Kind(ca, w, handler.TypedEnqueueRequestsFromMapFunc(byAnnotation(kind))))
		}
		return b.Complete(r)
	}
	if err := add("backupjob", &v1alpha1.BackupJob{}, "BackupJob", &jobReconciler{rt: rt, ops: backupOps{rt}}); err != nil {
		return err
	}
	if err := add("restorejob", &v1alpha1.RestoreJob{}, "RestoreJob", &jobReconciler{rt: rt, ops: restoreOps{rt}}); err != nil {
		return err
	}
	if isReclaimer && slices.Contains(o.Capabilities, v1alpha1.CapabilityReclaim) {
		if err := add("reclaim", &v1alpha1.Backup{}, "Backup", &reclaimReconciler{rt: rt, drv: rec}); err != nil {
			return err
		}
	}
	return nil
}

// byAnnotation maps a backend object to the run of kind that created it
// (AnnotationJob).
func byAnnotation(kind string) handler.TypedMapFunc[client.Object, reconcile.Request] {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		parts := strings.SplitN(obj.GetAnnotations()[AnnotationJob], "/", 3)
		if len(parts) != 3 || parts[0] != kind {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: parts[1], Name: parts[2]}}}
	}
}

// Scheme returns a scheme knowing the kinds a driver needs: core,
// coordination.k8s.io and backups.cozystack.io.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, coordinationv1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Start runs one driver replica standalone until ctx ends: a manager of its
// own on cfg (no leader election, metrics and health probes off) with
// scheme (nil means Scheme(); add the kinds of o.Watches to it), Setup, and
// Start. Errors are Setup's and the manager's.
func Start(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, drv Driver, o Options) error {
	if scheme == nil {
		scheme = Scheme()
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	if err := Setup(mgr, drv, o); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
