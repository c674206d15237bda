// Package pkg is the Package reconciler of cozystack-operator (issue 5,
// parts 3 and 4). For each Package it installs one variant of its
// PackageSource's catalog: one HelmRelease per enabled component, in the
// component's namespace, whose chartRef is the ExternalArtifact the
// PackageSource reconciler publishes for that component, ordered by
// dependsOn across components and Packages, with values layered chart
// defaults < catalog < cluster values (K2) < Package (see build), through
// a least-privilege ServiceAccount of its own (package rbac).
//
// Before it writes anything it checks, in this order, and reports the
// first failure as Ready=False with the reason in parentheses: the source
// exists (SourceMissing; what is installed stays) and serves a revision
// (SourceNotReady); the platform meets the catalog's requirements
// (RequirementsNotMet); the variant (VariantMissing) and the named
// components (ComponentMissing) exist; no enabled component depends on a
// disabled one (DependencyNotReady); privileged components are allowed
// (PrivilegeNotAllowed); dependsOn has no cycle across components and
// Packages (DependencyCycle); every catalog the variant depends on is
// installed by some Package (DependencyNotReady); and no object it would
// write belongs to another Package or to nobody (Conflict). So a refused
// Package has nothing half created.
//
// It removes the HelmReleases of components no longer enabled, and, through
// its finalizer, all of a deleted Package's objects: HelmReleases first
// (helm-controller uninstalls them through their ServiceAccount), then the
// identities.
package pkg

import (
	"context"
	"fmt"
	"slices"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/operator/requirements"
	"cozystack.io/platform/internal/operator/status"
)

// Finalizer holds a deleted Package until its HelmReleases are uninstalled
// and its identities removed.
const Finalizer = "cozystack.io/package-cleanup"

// waitInterval is how often a Package waiting on others (uninstalls,
// a missing dependency) is looked at again besides watch events.
const waitInterval = 5 * time.Second

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
		if p := ownedBy(o); p != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: p}}}
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("package").
		For(&v1alpha1.Package{}).
		Watches(&v1alpha1.PackageSource{}, all).
		Watches(&v1alpha1.Package{}, all).
		Watches(&helmv2.HelmRelease{}, owner).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var p v1alpha1.Package
	if err := r.Client.Get(ctx, req.NamespacedName, &p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, &p)
	}
	if !controllerutil.ContainsFinalizer(&p, Finalizer) {
		patch := client.MergeFrom(p.DeepCopy())
		controllerutil.AddFinalizer(&p, Finalizer)
		if err := r.Client.Patch(ctx, &p, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	orig := p.DeepCopy()

	res, comps, requeue, err := r.install(ctx, &p)
	if err != nil {
		return ctrl.Result{}, err
	}
	if comps != nil {
		p.Status.Components = comps
	}
	if res.Kind == status.KindReady && res.Reason == v1alpha1.ReasonInstalled {
		p.Status.InstalledRevision = r.sourceRevision(ctx, &p)
		p.Status.InstalledVersion = r.sourceVersion(ctx, &p)
	}
	if err := r.writeStatus(ctx, orig, &p, res); err != nil {
		return ctrl.Result{}, err
	}
	if requeue {
		return ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	return ctrl.Result{}, nil
}

// install runs the checks and, when they pass, writes the Package's
// objects and prunes the stale ones. It returns the result to report, the
// component statuses (nil to keep the previous ones), and whether to look
// again soon.
func (r *Reconciler) install(ctx context.Context, p *v1alpha1.Package) (status.Result, []v1alpha1.PackageComponentStatus, bool, error) {
	src, err := r.source(ctx, p.Spec.SourceRef.Name)
	if err != nil {
		return status.Result{}, nil, false, err
	}
	v, res := newView(p, src, r.Platform)
	if res != nil {
		return *res, nil, res.Kind == status.KindProgressing, nil
	}
	views, err := r.views(ctx)
	if err != nil {
		return status.Result{}, nil, false, err
	}
	views[p.Name] = v
	pl, res := newPlan(v, views)
	if res != nil {
		return *res, nil, res.Kind == status.KindProgressing, nil
	}
	if pl.held {
		res, err := r.hold(ctx, pl)
		return res, nil, false, err
	}

	ds := make([]*desired, 0, len(pl.components))
	for _, c := range pl.components {
		tenant, err := r.isTenant(ctx, c.Namespace)
		if err != nil {
			return status.Result{}, nil, false, err
		}
		d := build(pl, c, tenant)
		d.release.Spec.Install.DisableWait = r.DisableWait
		d.release.Spec.Upgrade.DisableWait = r.DisableWait
		ds = append(ds, d)
	}
	msg, err := r.guard(ctx, p.Name, ds)
	if err != nil {
		return status.Result{}, nil, false, err
	}
	if msg != "" {
		return status.Result{Kind: status.KindStalled, Reason: v1alpha1.ReasonConflict, Message: msg}, nil, false, nil
	}
	want := map[key]bool{}
	for _, d := range ds {
		if err := r.ensureNamespace(ctx, p.Name, d.component.Namespace); err != nil {
			return status.Result{}, nil, false, err
		}
		for _, obj := range d.objects() {
			if err := r.apply(ctx, p, obj); err != nil {
				return status.Result{}, nil, false, err
			}
			want[r.keyOf(obj)] = true
		}
	}
	leaving, err := r.prune(ctx, p.Name, want)
	if err != nil {
		return status.Result{}, nil, false, err
	}

	hrs := map[string]*helmv2.HelmRelease{}
	for _, d := range ds {
		var hr helmv2.HelmRelease
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(d.release), &hr); err == nil {
			hrs[hr.Namespace+"/"+hr.Name] = &hr
		}
	}
	res2, comps, _ := summarize(pl, hrs, func(release string) string { return r.releaseOwner(ctx, release) })
	if leaving > 0 && res2.Kind == status.KindReady {
		res2 = status.Result{Kind: status.KindProgressing, Reason: v1alpha1.ReasonInstalling,
			Message: fmt.Sprintf("removing %d objects of components no longer enabled", leaving)}
	}
	return res2, comps, leaving > 0, nil
}

// hold suspends the Package's existing HelmReleases, so helm-controller
// keeps the installed revision, and reports Held.
func (r *Reconciler) hold(ctx context.Context, pl *plan) (status.Result, error) {
	objs, err := r.owned(ctx, pl.pkg.Name)
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
		patch := client.MergeFrom(hr.DeepCopy())
		hr.Spec.Suspend = true
		if err := r.Client.Patch(ctx, hr, patch); err != nil {
			return status.Result{}, err
		}
	}
	serving := pl.source.Status.Catalog.Version
	if suspended > 0 && pl.pkg.Status.InstalledVersion == pl.pkg.Spec.Version {
		return status.Result{Kind: status.KindReady, Reason: v1alpha1.ReasonHeld,
			Message: fmt.Sprintf("held at %s by spec.version (the source serves %s): %d HelmReleases suspended; clear spec.version to upgrade", pl.pkg.Spec.Version, serving, suspended)}, nil
	}
	return status.Result{Kind: status.KindStalled, Reason: v1alpha1.ReasonHeld,
		Message: fmt.Sprintf("spec.version pins %s but PackageSource %s serves %s, and %s is not installed: point the source at %s, or change or clear spec.version",
			pl.pkg.Spec.Version, pl.source.Name, serving, pl.pkg.Spec.Version, pl.pkg.Spec.Version)}, nil
}

