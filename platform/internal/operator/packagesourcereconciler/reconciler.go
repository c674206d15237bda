package packagesourcereconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/events"
	"oras.land/oras-go/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/safetar"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/platform/internal/operator/artifactserver"
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

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
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
	interval := DefaultInterval
	if ps.Spec.Interval != nil && ps.Spec.Interval.Duration > 0 {
		interval = ps.Spec.Interval.Duration
	}

	// 1. The served revision, from the store.
	var served *artifact.Artifact
	var lost error
	if ps.Status.Artifact != nil {
		d, err := digest.Parse(ps.Status.Artifact.Digest)
		if err == nil {
			served, err = r.Store.Load(ctx, d)
		}
		if err != nil {
			lost = fmt.Errorf("the served revision %s is no longer in the operator's store (--storage-dir): %w", ps.Status.Artifact.Digest, err)
			log.Error(lost, "cannot republish the served revision")
		}
	}

	// 2. A newer revision (fetch).
	tries := r.attemptsOf(&ps)
	fresh, result := r.fetch(ctx, &ps, served, tries)
	if fresh != nil {
		if err := r.Store.Serve(ctx, ps.Name, fresh.Manifest); err != nil {
			return ctrl.Result{}, err
		}
		served, lost = fresh, nil
	}

	// 3. Check what the served revision installs, then 4. publish its
	// charts and install its definitions: the kinds appear once their
	// charts are published, and a revision whose definitions are refused
	// publishes nothing (all or nothing: README.md, "Catalog delivery",
	// "Refusals leave nothing behind").
	// fits says whether the served catalog's declarations fit in the
	// status (checkStatusSize), computed once for the check and for the
	// status below.
	fits := true
	if served != nil {
		objs, err := installObjects(served, ps.Name)
		var conflict *adinstaller.ConflictError
		sizeErr := checkStatusSize(served.Catalog)
		fits = sizeErr == nil
		if err == nil {
			err = sizeErr
		}
		if err == nil {
			err = r.uniqueCatalog(ctx, &ps, served.Catalog.Name)
		}
		if err == nil {
			err = r.checkAPIGroups(ctx, &ps, served.Catalog)
		}
		var groupErr *groupError
		if err == nil {
			// Checked before publishing, so a refused revision publishes
			// nothing; Install checks again, as it writes, for an object
			// that appeared while the charts were published.
			err = adinstaller.Guard(ctx, r.Client, ps.Name, objs)
		}
		if err == nil {
			err = r.checkShadowing(ctx, objs)
		}
		// A revision that drops a kind still in use waits, unless told
		// (spec.kindRemoval) to terminate it (contract K1, "Lifecycle of
		// a kind").
		var inUse []adinstaller.KindInUse
		if err == nil {
			inUse, err = adinstaller.InUse(ctx, r.Client, r.APIReader, ps.Name, objs)
		}
		if err == nil && len(inUse) > 0 && ps.Spec.KindRemoval != v1alpha1.KindRemovalTerminate {
			err = errInUse
		}
		// A revision whose schemas no longer accept values existing
		// applications store waits, unless the operator consented to its
		// digest (spec.approvedIncompatibleRevision; README.md, "Catalog
		// delivery").
		var broken []Incompatibility
		if err == nil {
			broken, err = incompatible(ctx, r.Client, r.APIReader, ps.Name, objs)
		}
		consented := ps.Spec.ApprovedIncompatibleRevision == served.Manifest.Digest.String()
		if err == nil && len(broken) > 0 && !consented {
			err = errIncompatible
		}
		switch {
		case errors.Is(err, errIncompatible):
			result = incompatibleResult(served, broken)
		case errors.Is(err, errInUse):
			result = status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonKindInUse,
				Message: fmt.Sprintf("revision %s drops %s; nothing of it was installed and the served kinds stay: delete those applications, or set spec.kindRemoval to Terminate to remove the kinds now (no new applications of them; the existing ones are served until deleted)",
					served.Revision(), adinstaller.DescribeInUse(inUse))}
		case errors.As(err, &groupErr):
			result = groupErr.result(served.Revision())
		case errors.As(err, &conflict):
			result = status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonConflict,
				Message: fmt.Sprintf("the definitions of %s: %v; none of its charts was published", served.Revision(), err)}
		case errors.Is(err, errBound):
			result = status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonInvalidArtifact,
				Message: fmt.Sprintf("revision %s: %v; nothing of it was installed and none of its charts was published", served.Revision(), err)}
		case err != nil:
			return ctrl.Result{}, err
		}
		if err == nil {
			if err := r.publish(ctx, &ps, served); err != nil {
				result = status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonProgressing,
					Message: fmt.Sprintf("publishing the charts of %s: %v", served.Revision(), err)}
				if errors.Is(err, errConflict) {
					result.State, result.Reason = status.StateStalled, v1alpha1.ReasonConflict
				}
			} else if res, err := adinstaller.Install(ctx, r.Client, ps.Name, objs); err != nil {
				result = status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonProgressing,
					Message: fmt.Sprintf("installing the ApplicationDefinitions of %s: %v", served.Revision(), err)}
				if errors.As(err, &conflict) {
					result.State, result.Reason = status.StateStalled, v1alpha1.ReasonConflict
				}
			} else if result.State == status.StateReady {
				if len(res.Applied) > 0 {
					result.Message += fmt.Sprintf("; %d definitions installed (%s)", len(res.Applied), strings.Join(res.Applied, ", "))
				}
				if len(inUse) > 0 {
					result.Message += fmt.Sprintf("; removed with spec.kindRemoval Terminate while in use, served as Terminating until their applications are deleted: %s", adinstaller.DescribeInUse(inUse))
				}
				// Once installed, the served schemas are the new ones and
				// nothing differs: the event of the install names the
				// applications, later messages point at it.
				switch {
				case len(broken) > 0:
					result.Message += fmt.Sprintf("; installed with consent (spec.approvedIncompatibleRevision) although its schemas no longer accept stored values, so these applications fail their next upgrade until their values change: %s", DescribeIncompatible(broken))
				case consented:
					result.Message += "; installed with consent (spec.approvedIncompatibleRevision names this revision): the applications whose stored values its schemas do not accept fail their next upgrade until those values change (the events of this PackageSource name them)"
				}
			}
		}
	}
	// A fetch that succeeded cleared lost, so lost only ever adds to a
	// failure: the served revision cannot be republished either.
	if lost != nil {
		result.Message += "; " + lost.Error()
	}

	// 5. Status.
	if fresh != nil {
		ps.Status.Artifact = artifactStatus(fresh, r.display(&ps), metav1.Now())
	}
	if served != nil {
		info := served.Catalog.CatalogInfo
		ps.Status.Catalog = &info
		ps.Status.Libraries, ps.Status.Variants, ps.Status.Applications = nil, nil, nil
		if fits {
			ps.Status.Libraries = served.Catalog.Libraries
			ps.Status.Variants = served.Catalog.Variants
			ps.Status.Applications = served.Catalog.Applications
		}
	}
	var retry time.Duration
	if result.State == status.StateReady {
		tries.failures = 0
	} else {
		tries.failures++
		retry = backoff(tries.failures, interval)
		result.Message += fmt.Sprintf("; attempt %d failed, the next in %s", tries.failures, retry)
	}
	// A Normal event when the source becomes Ready (a new revision), a
	// Warning when it fails, each only on change.
	if err := (status.Writer{Recorder: r.Recorder, Action: "Pull", FieldOwner: v1alpha1.ManagedByOperator}).Write(ctx, patcher, &ps, result); err != nil {
		return ctrl.Result{}, err
	}

	switch {
	case result.State == status.StateReady && ps.Spec.OCI != nil && ps.Spec.OCI.Digest != "":
		return ctrl.Result{}, nil // a digest never moves
	case result.State == status.StateReady:
		return ctrl.Result{RequeueAfter: interval}, nil
	default:
		return ctrl.Result{RequeueAfter: retry}, nil
	}
}

