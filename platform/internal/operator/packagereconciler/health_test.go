package packagereconciler

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/status"
)

func hrWith(gen int64, st metav1.ConditionStatus, reason, msg, digest string) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
	hr.Status.LastAttemptedRevisionDigest = digest
	hr.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: st, Reason: reason, Message: msg, ObservedGeneration: gen}}
	return hr
}

func TestStateOf(t *testing.T) {
	stale := hrWith(2, "True", "InstallSucceeded", "ok", "sha256:a")
	stale.Status.Conditions[0].ObservedGeneration = 1
	tests := []struct {
		name          string
		hr            *helmv2.HelmRelease
		ready, failed bool
		owner         string
	}{
		{"not created", nil, false, false, ""},
		{"ready at the served chart", hrWith(1, "True", "InstallSucceeded", "ok", "sha256:a"), true, false, ""},
		{"ready at an older chart", hrWith(1, "True", "InstallSucceeded", "ok", "sha256:old"), false, false, ""},
		{"older generation", stale, false, false, ""},
		{"waiting for a dependency", hrWith(1, "False", helmv2.DependencyNotReadyReason, "dependency not ready", ""), false, false, ""},
		{"forbidden", hrWith(1, "False", helmv2.InstallFailedReason, `clusterrolebindings.rbac.authorization.k8s.io is forbidden`, ""), false, true, ""},
		{"ownership", hrWith(1, "False", helmv2.InstallFailedReason,
			`Namespace "x" exists and cannot be imported into the current release: invalid ownership metadata; annotation validation error: key "meta.helm.sh/release-name" must equal "two-ns-1": current value is "one-ns-2"`, ""),
			false, true, "one-ns-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stateOf(tt.hr, "sha256:a")
			if s.ready != tt.ready || s.failed != tt.failed || s.ownerRelease != tt.owner {
				t.Errorf("stateOf = %+v, want ready=%v failed=%v owner=%q", s, tt.ready, tt.failed, tt.owner)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	pl := &plan{view: view{
		pkg:    pkgOf("p", "s"),
		source: source("s", nil, comp("a"), comp("b")),
	}}
	pl.components = []plannedComponent{
		{PackageComponent: comp("a"), Release: "p-a", ChartDigest: "sha256:a"},
		{PackageComponent: comp("b"), Release: "p-b", ChartDigest: "sha256:b"},
	}
	owner := func(string) string { return `Package "first"` }
	ready := map[string]*helmv2.HelmRelease{
		"ns-a/p-a": hrWith(1, "True", "InstallSucceeded", "", "sha256:a"),
		"ns-b/p-b": hrWith(1, "True", "InstallSucceeded", "", "sha256:b"),
	}
	if res, comps, ok := summarize(pl, ready, owner); !ok || res.Reason != v1alpha1.ReasonInstalled || len(comps) != 2 || !comps[1].Ready {
		t.Errorf("all ready: %+v %+v %v", res, comps, ok)
	}
	waiting := map[string]*helmv2.HelmRelease{"ns-a/p-a": ready["ns-a/p-a"]}
	if res, _, _ := summarize(pl, waiting, owner); res.State != status.StateProgressing || !strings.Contains(res.Message, "1 of 2 components installed") {
		t.Errorf("one missing: %+v", res)
	}
	failed := map[string]*helmv2.HelmRelease{"ns-a/p-a": ready["ns-a/p-a"],
		"ns-b/p-b": hrWith(1, "False", helmv2.InstallFailedReason, "configmaps is forbidden", "")}
	if res, _, _ := summarize(pl, failed, owner); res.Reason != v1alpha1.ReasonInstallFailed || !strings.Contains(res.Message, "component b (HelmRelease ns-b/p-b): InstallFailed: configmaps is forbidden") {
		t.Errorf("failed: %+v", res)
	}
	conflict := map[string]*helmv2.HelmRelease{"ns-a/p-a": ready["ns-a/p-a"],
		"ns-b/p-b": hrWith(1, "False", helmv2.InstallFailedReason, `key "meta.helm.sh/release-name" must equal "p-b": current value is "first-b"`, "")}
	if res, _, _ := summarize(pl, conflict, owner); res.Reason != v1alpha1.ReasonConflict || !strings.Contains(res.Message, `Helm release "first-b" of Package "first" owns`) {
		t.Errorf("conflict: %+v", res)
	}
}
