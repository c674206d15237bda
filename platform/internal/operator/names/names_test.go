package names

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// helmReleaseName is Helm's release name rule; we also require a DNS label
// (no dots) so chart objects named after the release are valid Services.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestHelmReleaseNames(t *testing.T) {
	long := strings.Repeat("a", 253)
	tests := []struct {
		pkg, component string
		wantPrefix     string
	}{
		{"acme.web", "frontend", "acme-web-frontend-"},
		{"acme-web", "frontend", "acme-web-frontend-"},
		{"acme", "web-frontend", "acme-web-frontend-"},
		{"acme-web-frontend", "x", "acme-web-frontend-x-"},
		{"demo", "echo", "demo-echo-"},
		{long, "echo", strings.Repeat("a", MaxReleaseName-1-hashLen) + "-"},
		{long + "b", "echo", strings.Repeat("a", MaxReleaseName-1-hashLen) + "-"},
		{"a.b.c.d", "e", "a-b-c-d-e-"},
		{"0", "1", "0-1-"},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		got := HelmRelease(tt.pkg, tt.component)
		key := tt.pkg + "/" + tt.component
		if len(got) > MaxReleaseName {
			t.Errorf("HelmRelease(%q, %q) = %q: %d characters, Helm allows %d", tt.pkg, tt.component, got, len(got), MaxReleaseName)
		}
		if !dnsLabel.MatchString(got) {
			t.Errorf("HelmRelease(%q, %q) = %q: not a DNS-1123 label", tt.pkg, tt.component, got)
		}
		if !strings.HasPrefix(got, tt.wantPrefix) {
			t.Errorf("HelmRelease(%q, %q) = %q, want prefix %q", tt.pkg, tt.component, got, tt.wantPrefix)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("HelmRelease(%s) = HelmRelease(%s) = %q: names collide", key, other, got)
		}
		seen[got] = key
		if again := HelmRelease(tt.pkg, tt.component); again != got {
			t.Errorf("HelmRelease(%s) is not stable: %q then %q", key, got, again)
		}
		cr := ClusterRBAC(tt.pkg, tt.component)
		if msgs := validation.IsDNS1123Subdomain(strings.ReplaceAll(cr, ":", "-")); len(msgs) > 0 || len(cr) > 253 {
			t.Errorf("ClusterRBAC(%s) = %q: %v", key, cr, msgs)
		}
	}
	// The pair collision of the system we follow, named in the brief.
	if HelmRelease("acme.web", "x") == HelmRelease("acme-web", "x") {
		t.Error("acme.web and acme-web map to the same HelmRelease")
	}
	// Joining is ambiguous without the hash: a-b + c and a + b-c.
	if HelmRelease("a-b", "c") == HelmRelease("a", "b-c") {
		t.Error("(a-b, c) and (a, b-c) map to the same HelmRelease")
	}
}

func TestLabelValue(t *testing.T) {
	short := "acme.web"
	if got := LabelValue(short); got != short {
		t.Errorf("LabelValue(%q) = %q, want it unchanged", short, got)
	}
	long1 := strings.Repeat("x", 100) + ".a"
	long2 := strings.Repeat("x", 100) + ".b"
	v1, v2 := LabelValue(long1), LabelValue(long2)
	for _, v := range []string{v1, v2} {
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			t.Errorf("LabelValue = %q: %v", v, msgs)
		}
	}
	if v1 == v2 {
		t.Errorf("LabelValue maps %q and %q to the same value %q", long1, long2, v1)
	}
}

func TestStoreTagsAreDistinct(t *testing.T) {
	if StoreTag("a") == PendingTag("a") || StoreTag("a.b") == StoreTag("a-b") {
		t.Error("store tags collide")
	}
}
