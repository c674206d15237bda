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

// Reconcile implements reconcile.Reconciler: a deleted Package is
// finalized (finalize.go), any other installed (install.go) and its status
// written (writeStatus).
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
	out, err := r.install(ctx, &p, src)
	if err != nil {
		return ctrl.Result{}, err
	}
	if out.components != nil {
		p.Status.Components = out.components
	}
	if out.result.State == status.StateReady && out.result.Reason == v1alpha1.ReasonInstalled && src != nil {
		if src.Status.Artifact != nil {
			p.Status.InstalledRevision = src.Status.Artifact.Revision
		}
		if src.Status.Catalog != nil {
			p.Status.InstalledVersion = src.Status.Catalog.Version
		}
	}
	if err := r.writeStatus(ctx, patcher, &p, out.result); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: out.after}, nil
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

// writeStatus applies res and patches the status of p if it changed, with
// an event when Ready changes.
func (r *Reconciler) writeStatus(ctx context.Context, patcher *patch.SerialPatcher, p *v1alpha1.Package, res status.Result) error {
	slices.SortFunc(p.Status.Components, func(a, b v1alpha1.PackageComponentStatus) int {
		return strings.Compare(a.Name, b.Name)
	})
	return status.Writer{Recorder: r.Recorder, Action: "Install", FieldOwner: v1alpha1.FieldManagerOperator}.Write(ctx, patcher, p, res)
}
