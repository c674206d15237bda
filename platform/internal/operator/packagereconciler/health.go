package packagereconciler

import (
	"fmt"
	"regexp"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/status"
)

// failedReasons are helm-controller's Ready=False reasons (api/v2
// condition_types.go) that need a person: the release will not become
// Ready by waiting. Everything else (Progressing, DependencyNotReady,
// SourceNotReady, ...) is still on its way.
var failedReasons = map[string]bool{
	helmv2.InstallFailedReason:     true,
	helmv2.UpgradeFailedReason:     true,
	helmv2.TestFailedReason:        true,
	helmv2.RollbackFailedReason:    true,
	helmv2.UninstallFailedReason:   true,
	helmv2.ArtifactFailedReason:    true,
	v1alpha1.HelmReasonValuesError: true,
	"RESTClientError":              true,
	"ChartMutateError":             true,
	"InitFailed":                   true,
}

// helmOwnership matches Helm's refusal to install an object another
// release owns (helm.sh/helm/v3 pkg/action validate.go), capturing the
// owning release's name.
var helmOwnership = regexp.MustCompile(`key "meta\.helm\.sh/release-name" must equal "[^"]*": current value is "([^"]*)"`)

// componentState is one HelmRelease as the Package sees it.
type componentState struct {
	ready   bool
	failed  bool
	message string
	// ownerRelease is the release that owns an object this one's chart
	// renders, when Helm refused for that reason.
	ownerRelease string
}

// stateOf reads hr (nil when not created yet) against the chart digest the
// served revision has for it.
func stateOf(hr *helmv2.HelmRelease, chartDigest string) componentState {
	if hr == nil {
		return componentState{message: "not created yet"}
	}
	c := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition)
	switch {
	case c == nil:
		return componentState{message: "waiting for helm-controller"}
	case c.ObservedGeneration != hr.Generation:
		return componentState{message: "helm-controller has not seen the latest spec yet"}
	case c.Status == "True" && hr.Status.LastAttemptedRevisionDigest != chartDigest:
		return componentState{message: fmt.Sprintf("installed chart %s, the source now serves %s", hr.Status.LastAttemptedRevisionDigest, chartDigest)}
	case c.Status == "True":
		return componentState{ready: true, message: c.Message}
	case c.Status == "False" && failedReasons[c.Reason]:
		s := componentState{failed: true, message: c.Reason + ": " + c.Message}
		if m := helmOwnership.FindStringSubmatch(c.Message); m != nil {
			s.ownerRelease = m[1]
		}
		return s
	default:
		return componentState{message: c.Reason + ": " + c.Message}
	}
}

// summarize turns the components' states into the Package's result and
// component statuses. ownerOf describes who owns a release by its name
// (`Package "x"`, an application, or "" when unknown), for naming the owner
// in a Conflict.
func summarize(p *plan, hrs map[string]*helmv2.HelmRelease, ownerOf func(release string) string) (status.Result, []v1alpha1.PackageComponentStatus, bool) {
	var comps []v1alpha1.PackageComponentStatus
	var failed, conflicts, waiting []string
	for _, c := range p.components {
		hr := hrs[c.Namespace+"/"+c.Release]
		st := stateOf(hr, c.ChartDigest)
		comps = append(comps, v1alpha1.PackageComponentStatus{
			Name:        c.Name,
			HelmRelease: &v1alpha1.NamespacedObjectReference{Name: c.Release, Namespace: c.Namespace},
			Ready:       st.ready,
		})
		where := fmt.Sprintf("component %s (HelmRelease %s/%s)", c.Name, c.Namespace, c.Release)
		switch {
		case st.ready:
		case st.failed && st.ownerRelease != "":
			owner := ownerOf(st.ownerRelease)
			if owner == "" {
				owner = "no Package"
			}
			conflicts = append(conflicts, fmt.Sprintf("%s: its chart renders an object that Helm release %q of %s owns; it is not taken over: %s",
				where, st.ownerRelease, owner, st.message))
		case st.failed:
			failed = append(failed, where+": "+st.message)
		default:
			waiting = append(waiting, where+": "+st.message)
		}
	}
	switch {
	case len(conflicts) > 0:
		return status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonConflict, Message: strings.Join(append(conflicts, failed...), "; ")}, comps, false
	case len(failed) > 0:
		return status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonInstallFailed,
			Message: strings.Join(failed, "; ") + "; fix the cause (for \"forbidden\": the component's rules in the catalog) and publish a new revision"}, comps, false
	case len(waiting) > 0:
		return status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonInstalling,
			Message: fmt.Sprintf("%d of %d components installed; waiting for %s", len(p.components)-len(waiting), len(p.components), strings.Join(waiting, "; "))}, comps, false
	}
	return status.Result{State: status.StateReady, Reason: v1alpha1.ReasonInstalled,
		Message: fmt.Sprintf("%d components of catalog %s %s installed", len(p.components), p.catalog(), p.source.Status.Catalog.Version)}, comps, true
}
