package packagereconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/status"
)

// installed is what an install reports.
type installed struct {
	// result is the verdict for the Ready condition.
	result status.Result
	// components are the component statuses; nil keeps the previous ones.
	components []v1alpha1.PackageComponentStatus
	// after is when to look again (0: on the next event only).
	after time.Duration
}

// installation is one install of Package p in progress: what each stage
// decides and the next one uses.
type installation struct {
	p     *v1alpha1.Package
	src   *v1alpha1.PackageSource
	v     *view
	views map[string]*view
	pl    *plan
	grant *v1alpha1.GrantedPrivileges
	// ds are the objects of each planned component, and plans the
	// namespaces they go to.
	ds    []*desired
	plans []*nsPlan
	// planned are the namespaces of the planned components; all adds
	// those status.namespaces records (where p wrote before).
	planned, all []string
	// leaving counts the objects of components no longer enabled, still
	// being removed.
	leaving int
}

// A stage is one step of an install. It returns what to report when the
// install stops there (a refusal, a hold or a wait), or nil to go on; an
// error when it cannot decide now (the reconcile is retried).
type stage func(ctx context.Context, in *installation) (*installed, error)

// install runs the checks against src (p's PackageSource, nil when it does
// not exist) and, when they pass, writes the Package's objects and prunes
// the stale ones: the stages below, in order. Nothing is written before
// every check passed (doc.go).
func (r *Reconciler) install(ctx context.Context, p *v1alpha1.Package, src *v1alpha1.PackageSource) (installed, error) {
	in := &installation{p: p, src: src}
	for _, next := range []stage{r.planInstall, r.desire, r.checkOwners, r.write} {
		if out, err := next(ctx, in); err != nil || out != nil {
			if out == nil {
				out = &installed{}
			}
			return *out, err
		}
	}
	return r.health(ctx, in), nil
}

// planInstall is the Package's own checks and its plan across Packages
// (plan.go): a refusal, a hold by spec.version, or privileges not granted
// (privileges.go), each keeping the installed revision.
func (r *Reconciler) planInstall(ctx context.Context, in *installation) (*installed, error) {
	v, res := newView(in.p, in.src, r.Platform)
	if res != nil {
		return &installed{result: *res, after: waitIf(res.State == status.StateProgressing)}, nil
	}
	views, err := r.views(ctx)
	if err != nil {
		return nil, err
	}
	views[in.p.Name] = v
	pl, res := newPlan(v, views)
	if res != nil {
		return &installed{result: *res, after: waitIf(res.State == status.StateProgressing)}, nil
	}
	if pl.held {
		res, err := r.hold(ctx, pl, namespacesOf(in.p, nil))
		return &installed{result: res}, err
	}
	grant, refusal := privileges(v)
	if refusal != nil {
		// Keep the installed revision: the chart may need what is not
		// granted yet.
		if _, err := r.hold(ctx, pl, namespacesOf(in.p, nil)); err != nil {
			return nil, err
		}
		return &installed{result: *refusal, after: conflictInterval}, nil
	}
	in.v, in.views, in.pl, in.grant = v, views, pl, grant
	return nil, nil
}

// desire builds the objects of each planned component and refuses
// (NamespaceNotAllowed) a namespace, privileged components' included, p
// may not claim (namespaces.go).
func (r *Reconciler) desire(ctx context.Context, in *installation) (*installed, error) {
	in.ds = make([]*desired, 0, len(in.pl.components))
	for _, c := range in.pl.components {
		tenant, err := r.isTenant(ctx, c.Namespace)
		if err != nil {
			return nil, err
		}
		d := build(in.pl, c, tenant)
		d.release.Spec.Install.DisableWait = r.DisableWait
		d.release.Spec.Upgrade.DisableWait = r.DisableWait
		in.ds = append(in.ds, d)
	}
	plans, err := r.namespacePlans(ctx, in.p, in.v.catalog(), in.ds, in.views)
	if err != nil {
		return nil, err
	}
	if refused := refusals(plans); len(refused) > 0 {
		return &installed{result: namespaceNotAllowed(refused), after: conflictInterval}, nil
	}
	in.plans = plans
	in.planned = plannedNamespaces(in.ds)
	in.all = namespacesOf(in.p, in.planned)
	return nil, nil
}

// checkOwners refuses (Conflict) an object p would write that exists and
// is not p's (guard), and waits (ChartNotPublished) for a chart its source
// has not published yet: the last checks before the first write.
func (r *Reconciler) checkOwners(ctx context.Context, in *installation) (*installed, error) {
	if err := r.unblockAll(ctx, in.p, in.all); err != nil {
		return nil, err
	}
	conflicts, err := r.guard(ctx, in.p, in.ds)
	if err != nil {
		return nil, err
	}
	if len(conflicts) > 0 {
		// What a Package of this name left behind, deleted without its
		// finalizer, goes once its releases are uninstalled.
		if err := r.sweep(ctx, in.p.Name, in.p.UID); err != nil {
			return nil, err
		}
		return &installed{result: status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonConflict, Message: conflictMessage(conflicts)},
			after: conflictInterval}, nil
	}
	if wait, err := r.awaitArtifacts(ctx, in.pl); err != nil || wait != nil {
		return &installed{result: deref(wait), after: waitInterval}, err
	}
	return nil, nil
}

// write claims the namespaces, writes the CRD policy and the objects, and
// prunes the stale ones.
func (r *Reconciler) write(ctx context.Context, in *installation) (*installed, error) {
	p := in.p
	// The claims come after every check and before any other write, so a
	// refused Package leaves nothing; a claim lost to a race since the
	// check is refused here.
	refused, err := r.claimNamespaces(ctx, p, in.v.catalog(), in.plans, in.views)
	if err != nil {
		return nil, err
	}
	if len(refused) > 0 {
		return &installed{result: namespaceNotAllowed(refused), after: conflictInterval}, nil
	}
	// The CRD policy before any HelmRelease (crdpolicy.go).
	if err := r.ensureCRDPolicy(ctx, in.v, in.grant.Components); err != nil {
		return nil, err
	}
	// Remember the namespaces before writing there, so that prune finds
	// the objects even after the component is gone from the plan.
	if err := r.recordNamespaces(ctx, p, in.planned); err != nil {
		return nil, err
	}
	want := map[key]bool{}
	for _, d := range in.ds {
		for _, obj := range d.objects() {
			if err := r.apply(ctx, p, obj); err != nil {
				return nil, err
			}
			want[r.keyOf(obj)] = true
		}
	}
	leaving, holding, err := r.prune(ctx, p, in.all, want)
	if err != nil {
		return nil, err
	}
	in.leaving = leaving
	p.Status.Namespaces = union(in.planned, holding)
	p.Status.GrantedPrivileges = in.grant
	return nil, nil
}

// health reports the written Package from its HelmReleases (summarize):
// Installing while objects of components no longer enabled are removed.
func (r *Reconciler) health(ctx context.Context, in *installation) installed {
	hrs := map[string]*helmv2.HelmRelease{}
	for _, d := range in.ds {
		var hr helmv2.HelmRelease
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(d.release), &hr); err == nil {
			hrs[hr.Namespace+"/"+hr.Name] = &hr
		}
	}
	res, comps, _ := summarize(in.pl, hrs, func(release string) string { return r.releaseOwner(ctx, in.p, release) })
	if in.leaving > 0 && res.State == status.StateReady {
		res = status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonInstalling,
			Message: fmt.Sprintf("removing %d objects of components no longer enabled", in.leaving)}
	}
	return installed{result: res, components: comps, after: waitIf(in.leaving > 0)}
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