// backoff is the wait after the n-th failure in a row: firstRetry, doubled
// for each failure after the first, at most interval.
func backoff(n int, interval time.Duration) time.Duration {
	d := firstRetry
	for i := 1; i < n && d < interval; i++ {
		d *= 2
	}
	return min(d, interval)
}

// fetch resolves the source and, when it names a revision other than the
// served one, pulls, verifies and checks it. It returns the new revision
// (stored pending, not yet served) or nil, and the result to report.
//
// A revision refused for what it is (tries.refused) is not pulled again:
// its refusal is reported as it was until the tag moves or the spec
// changes.
func (r *Reconciler) fetch(ctx context.Context, ps *v1alpha1.PackageSource, served *artifact.Artifact, tries *attempts) (*artifact.Artifact, status.Result) {
	keep := keeping(served)
	opener := r.Open
	if opener == nil {
		opener = Open
	}
	o, err := opener(ctx, r.APIReader, ps.Spec)
	if err != nil {
		return nil, status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonPullFailed, Message: err.Error() + keep}
	}
	desc, err := o.Target.Resolve(ctx, o.Reference)
	if err != nil {
		return nil, status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonPullFailed,
			Message: fmt.Sprintf("resolve %s: %v%s", o.Display, err, keep)}
	}
	if served != nil && desc.Digest == served.Manifest.Digest {
		return nil, ready(served, o.Display)
	}
	if tries.refused == desc.Digest {
		return nil, tries.refusal
	}
	refuse := func(res status.Result) (*artifact.Artifact, status.Result) {
		tries.refused = desc.Digest
		tries.refusal = res
		tries.refusal.Message += fmt.Sprintf("; %s is not pulled again until the tag moves or the PackageSource's spec changes", desc.Digest)
		return nil, tries.refusal
	}
	a, err := r.Store.Pull(ctx, ps.Name, o.Target, desc.Digest.String())
	if err != nil {
		res := pullFailure(o.Display, err, keep)
		switch res.Reason {
		case v1alpha1.ReasonInvalidArtifact, v1alpha1.ReasonUnsafeArchive:
			return refuse(res)
		}
		return nil, res
	}
	if err := requirements.Check(a.Catalog.CatalogInfo, r.Platform); err != nil {
		_ = r.Store.Discard(ctx, ps.Name)
		return refuse(status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonRequirementsNotMet,
			Message: fmt.Sprintf("%s (%s): %v%s", o.Display, a.Manifest.Digest, err, keep)})
	}
	return a, ready(a, o.Display)
}