// finalize removes a deleted Package's objects, HelmReleases first, and
// then its finalizer.
func (r *Reconciler) finalize(ctx context.Context, p *v1alpha1.Package) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(p, Finalizer) {
		return ctrl.Result{}, nil
	}
	left, err := r.prune(ctx, p.Name, nil)
	if err != nil {
		return ctrl.Result{}, err
	}
	if left > 0 {
		orig := p.DeepCopy()
		res := status.Result{Kind: status.KindProgressing, Reason: v1alpha1.ReasonInstalling,
			Message: fmt.Sprintf("uninstalling: %d objects left (HelmReleases first, then their identities)", left)}
		if err := r.writeStatus(ctx, orig, p, res); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	patch := client.MergeFrom(p.DeepCopy())
	controllerutil.RemoveFinalizer(p, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, p, patch))
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

func (r *Reconciler) sourceRevision(ctx context.Context, p *v1alpha1.Package) string {
	if ps, err := r.source(ctx, p.Spec.SourceRef.Name); err == nil && ps != nil && ps.Status.Artifact != nil {
		return ps.Status.Artifact.Revision
	}
	return p.Status.InstalledRevision
}

func (r *Reconciler) sourceVersion(ctx context.Context, p *v1alpha1.Package) string {
	if ps, err := r.source(ctx, p.Spec.SourceRef.Name); err == nil && ps != nil && ps.Status.Catalog != nil {
		return ps.Status.Catalog.Version
	}
	return p.Status.InstalledVersion
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

// releaseOwner returns the Package owning the HelmRelease named release
// (in any namespace), or "".
func (r *Reconciler) releaseOwner(ctx context.Context, release string) string {
	var list helmv2.HelmReleaseList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{names.LabelManagedBy: names.ManagedBy}); err != nil {
		return ""
	}
	for _, hr := range list.Items {
		if hr.Name == release {
			return ownedBy(&hr)
		}
	}
	return ""
}

// writeStatus applies res and patches the status of p if it changed, with
// an event when Ready changes.
func (r *Reconciler) writeStatus(ctx context.Context, orig, p *v1alpha1.Package, res status.Result) error {
	if r.Recorder != nil && status.Changed(p.Status.Conditions, res) {
		typ := corev1.EventTypeWarning
		if res.Kind == status.KindReady {
			typ = corev1.EventTypeNormal
		}
		r.Recorder.Eventf(p, nil, typ, res.Reason, "Install", "%s", res.Message)
	}
	status.Apply(&p.Status.Conditions, p.Generation, res)
	p.Status.ObservedGeneration = p.Generation
	slices.SortFunc(p.Status.Components, func(a, b v1alpha1.PackageComponentStatus) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	if err := r.Client.Status().Patch(ctx, p, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}
