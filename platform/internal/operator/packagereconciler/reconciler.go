package packagereconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/patch"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/operator/requirements"
	"cozystack.io/platform/internal/status"
)

// Finalizer holds a deleted Package until its HelmReleases are uninstalled
// and its identities removed.
const Finalizer = "cozystack.io/package-cleanup"

// waitInterval is how often a Package waiting on others (uninstalls,
// a missing dependency) is looked at again besides watch events.
const waitInterval = 5 * time.Second

// conflictInterval is how often a Package in Conflict looks again: the
// object in its way is not watched (it is not the operator's).
const conflictInterval = 30 * time.Second

// Reconciler reconciles Packages.
type Reconciler struct {
	// Client reads through the manager's cache (which holds only the
	// objects the operator labelled, see operator.CacheOptions) and writes;
	// APIReader reads past the cache, to find objects others created.
	Client    client.Client
	APIReader client.Reader
	Platform  requirements.Platform
	Recorder  events.EventRecorder
	// DisableWait makes every release install and upgrade without waiting
	// for its workloads (cozystack-operator --disable-wait).
	DisableWait bool
}

// SetupWithManager registers the reconciler. A change of any Package or
// PackageSource re-reconciles every Package (dependencies cross Packages;
// Packages are few); a HelmRelease change re-reconciles its owner.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var list v1alpha1.PackageList
		if err := r.Client.List(ctx, &list); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, len(list.Items))
		for i := range list.Items {
			reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}}
		}
		return reqs
	})
	owner := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if p := controllerPackage(o); p != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: p}}}
		}
		return nil
	})
	// An identity being deleted (with its namespace, or by the garbage
	// collector) waits for its HelmRelease; its owner releases it.
	deleting := builder.WithPredicates(predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("package").
		For(&v1alpha1.Package{}).
		Watches(&v1alpha1.PackageSource{}, all).
		// A published chart ends a wait for it (awaitArtifacts).
		Watches(&sourcev1.ExternalArtifact{}, all).
		Watches(&v1alpha1.Package{}, all).
		Watches(&helmv2.HelmRelease{}, owner).
		Watches(&corev1.ServiceAccount{}, owner, deleting).
		Watches(&rbacv1.Role{}, owner, deleting).
		Watches(&rbacv1.RoleBinding{}, owner, deleting).
		Watches(&rbacv1.ClusterRole{}, owner, deleting).
		Watches(&rbacv1.ClusterRoleBinding{}, owner, deleting).
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicy{}, owner).
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, owner).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var p v1alpha1.Package
	if err := r.Client.Get(ctx, req.NamespacedName, &p); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.sweep(ctx, req.Name, "")
		}
		return ctrl.Result{}, err
	}
	if !p.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, &p)
	}
	if !controllerutil.ContainsFinalizer(&p, Finalizer) {
		base := client.MergeFrom(p.DeepCopy())
		controllerutil.AddFinalizer(&p, Finalizer)
		if err := r.Client.Patch(ctx, &p, base); err != nil {
			return ctrl.Result{}, err
		}
	}
	patcher := patch.NewSerialPatcher(&p, r.Client)

	// The PackageSource is read once: the plan is built from it and the
	// installed revision is the one the plan installed.
	src, err := r.source(ctx, p.Spec.SourceRef.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	res, comps, after, err := r.install(ctx, &p, src)
	if err != nil {
		return ctrl.Result{}, err
	}
	if comps != nil {
		p.Status.Components = comps
	}
	if res.State == status.StateReady && res.Reason == v1alpha1.ReasonInstalled && src != nil {
		if src.Status.Artifact != nil {
			p.Status.InstalledRevision = src.Status.Artifact.Revision
		}
		if src.Status.Catalog != nil {
			p.Status.InstalledVersion = src.Status.Catalog.Version
		}
	}
	if err := r.writeStatus(ctx, patcher, &p, res); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// install runs the checks against src (p's PackageSource, nil when it does
// not exist) and, when they pass, writes the Package's
// objects and prunes the stale ones. It returns the result to report, the
// component statuses (nil to keep the previous ones), and when to look
// again (0: on the next event only).
func (r *Reconciler) install(ctx context.Context, p *v1alpha1.Package, src *v1alpha1.PackageSource) (status.Result, []v1alpha1.PackageComponentStatus, time.Duration, error) {
	v, res := newView(p, src, r.Platform)
	if res != nil {
		return *res, nil, waitIf(res.State == status.StateProgressing), nil
	}
	views, err := r.views(ctx)
	if err != nil {
		return status.Result{}, nil, 0, err
	}
	views[p.Name] = v
	pl, res := newPlan(v, views)
	if res != nil {
		return *res, nil, waitIf(res.State == status.StateProgressing), nil
	}
	if pl.held {
		res, err := r.hold(ctx, pl, namespacesOf(p, nil))
		return res, nil, 0, err
	}
	grant, refusal := privileges(v)
	if refusal != nil {
		// Keep the installed revision: the chart may need what is not
		// granted yet.
		if _, err := r.hold(ctx, pl, namespacesOf(p, nil)); err != nil {
			return status.Result{}, nil, 0, err
		}
		return *refusal, nil, conflictInterval, nil
	}

	ds := make([]*desired, 0, len(pl.components))
	for _, c := range pl.components {
		tenant, err := r.isTenant(ctx, c.Namespace)
		if err != nil {
			return status.Result{}, nil, 0, err
		}
		d := build(pl, c, tenant)
		d.release.Spec.Install.DisableWait = r.DisableWait
		d.release.Spec.Upgrade.DisableWait = r.DisableWait
		ds = append(ds, d)
	}
	// Every namespace, privileged components' included, must be one p may
	// claim (namespaces.go); nothing is written before all are.
	plans, err := r.namespacePlans(ctx, p, v.catalog(), ds, views)
	if err != nil {
		return status.Result{}, nil, 0, err
	}
	if refused := refusals(plans); len(refused) > 0 {
		return namespaceNotAllowed(refused), nil, conflictInterval, nil
	}
	planned := plannedNamespaces(ds)
	all := namespacesOf(p, planned)
	if err := r.unblockAll(ctx, p, all); err != nil {
		return status.Result{}, nil, 0, err
	}
	conflicts, err := r.guard(ctx, p, ds)
	if err != nil {
		return status.Result{}, nil, 0, err
	}
	if len(conflicts) > 0 {
		// What a Package of this name left behind, deleted without its
		// finalizer, goes once its releases are uninstalled.
		if err := r.sweep(ctx, p.Name, p.UID); err != nil {
			return status.Result{}, nil, 0, err
		}
		return status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonConflict, Message: conflictMessage(conflicts)}, nil, conflictInterval, nil
	}
	// After every refusal, before the first write.
	if wait, err := r.awaitArtifacts(ctx, pl); err != nil || wait != nil {
		return deref(wait), nil, waitInterval, err
	}
	// The claims come after every check and before any other write, so a
	// refused Package leaves nothing; a claim lost to a race since the
	// check is refused here.
	refused, err := r.claimNamespaces(ctx, p, v.catalog(), plans, views)
	if err != nil {
		return status.Result{}, nil, 0, err
	}
	if len(refused) > 0 {
		return namespaceNotAllowed(refused), nil, conflictInterval, nil
	}
	// The CRD policy before any HelmRelease (crdpolicy.go).
	if err := r.ensureCRDPolicy(ctx, v, grant.Components); err != nil {
		return status.Result{}, nil, 0, err
	}
	// Remember the namespaces before writing there, so that prune finds
	// the objects even after the component is gone from the plan.
	if err := r.recordNamespaces(ctx, p, planned); err != nil {
		return status.Result{}, nil, 0, err
	}
	want := map[key]bool{}
	for _, d := range ds {
		for _, obj := range d.objects() {
			if err := r.apply(ctx, p, obj); err != nil {
				return status.Result{}, nil, 0, err
			}
			want[r.keyOf(obj)] = true
		}
	}
	leaving, holding, err := r.prune(ctx, p, all, want)
	if err != nil {
		return status.Result{}, nil, 0, err
	}
	p.Status.Namespaces = union(planned, holding)
	p.Status.GrantedPrivileges = grant

	hrs := map[string]*helmv2.HelmRelease{}
	for _, d := range ds {
		var hr helmv2.HelmRelease
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(d.release), &hr); err == nil {
			hrs[hr.Namespace+"/"+hr.Name] = &hr
		}
	}
	res2, comps, _ := summarize(pl, hrs, func(release string) string { return r.releaseOwner(ctx, p, release) })
	if leaving > 0 && res2.State == status.StateReady {
		res2 = status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonInstalling,
			Message: fmt.Sprintf("removing %d objects of components no longer enabled", leaving)}
	}
	return res2, comps, waitIf(leaving > 0), nil
}