func ready(a *artifact.Artifact, display string) status.Result {
	return status.Result{State: status.StateReady, Reason: v1alpha1.ReasonArtifactReady,
		Message: fmt.Sprintf("serving catalog %s %s (%s) from %s", a.Catalog.Name, a.Catalog.Version, a.Manifest.Digest, display)}
}

// keeping is the message suffix saying what stays served.
func keeping(served *artifact.Artifact) string {
	if served == nil {
		return "; nothing is served yet"
	}
	return fmt.Sprintf("; still serving the last good revision %s", served.Revision())
}

// pullFailure classifies an error of store.Pull.
func pullFailure(display string, err error, keep string) status.Result {
	var (
		dm    *artifact.DigestMismatchError
		sm    *artifact.SizeMismatchError
		entry *safetar.EntryError
		big   *artifact.TooLargeError
	)
	res := status.Result{State: status.StateStalled}
	switch {
	case errors.As(err, &dm):
		res.Reason = v1alpha1.ReasonDigestMismatch
		res.Message = fmt.Sprintf("%s returned other bytes than its digest names (%v): the source is corrupt or tampered with; nothing of it was stored", display, err)
	case errors.As(err, &sm):
		res.Reason = v1alpha1.ReasonDigestMismatch
		res.Message = fmt.Sprintf("%s returned a blob of another size than its descriptor (%v): the source is corrupt or tampered with; nothing of it was stored", display, err)
	case errors.As(err, &entry):
		res.Reason = v1alpha1.ReasonUnsafeArchive
		res.Message = fmt.Sprintf("%s: %v: rebuild the chart archive with cozypkg build; nothing of it was stored", display, err)
	case errors.As(err, &big), errors.Is(err, artifact.ErrInvalidArtifact):
		res.Reason = v1alpha1.ReasonInvalidArtifact
		res.Message = fmt.Sprintf("%s: %v: build the catalog with cozypkg build", display, err)
	default:
		res.State, res.Reason = status.StateProgressing, v1alpha1.ReasonPullFailed
		res.Message = fmt.Sprintf("pull %s: %v", display, err)
	}
	res.Message += keep
	return res
}

func (r *Reconciler) display(ps *v1alpha1.PackageSource) string {
	switch {
	case ps.Spec.OCI != nil && ps.Spec.OCI.Digest != "":
		return ps.Spec.OCI.Repository + "@" + ps.Spec.OCI.Digest
	case ps.Spec.OCI != nil:
		return ps.Spec.OCI.Repository + ":" + ps.Spec.OCI.Tag
	case ps.Spec.Layout != nil:
		return ps.Spec.Layout.Path + ":" + ps.Spec.Layout.Tag
	}
	return ""
}

func artifactStatus(a *artifact.Artifact, reference string, now metav1.Time) *v1alpha1.ArtifactStatus {
	s := &v1alpha1.ArtifactStatus{Reference: reference, Digest: a.Manifest.Digest.String(), Revision: a.Revision(), LastUpdateTime: now}
	for _, c := range a.Charts {
		s.Charts = append(s.Charts, v1alpha1.ChartArtifact{
			Path: c.Path, Name: c.Name, Version: c.Version, Digest: c.Descriptor.Digest.String(), Size: c.Descriptor.Size,
		})
	}
	return s
}

