package conformance

import (
	"context"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// Setup describes the driver under test and the hooks the suite needs.
type Setup struct {
	// Config is an admin configuration of an API server with the
	// backups.cozystack.io CRDs applied. Required.
	Config *rest.Config
	// Scheme knows core, coordination.k8s.io, backups.cozystack.io and the
	// driver's backend kinds; nil means driver.Scheme().
	Scheme *runtime.Scheme
	// Driver is the BackupDriver name, StrategyKind a kind it serves,
	// Namespace its namespace (created when missing). Required.
	Driver, StrategyKind, Namespace string
	// Start runs one replica of the driver until ctx ends, with r applied
	// to its driver.Options (Replica.Apply). Required.
	Start func(ctx context.Context, r Replica) error
	// Parameters are valid strategy parameters for a backup and a restore.
	Parameters *apiextensionsv1.JSON
	// UnknownParameters are Parameters with one unknown key, whose path is
	// UnknownKey: the job's message must name it. Required.
	UnknownParameters *apiextensionsv1.JSON
	UnknownKey        string
	// Backend lists the driver's backend objects created by the run with
	// UID run (label backups.cozystack.io/run), deleted ones excluded or
	// not. Required.
	Backend func(ctx context.Context, c client.Client, run types.UID) ([]client.Object, error)
	// Complete finishes obj successfully, as its controller (an upstream
	// operator, the Job controller) would; called repeatedly, it must be
	// idempotent. Required.
	Complete func(ctx context.Context, c client.Client, obj client.Object) error
	// Squat returns an object the driver will create for job (same kind,
	// namespace and name), which the suite creates first without the run
	// label. Nil skips the conflict case.
	Squat func(job *v1alpha1.BackupJob) client.Object
	// CheckRestore, when set, checks the backend objects of a restore of
	// mode NewApplication (e.g. that they name restore.Spec.Target).
	CheckRestore func(ctx context.Context, c client.Client, restore *v1alpha1.RestoreJob, objs []client.Object) error
	// ClaimDuration of the replicas; default 6s (whole seconds). The
	// takeover waits up to four of them.
	ClaimDuration time.Duration
	// Timeout bounds each wait; default 90s.
	Timeout time.Duration
}

// Replica is how the suite starts one driver replica.
type Replica struct {
	// Identity of the replica in claims.
	Identity string
	// ClaimDuration and LeaseDuration are short, so a takeover happens
	// within a test.
	ClaimDuration, LeaseDuration time.Duration
	// WrapClient injects failures into the driver's client (may be nil).
	WrapClient func(client.Client) client.Client
}

// Apply sets r's fields in o; several replicas share the test process, so
// it also skips controller name validation.
func (r Replica) Apply(o *driver.Options) {
	o.Identity = r.Identity
	o.ClaimDuration = r.ClaimDuration
	o.LeaseDuration = r.LeaseDuration
	o.WrapClient = r.WrapClient
	o.SkipNameValidation = true
}
