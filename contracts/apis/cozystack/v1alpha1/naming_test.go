package v1alpha1_test

import (
	"strings"
	"testing"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

func TestReservedNamespace(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string // a substring of the rule, "" for not reserved
	}{
		{"default", "default namespace"},
		{"cozy-system", "platform's namespace"},
		{"flux-system", "Flux"},
		{"tenant-root", "root tenant"},
		{"tenant-demo", `"tenant-"`},
		{"tenant-demo-child", "tenant namespaces"},
		{"kube-system", `"kube-"`},
		{"kube-public", `"kube-"`},
		{"cozy-releases-demo--0123456789", "release storage"},
		{"cozy-echo", ""},
		{"cozy-release", ""},
		{"tenant", ""},
		{"kube", ""},
		{"mytenant-x", ""},
		{"defaults", ""},
	} {
		got := v1alpha1.ReservedNamespace(tc.name)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("ReservedNamespace(%q) = %q, want it to mention %q", tc.name, got, tc.want)
		}
	}
}
