package packagesourcereconciler

import (
	"context"
	"sync"
	"time"

	"github.com/fluxcd/pkg/runtime/patch"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/events"
	"oras.land/oras-go/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/operator/requirements"
	"cozystack.io/platform/internal/status"
)

// DefaultInterval is how often a tag is resolved again when
// spec.interval is unset (PackageSourceSpec.Interval).
const DefaultInterval = 10 * time.Minute

// Retries of a failed reconcile back off exponentially: firstRetry after
// the first failure, doubling with each further one, never longer than the
// source's interval. The wait is in the Ready condition's message.
const firstRetry = 10 * time.Second

// attempts is what the reconciler remembers of one PackageSource between
// reconciles (in memory: a restart forgets it, and pulls once more).
type attempts struct {
	generation int64
	// failures counts the reconciles that ended not Ready since the last
	// Ready one (or spec change).
	failures int
	// refused is a manifest digest refused for what it is (invalid,
	// unsafe, or not for this platform), and refusal the result it got:
	// that revision is not pulled again until the tag moves or the spec
	// changes.
	refused digest.Digest
	refusal status.Result
}

// Reconciler reconciles PackageSources.
type Reconciler struct {
	// Client reads and writes PackageSources and ExternalArtifacts (through
	// the manager's cache); APIReader reads pull Secrets directly.
	Client    client.Client
	APIReader client.Reader
	// Store pulls, verifies and keeps revisions (package store); Server
	// serves their charts to helm-controller (package artifactserver).
	Store  ArtifactStore
	Server ChartServer
	// Open opens a spec's origin; nil means Open.
	Open     Opener
	Platform requirements.Platform
	Recorder events.EventRecorder
	// Discovery lists the resources the cluster serves, whose names a
	// catalog's kinds may not shadow (shadow.go); nil skips that check.
	Discovery discovery.DiscoveryInterface

	mu       sync.Mutex
	attempts map[string]*attempts
}

// ArtifactStore is where revisions are pulled to, verified and kept
// (steps 1 and 2): package store's Store.
type ArtifactStore interface {
	// Pull copies reference from src, verifying every digest, size, the
	// format and every chart archive, and keeps it pending for source.
	Pull(ctx context.Context, source string, src oras.ReadOnlyTarget, reference string) (*artifact.Artifact, error)
	// Load returns a kept revision, verified.
	Load(ctx context.Context, d digest.Digest) (*artifact.Artifact, error)
	// Serve makes manifest the revision source serves; Discard drops its
	// pending one; Forget drops all of source's.
	Serve(ctx context.Context, source string, manifest ocispec.Descriptor) error
	Discard(ctx context.Context, source string) error
	Forget(ctx context.Context, source string) error
}

// ChartServer serves the charts of each source's revision to
// helm-controller (step 4): package artifactserver's Server.
type ChartServer interface {
	Publish(source string, charts []artifact.Chart)
	Withdraw(source string)
	// URL is where helm-controller downloads chart of source.
	URL(source string, chart artifact.Chart) string
}

// attemptsOf returns what is remembered of ps, reset when its spec changed.
func (r *Reconciler) attemptsOf(ps *v1alpha1.PackageSource) *attempts {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.attempts == nil {
		r.attempts = map[string]*attempts{}
	}
	a := r.attempts[ps.Name]
	if a == nil || a.generation != ps.Generation {
		a = &attempts{generation: ps.Generation}
		r.attempts[ps.Name] = a
	}
	return a
}

func (r *Reconciler) forget(source string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.attempts, source)
}

// SetupWithManager registers the reconciler: it watches PackageSources
// (spec changes) and the ExternalArtifacts they own (to restore a status
// or object someone changed).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	// The definitions carry no owner reference (deleting a source keeps
	// its kinds): their annotation names the source to reconcile when one
	// is edited or deleted by hand.
	toSource := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		if name := obj.GetAnnotations()[names.AnnotationPackageSource]; name != "" {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
		}
		return nil
	})
	// Spec edits and deletions only: cozystack-api writes each AD's
	// status, which is no reason to reconcile the source.
	installed := builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetLabels()[v1alpha1.LabelManagedBy] == v1alpha1.ManagedByOperator && obj.GetAnnotations()[names.AnnotationPackageSource] != ""
	}), predicate.GenerationChangedPredicate{})
	return ctrl.NewControllerManagedBy(mgr).
		Named("packagesource").
		For(&v1alpha1.PackageSource{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&sourcev1.ExternalArtifact{}).
		Watches(&v1alpha1.ApplicationDefinition{}, toSource, installed).
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicy{}, toSource, installed).
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, toSource, installed).
		// A role deleted by hand is restored; at start every role's source
		// is reconciled, so a source deleted while the operator was down
		// still takes its grants with it (gone).
		Watches(&rbacv1.ClusterRole{}, toSource, installed).
		// What Packages enable is what is published (demand.go).
		Watches(&v1alpha1.Package{}, handler.EnqueueRequestsFromMapFunc(packageSource), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler: the five steps of doc.go, one
// file each (served.go, fetch.go, check.go, publish.go, summarize.go).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ps v1alpha1.PackageSource
	if err := r.Client.Get(ctx, req.NamespacedName, &ps); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.gone(ctx, req.Name)
		}
		return ctrl.Result{}, err
	}
	if !ps.DeletionTimestamp.IsZero() {
		r.Server.Withdraw(ps.Name)
		return ctrl.Result{}, nil
	}
	patcher := patch.NewSerialPatcher(&ps, r.Client)
	tries := r.attemptsOf(&ps)

	// 1. The served revision.
	o := outcome{fits: true}
	o.served, o.lost = r.servedRevision(ctx, &ps)
	// 2. A newer revision, served from now on.
	o.fresh, o.result = r.fetch(ctx, &ps, o.served, tries)
	if o.fresh != nil {
		if err := r.Store.Serve(ctx, ps.Name, o.fresh.Manifest); err != nil {
			return ctrl.Result{}, err
		}
		o.served, o.lost = o.fresh, nil
	}
	if o.served != nil {
		// 3. The checks of what it installs; 4. publish, then install.
		c, refusal, err := r.check(ctx, &ps, o.served)
		if err != nil {
			return ctrl.Result{}, err
		}
		o.fits = c.fits()
		if refusal != nil {
			o.result = *refusal
		} else {
			o.result = r.publishAndInstall(ctx, c, o.result)
		}
	}
	// 5. Status.
	return r.summarize(ctx, patcher, &ps, tries, o)
}