// errConflict marks an ExternalArtifact of our name that another
// PackageSource (or someone else) owns.
var errConflict = errors.New("conflict")

// publish serves a's charts and makes the ExternalArtifacts of ps match:
// one per application name and per component name a Package of ps enables
// (wantedCharts), pointing at its chart; stale ones (those ps controls, by
// UID, in cozy-system) deleted. Publishing is all an application gets
// here: no Package installs it (package pkg reads only status.variants).
func (r *Reconciler) publish(ctx context.Context, ps *v1alpha1.PackageSource, a *artifact.Artifact) error {
	r.Server.Publish(ps.Name, a.Charts)
	demanded, err := r.demanded(ctx, ps.Name, a.Catalog)
	if err != nil {
		return err
	}
	want := map[string]artifact.Chart{}
	for name, path := range wantedCharts(a.Catalog, ps.Name, demanded) {
		c, _ := a.Chart(path) // artifact.Pull guarantees every component's and application's chart
		want[name] = c
	}
	var errs []error
	for name, chart := range want {
		if err := r.ensureArtifact(ctx, ps, name, chart); err != nil {
			errs = append(errs, err)
		}
	}
	var list sourcev1.ExternalArtifactList
	if err := r.Client.List(ctx, &list, client.InNamespace(v1alpha1.SystemNamespace),
		client.MatchingLabels{names.LabelPackageSource: names.LabelValue(ps.Name)}); err != nil {
		return errors.Join(append(errs, err)...)
	}
	for i := range list.Items {
		ea := &list.Items[i]
		if _, ok := want[ea.Name]; ok || !metav1.IsControlledBy(ea, ps) {
			continue
		}
		if err := r.Client.Delete(ctx, ea); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// artifactOwner describes who owns ea, for a Conflict: the controller its
// controller reference names (an ExternalArtifact is a PackageSource's if,
// and only if, that reference carries the source's UID; the label and
// annotation only select and describe), or nothing.
func artifactOwner(ea *sourcev1.ExternalArtifact) string {
	if ref := metav1.GetControllerOfNoCopy(ea); ref != nil {
		return fmt.Sprintf("%s %q (uid %s)", ref.Kind, ref.Name, ref.UID)
	}
	if claimed := ea.Annotations[names.AnnotationPackageSource]; claimed != "" {
		return fmt.Sprintf("nothing: it has no controller reference, and its annotation %s=%q proves nothing", names.AnnotationPackageSource, claimed)
	}
	return "nothing (something else created it)"
}

// ensureArtifact creates or updates one ExternalArtifact and its status.
func (r *Reconciler) ensureArtifact(ctx context.Context, ps *v1alpha1.PackageSource, name string, chart artifact.Chart) error {
	ea := &sourcev1.ExternalArtifact{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1alpha1.SystemNamespace}}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(ea), ea)
	switch {
	case apierrors.IsNotFound(err):
		ea.Labels = map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByOperator, names.LabelPackageSource: names.LabelValue(ps.Name)}
		ea.Annotations = map[string]string{names.AnnotationPackageSource: ps.Name}
		ea.Spec.SourceRef = &meta.NamespacedObjectKindReference{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: "PackageSource", Name: ps.Name,
		}
		if err := controllerutil.SetControllerReference(ps, ea, r.Client.Scheme()); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, ea); err != nil {
			return fmt.Errorf("create ExternalArtifact %s/%s: %w", ea.Namespace, name, err)
		}
	case err != nil:
		return err
	case !metav1.IsControlledBy(ea, ps):
		return fmt.Errorf("%w: ExternalArtifact %s/%s exists and belongs to %s, not to this PackageSource: delete it or rename this PackageSource",
			errConflict, ea.Namespace, name, artifactOwner(ea))
	}

	want := meta.Artifact{
		Path:     ps.Name + "/" + chart.Descriptor.Digest.String() + "/" + artifactserver.FileName(chart),
		URL:      r.Server.URL(ps.Name, chart),
		Revision: chart.Version + "@" + chart.Descriptor.Digest.String(),
		Digest:   chart.Descriptor.Digest.String(),
		Size:     &chart.Descriptor.Size,
	}
	cur := ea.Status.Artifact
	if cur != nil && cur.URL == want.URL && cur.Digest == want.Digest && cur.Revision == want.Revision &&
		apimeta.IsStatusConditionTrue(ea.Status.Conditions, meta.ReadyCondition) {
		return nil
	}
	patcher := patch.NewSerialPatcher(ea, r.Client)
	want.LastUpdateTime = metav1.Now()
	ea.Status.Artifact = &want
	conditions.MarkTrue(ea, meta.ReadyCondition, meta.SucceededReason,
		"chart %s %s (%s) of PackageSource %s", chart.Name, chart.Version, chart.Path, ps.Name)
	if err := patcher.Patch(ctx, ea, patch.WithOwnedConditions{Conditions: []string{meta.ReadyCondition}},
		patch.WithFieldOwner(v1alpha1.ManagedByOperator)); err != nil {
		return fmt.Errorf("write ExternalArtifact %s/%s status: %w", ea.Namespace, name, err)
	}
	return nil
}

