package packagesourcereconciler

import (
	"context"
	"errors"
	"fmt"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/safetar"
	"cozystack.io/platform/internal/operator/requirements"
	"cozystack.io/platform/internal/status"
)

// Step 2: a newer revision, resolved from the spec's origin (source.go),
// pulled and verified into the store, and checked against this platform.

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
