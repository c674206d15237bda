package packagesourcereconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/platform/internal/operator/artifactserver"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/status"
)

// Step 4: publish, then install. The kinds appear once their charts are
// published; a revision refused by step 3 got here with nothing.

// publishAndInstall publishes the charts of candidate c, which passed
// every check, and then installs its definitions (adinstaller.Install).
// fetched is the fetch's result: a failure replaces it (Progressing, or
// Stalled with Conflict for an object of another owner); a success adds
// to a Ready one what was installed and what the install was consented to.
func (r *Reconciler) publishAndInstall(ctx context.Context, c *candidate, fetched status.Result) status.Result {
	ps, rev := c.ps, c.rev
	if err := r.publish(ctx, ps, rev); err != nil {
		res := status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonProgressing,
			Message: fmt.Sprintf("publishing the charts of %s: %v", rev.Revision(), err)}
		if errors.Is(err, errConflict) {
			res.State, res.Reason = status.StateStalled, v1alpha1.ReasonConflict
		}
		return res
	}
	// ps may come from a cache that has not seen its deletion yet: the
	// install checks past it, so a deleted source gets no new definition.
	installed, err := adinstaller.InstallForSource(ctx, r.Client, r.APIReader, ps, c.objs)
	if err != nil {
		res := status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonProgressing,
			Message: fmt.Sprintf("installing the ApplicationDefinitions of %s: %v", rev.Revision(), err)}
		var conflict *adinstaller.ConflictError
		if errors.As(err, &conflict) {
			res.State, res.Reason = status.StateStalled, v1alpha1.ReasonConflict
		}
		return res
	}
	res := fetched
	if res.State != status.StateReady {
		return res
	}
	if len(installed.Applied) > 0 {
		res.Message += fmt.Sprintf("; %d definitions installed (%s)", len(installed.Applied), strings.Join(installed.Applied, ", "))
	}
	if len(c.inUse) > 0 {
		res.Message += fmt.Sprintf("; removed with spec.kindRemoval Terminate while in use, served as Terminating until their applications are deleted: %s", adinstaller.DescribeInUse(c.inUse))
	}
	// Once installed, the served schemas are the new ones and nothing
	// differs: the event of the install names the applications, later
	// messages point at it.
	switch {
	case len(c.broken) > 0:
		res.Message += fmt.Sprintf("; installed with consent (spec.approvedIncompatibleRevision) although its schemas no longer accept stored values, so these applications fail their next upgrade until their values change: %s", DescribeIncompatible(c.broken))
	case c.consented():
		res.Message += "; installed with consent (spec.approvedIncompatibleRevision names this revision): the applications whose stored values its schemas do not accept fail their next upgrade until those values change (the events of this PackageSource name them)"
	}
	return res
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
	status.Set(ea, []string{meta.ReadyCondition}, *conditions.TrueCondition(meta.ReadyCondition, meta.SucceededReason,
		"chart %s %s (%s) of PackageSource %s", chart.Name, chart.Version, chart.Path, ps.Name))
	if err := patcher.Patch(ctx, ea, patch.WithOwnedConditions{Conditions: []string{meta.ReadyCondition}},
		patch.WithFieldOwner(v1alpha1.FieldManagerOperator)); err != nil {
		return fmt.Errorf("write ExternalArtifact %s/%s status: %w", ea.Namespace, name, err)
	}
	return nil
}