// namespaceNotAllowed is the result of namespace refusals.
func namespaceNotAllowed(refused []string) status.Result {
	return status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonNamespaceNotAllowed,
		Message: strings.Join(refused, "; ") + "; nothing was written"}
}

// waitIf returns waitInterval if cond, else 0.
func waitIf(cond bool) time.Duration {
	if cond {
		return waitInterval
	}
	return 0
}

// hold suspends the Package's existing HelmReleases (in namespaces), so
// helm-controller keeps the installed revision, and reports Held.
func (r *Reconciler) hold(ctx context.Context, pl *plan, namespaces []string) (status.Result, error) {
	objs, err := r.owned(ctx, pl.pkg, namespaces)
	if err != nil {
		return status.Result{}, err
	}
	suspended := 0
	for _, o := range objs {
		hr, ok := o.(*helmv2.HelmRelease)
		if !ok {
			continue
		}
		suspended++
		if hr.Spec.Suspend {
			continue
		}
		base := client.MergeFrom(hr.DeepCopy())
		hr.Spec.Suspend = true
		if err := r.Client.Patch(ctx, hr, base); err != nil {
			return status.Result{}, err
		}
	}
	serving := pl.source.Status.Catalog.Version
	if suspended > 0 && pl.pkg.Status.InstalledVersion == pl.pkg.Spec.Version {
		return status.Result{State: status.StateReady, Reason: v1alpha1.ReasonHeld,
			Message: fmt.Sprintf("held at %s by spec.version (the source serves %s): %d HelmReleases suspended; clear spec.version to upgrade", pl.pkg.Spec.Version, serving, suspended)}, nil
	}
	return status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonHeld,
		Message: fmt.Sprintf("spec.version pins %s but PackageSource %s serves %s, and %s is not installed: point the source at %s, or change or clear spec.version",
			pl.pkg.Spec.Version, pl.source.Name, serving, pl.pkg.Spec.Version, pl.pkg.Spec.Version)}, nil
}

