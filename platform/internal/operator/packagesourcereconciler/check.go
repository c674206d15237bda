package packagesourcereconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/platform/internal/status"
)

// Step 3: the checks of what the served revision installs, before anything
// of it is published, so that a refused revision publishes nothing (all or
// nothing: docs/operator/catalogs.md, "Catalog delivery", "Refusals leave nothing
// behind"). Each check is one named verdict (checks lists them in order);
// the first that refuses decides.

// candidate is the served revision under check and what the checks learn
// of it, which step 4 and the status use.
type candidate struct {
	ps  *v1alpha1.PackageSource
	rev *artifact.Artifact
	// objs are what rev installs beside its charts (installObjects), and
	// boundErr why they are refused.
	objs     []*unstructured.Unstructured
	boundErr error
	// sizeErr says why rev's declarations do not fit in the status
	// (checkStatusSize), nil when they do.
	sizeErr error
	// inUse are the kinds rev drops that applications still use, removed
	// only with spec.kindRemoval Terminate (checkKindsInUse).
	inUse []adinstaller.KindInUse
	// broken are the kinds whose new schema refuses stored values,
	// installed only with consent (checkValuesCompatible).
	broken []Incompatibility
}

// fits says whether the declarations of the candidate fit in the status.
func (c *candidate) fits() bool { return c.sizeErr == nil }

// consented says whether spec.approvedIncompatibleRevision names the
// candidate's digest.
func (c *candidate) consented() bool {
	return c.ps.Spec.ApprovedIncompatibleRevision == c.rev.Manifest.Digest.String()
}

// A check is one verdict on candidate c. It returns a refusal (a Stalled
// result naming the rule and the fix; nothing of the revision is
// published), or nil when c passes; an error when it cannot judge now (the
// reconcile is retried).
type check func(ctx context.Context, c *candidate) (*status.Result, error)

// checks are step 3, in the order they run.
func (r *Reconciler) checks() []check {
	return []check{
		checkBound,
		checkFitsStatus,
		r.checkUniqueCatalog,
		r.checkGroups,
		r.checkOwners,
		r.checkNotShadowing,
		r.checkKindsInUse,
		r.checkValuesCompatible,
	}
}

// check runs step 3 on rev, the revision ps serves: the candidate, and the
// refusal of the first check that refuses it (nil when every check
// passes).
func (r *Reconciler) check(ctx context.Context, ps *v1alpha1.PackageSource, rev *artifact.Artifact) (*candidate, *status.Result, error) {
	c := &candidate{ps: ps, rev: rev}
	c.objs, c.boundErr = installObjects(rev, ps.Name)
	c.sizeErr = checkStatusSize(rev.Catalog)
	for _, check := range r.checks() {
		if refusal, err := check(ctx, c); err != nil || refusal != nil {
			return c, refusal, err
		}
	}
	return c, nil, nil
}

// refused is the verdict of a check whose step failed with err on
// revision rev: a refusal for what rev declares or claims (a *groupError,
// a *adinstaller.ConflictError, or errBound), else err itself, to retry.
func refused(rev *artifact.Artifact, err error) (*status.Result, error) {
	var (
		groupErr *groupError
		conflict *adinstaller.ConflictError
	)
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &groupErr):
		res := groupErr.result(rev.Revision())
		return &res, nil
	case errors.As(err, &conflict):
		return &status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonConflict,
			Message: fmt.Sprintf("the definitions of %s: %v; none of its charts was published", rev.Revision(), err)}, nil
	case errors.Is(err, errBound):
		return &status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonInvalidArtifact,
			Message: fmt.Sprintf("revision %s: %v; nothing of it was installed and none of its charts was published", rev.Revision(), err)}, nil
	}
	return nil, err
}

// checkBound refuses (InvalidArtifact) definitions not bound to the
// revision's own application charts, or rights its catalog declares
// wrongly (installObjects).
func checkBound(_ context.Context, c *candidate) (*status.Result, error) {
	return refused(c.rev, c.boundErr)
}