// installObjects are what the served revision installs beside its charts:
// its definitions, pointed at PackageSource source and each naming one of
// its own application charts (adinstaller.CheckBound), and the
// ClusterRoles of the rights it declares for its applications
// (adinstaller.Roles). An error refuses them all.
func installObjects(served *artifact.Artifact, source string) ([]*unstructured.Unstructured, error) {
	defs := adinstaller.Rebind(served.DefinitionObjects(), served.Catalog.Name, source)
	var apps []string
	for _, a := range served.Catalog.Applications {
		apps = append(apps, a.Name)
	}
	if err := adinstaller.CheckBound(defs, source, apps); err != nil {
		return nil, fmt.Errorf("%w: %w", errBound, err)
	}
	roles, err := adinstaller.Roles(served.Catalog, source, defs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBound, err)
	}
	return append(defs, roles...), nil
}

// errInUse marks a revision that would drop kinds still in use
// (adinstaller.InUse) while spec.kindRemoval is Wait.
var errInUse = errors.New("kinds in use")

// errIncompatible marks a revision whose schemas no longer accept values
// existing applications store (incompatible), without consent.
var errIncompatible = errors.New("incompatible values")

// errBound marks what the artifact declares wrongly: refused, never
// retried as a transient error.
var errBound = errors.New("refused")

// uniqueCatalog returns a *adinstaller.ConflictError when a PackageSource
// older than ps (by creation, then name) serves a catalog named catalog:
// catalog names are unique across PackageSources, since Packages' dependsOn
// and the ApplicationDefinitions' release.source name catalogs, and the
// first source keeps its name (README.md, "Catalog delivery", "Refusals leave nothing behind").
func (r *Reconciler) uniqueCatalog(ctx context.Context, ps *v1alpha1.PackageSource, catalog string) error {
	var list v1alpha1.PackageSourceList
	if err := r.Client.List(ctx, &list); err != nil {
		return err
	}
	for _, other := range list.Items {
		if other.Name == ps.Name || other.Status.Catalog == nil || other.Status.Catalog.Name != catalog || !older(&other, ps) {
			continue
		}
		return &adinstaller.ConflictError{Objects: []string{fmt.Sprintf(
			"catalog %s (served by PackageSource %s, created first; catalog names are unique: delete one of the two PackageSources)", catalog, other.Name)}}
	}
	return nil
}

// older says whether a was created before b (ties broken by name).
func older(a, b *v1alpha1.PackageSource) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// MaxStatusBytes bounds the JSON of what a PackageSource's status copies
// from its catalog (libraries, variants, applications): etcd refuses an
// object over about 1.5 MiB, and a status that cannot be written would
// leave the source re-pulling with no word of why (README.md, "Catalog delivery", "What a third-party catalog gets").
const MaxStatusBytes = 512 << 10

// checkStatusSize returns an error wrapping errBound when catalog c's
// declarations would not fit in the status, naming the largest part (a
// component, an application or the libraries) and its size.
func checkStatusSize(c *artifact.Catalog) error {
	type part struct {
		name string
		size int
	}
	var parts []part
	total := 0
	add := func(name string, v any) {
		raw, _ := json.Marshal(v)
		parts = append(parts, part{name, len(raw)})
		total += len(raw)
	}
	add("libraries", c.Libraries)
	for i, v := range c.Variants {
		for j, comp := range v.Components {
			add(fmt.Sprintf("variants[%d].components[%d] (%s)", i, j, comp.Name), comp)
		}
	}
	for i, a := range c.Applications {
		add(fmt.Sprintf("applications[%d] (%s)", i, a.Name), a)
	}
	if total <= MaxStatusBytes {
		return nil
	}
	largest := slices.MaxFunc(parts, func(a, b part) int { return a.size - b.size })
	return fmt.Errorf("%w: the catalog's declarations take %d KiB, over the %d KiB a PackageSource's status holds; the largest is %s at %d KiB (its values, most likely): the catalog's author must declare less", errBound,
		total>>10, MaxStatusBytes>>10, largest.name, largest.size>>10)
}