// finalize removes a deleted Package's objects, HelmReleases first, and
// then its finalizer.
func (r *Reconciler) finalize(ctx context.Context, p *v1alpha1.Package) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(p, Finalizer) {
		return ctrl.Result{}, nil
	}
	left, holding, err := r.prune(ctx, p, namespacesOf(p, nil), nil)
	if err != nil {
		return ctrl.Result{}, err
	}
	if left > 0 {
		patcher := patch.NewSerialPatcher(p, r.Client)
		p.Status.Namespaces = holding
		res := status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonInstalling,
			Message: fmt.Sprintf("uninstalling: %d objects left (HelmReleases first, then their identities)", left)}
		if err := r.writeStatus(ctx, patcher, p, res); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	// Its releases are gone: so goes its CRD policy.
	if err := r.dropCRDPolicy(ctx, p); err != nil {
		return ctrl.Result{}, err
	}
	base := client.MergeFrom(p.DeepCopy())
	controllerutil.RemoveFinalizer(p, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, p, base))
}

// source returns the PackageSource name, or nil when it does not exist.
func (r *Reconciler) source(ctx context.Context, name string) (*v1alpha1.PackageSource, error) {
	var ps v1alpha1.PackageSource
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &ps); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &ps, nil
}

// views returns the view of every Package whose own checks pass, keyed by
// name: the other side of cross-Package dependencies.
func (r *Reconciler) views(ctx context.Context) (map[string]*view, error) {
	var pkgs v1alpha1.PackageList
	if err := r.Client.List(ctx, &pkgs); err != nil {
		return nil, err
	}
	var srcs v1alpha1.PackageSourceList
	if err := r.Client.List(ctx, &srcs); err != nil {
		return nil, err
	}
	bySource := map[string]*v1alpha1.PackageSource{}
	for i := range srcs.Items {
		bySource[srcs.Items[i].Name] = &srcs.Items[i]
	}
	out := map[string]*view{}
	for i := range pkgs.Items {
		p := &pkgs.Items[i]
		if v, res := newView(p, bySource[p.Spec.SourceRef.Name], r.Platform); res == nil {
			out[p.Name] = v
		}
	}
	return out, nil
}