// checkFitsStatus refuses (InvalidArtifact) declarations that would not
// fit in the PackageSource's status (checkStatusSize).
func checkFitsStatus(_ context.Context, c *candidate) (*status.Result, error) {
	return refused(c.rev, c.sizeErr)
}

// checkUniqueCatalog refuses (Conflict) a catalog name an older
// PackageSource serves (uniqueCatalog).
func (r *Reconciler) checkUniqueCatalog(ctx context.Context, c *candidate) (*status.Result, error) {
	return refused(c.rev, r.uniqueCatalog(ctx, c.ps, c.rev.Catalog.Name))
}

// checkGroups refuses (Conflict, APIGroupNotGranted) CRD groups another
// catalog holds and rules on groups not granted (apigroups.go).
func (r *Reconciler) checkGroups(ctx context.Context, c *candidate) (*status.Result, error) {
	return refused(c.rev, r.checkAPIGroups(ctx, c.ps, c.rev.Catalog))
}

// checkOwners refuses (Conflict) a kind or policy of another owner
// (adinstaller.Guard: names, policies, overlapping release prefixes).
// adinstaller.Install checks again, as it writes, for an object that
// appeared while the charts were published.
func (r *Reconciler) checkOwners(ctx context.Context, c *candidate) (*status.Result, error) {
	return refused(c.rev, adinstaller.Guard(ctx, r.Client, c.ps.Name, c.objs))
}

// checkNotShadowing refuses (Conflict) a kind whose names shadow a
// resource the cluster serves (shadow.go).
func (r *Reconciler) checkNotShadowing(ctx context.Context, c *candidate) (*status.Result, error) {
	return refused(c.rev, r.checkShadowing(ctx, c.objs))
}

// checkKindsInUse refuses (KindInUse) a revision that drops kinds
// applications still use, unless spec.kindRemoval is Terminate (contract
// K1, "Lifecycle of a kind"): then the kinds are removed and served as
// Terminating until their applications are deleted.
func (r *Reconciler) checkKindsInUse(ctx context.Context, c *candidate) (*status.Result, error) {
	inUse, err := adinstaller.InUse(ctx, r.Client, r.APIReader, c.ps.Name, c.objs)
	if err != nil {
		return refused(c.rev, err)
	}
	c.inUse = inUse
	if len(inUse) == 0 || c.ps.Spec.KindRemoval == v1alpha1.KindRemovalTerminate {
		return nil, nil
	}
	return &status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonKindInUse,
		Message: fmt.Sprintf("revision %s drops %s; nothing of it was installed and the served kinds stay: delete those applications, or set spec.kindRemoval to Terminate to remove the kinds now (no new applications of them; the existing ones are served until deleted)",
			c.rev.Revision(), adinstaller.DescribeInUse(inUse))}, nil
}

// checkValuesCompatible refuses (IncompatibleValues) a revision whose
// schemas no longer accept values existing applications store, unless the
// operator consented to its digest (spec.approvedIncompatibleRevision;
// docs/operator/catalogs.md, "Catalog delivery"; compat.go).
func (r *Reconciler) checkValuesCompatible(ctx context.Context, c *candidate) (*status.Result, error) {
	broken, err := incompatible(ctx, r.Client, r.APIReader, c.ps.Name, c.objs)
	if err != nil {
		return refused(c.rev, err)
	}
	c.broken = broken
	if len(broken) == 0 || c.consented() {
		return nil, nil
	}
	res := incompatibleResult(c.rev, broken)
	return &res, nil
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

// errBound marks what the artifact declares wrongly: refused, never
// retried as a transient error.
var errBound = errors.New("refused")

// uniqueCatalog returns a *adinstaller.ConflictError when a PackageSource
// older than ps (by creation, then name) serves a catalog named catalog:
// catalog names are unique across PackageSources, since Packages' dependsOn
// and the ApplicationDefinitions' release.source name catalogs, and the
// first source keeps its name (docs/operator/catalogs.md, "Catalog delivery", "Refusals leave nothing behind").
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
// leave the source re-pulling with no word of why (docs/operator/catalogs.md, "Catalog delivery", "What a third-party catalog gets").
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