// releaseOwner describes who owns the HelmRelease named release (in any
// namespace, from the cache): a Package by its controller reference, an
// application, or "no Package". For a message only.
func (r *Reconciler) releaseOwner(ctx context.Context, p *v1alpha1.Package, release string) string {
	var list helmv2.HelmReleaseList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByOperator}); err != nil {
		return "no Package"
	}
	for i := range list.Items {
		if hr := &list.Items[i]; hr.Name == release {
			if controlledBy(hr, p) {
				return fmt.Sprintf("Package %q", p.Name)
			}
			if ref := metav1.GetControllerOfNoCopy(hr); ref != nil && isPackageRef(*ref) {
				return fmt.Sprintf("Package %q", ref.Name)
			}
			if kind, name := application(hr); kind != "" {
				return fmt.Sprintf("application %s %s/%s", kind, hr.Namespace, name)
			}
		}
	}
	return "no Package"
}

// recordNamespaces adds namespaces to p's status.namespaces, writing the
// status at once when one is new.
func (r *Reconciler) recordNamespaces(ctx context.Context, p *v1alpha1.Package, namespaces []string) error {
	all := union(p.Status.Namespaces, namespaces)
	if slices.Equal(all, p.Status.Namespaces) {
		return nil
	}
	orig := p.DeepCopy()
	p.Status.Namespaces = all
	if err := r.Client.Status().Patch(ctx, p, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("record namespaces in status: %w", err)
	}
	return nil
}

// sweep releases the identities left by a Package named name that no
// longer exists (except, the UID of the one that does now, if any): when a
// Package goes without its finalizer, the garbage collector deletes its
// HelmReleases and identities together, and IdentityFinalizer holds each
// identity until no release of its component is left. Its status (the
// namespaces) is gone with it, so this reads the cache cluster-wide; it
// only ever removes IdentityFinalizer from an object already being
// deleted, so a labelled object of someone else's loses nothing.
func (r *Reconciler) sweep(ctx context.Context, name string, except types.UID) error {
	sel := client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByOperator, names.LabelPackage: names.LabelValue(name)}
	byOwner := map[types.UID][]client.Object{}
	for _, l := range append(namespacedLists(), clusterLists()...) {
		if err := r.Client.List(ctx, l, sel); err != nil {
			return err
		}
		items, err := metaItems(l)
		if err != nil {
			return err
		}
		for _, o := range items {
			if ref := metav1.GetControllerOfNoCopy(o); ref != nil && isPackageRef(*ref) && ref.Name == name && ref.UID != except {
				byOwner[ref.UID] = append(byOwner[ref.UID], o)
			}
		}
	}
	for _, objs := range byOwner {
		inv := newInventory(name, objs)
		for _, o := range objs {
			if err := r.unblock(ctx, inv, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeStatus applies res and patches the status of p if it changed, with
// an event when Ready changes.
func (r *Reconciler) writeStatus(ctx context.Context, patcher *patch.SerialPatcher, p *v1alpha1.Package, res status.Result) error {
	slices.SortFunc(p.Status.Components, func(a, b v1alpha1.PackageComponentStatus) int {
		return strings.Compare(a.Name, b.Name)
	})
	return status.Writer{Recorder: r.Recorder, Action: "Install", FieldOwner: v1alpha1.ManagedByOperator}.Write(ctx, patcher, p, res)
}
