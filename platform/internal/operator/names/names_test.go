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
		{"acme.web", "frontend", "acme-web-frontend--"},
		{"acme-web", "frontend", "acme-web-frontend--"},
		{"acme", "web-frontend", "acme-web-frontend--"},
		{"acme-web-frontend", "x", "acme-web-frontend-x--"},
		{"demo", "echo", "demo-echo--"},
		{long, "echo", strings.Repeat("a", MaxReleaseName-len(ReleaseMarker)-hashLen) + "--"},
		{long + "b", "echo", strings.Repeat("a", MaxReleaseName-len(ReleaseMarker)-hashLen) + "--"},
		{"a.b.c.d", "e", "a-b-c-d-e--"},
		{"0", "1", "0-1--"},
		{"a-", "-b", "a---b--"},
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
		if !ReservedRelease(got) || !ReservedRelease(Installer(tt.pkg, tt.component)) || !ReservedRelease(CatalogValues(tt.pkg, tt.component)) {
			t.Errorf("HelmRelease(%s) = %q: it, its installer or its catalog values name is not reserved", key, got)
		}
		if again := HelmRelease(tt.pkg, tt.component); again != got {
			t.Errorf("HelmRelease(%s) is not stable: %q then %q", key, got, again)
		}
		cr := ClusterRBAC(tt.pkg, tt.component)
		if msgs := validation.IsDNS1123Subdomain(strings.ReplaceAll(cr, ":", "-")); len(msgs) > 0 || len(cr) > 253 {
			t.Errorf("ClusterRBAC(%s) = %q: %v", key, cr, msgs)
		}
	}
	// The pair collision of the system we follow (docs/operator/catalogs.md, "Catalog
	// delivery", "Names").
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

// TestReservedRelease: the rule cozystack-api applies to an application's
// HelmRelease name.
func TestReservedRelease(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"demo-echo--0123456789", true},
		{"demo-echo--abcdef0123", true},
		{"x--0123456789", true},
		{"--0123456789", true},
		{"a---0123456789", true},                  // the last "--" counts
		{"demo-echo--0123456789-installer", true}, // derived names
		{"demo-echo--0123456789-catalog-values", true},
		{"pg-mine--0123456789-x", true},
		{"a--zzzz--0123456789", true},
		{"", false},
		{"postgres", false},
		{"db-0123456789", false},    // one hyphen: an ordinary name, e.g. a timestamp
		{"test-1733097600", false},  // a Unix time
		{"a--012345678", false},     // 9 digits
		{"a--0123456789a", false},   // 11
		{"a--0123456789b-x", false}, // 11, then "-"
		{"a--0123456789x", false},   // followed by a letter other than "-"
		{"a--012345678g", false},    // not hex
		{"a--ABCDEF0123", false},    // not lowercase (and not a DNS label)
		{"a--0123456789.x", false},  // followed by "." (a subdomain, not a release)
		{"xn--bcher-kva", false},    // punycode
		{"my--app", false},          // a double hyphen alone
		{"web--2024-01-01", false},  // a date
		{"a-b--0123456789", true},   // prefix "a-", name "b--0123456789"
		{"a--0123456789--", true},   // still holds the marked hash
		{"a--0123-456789ab", false}, // the digits must be contiguous
		{"a--abcdefabcd", true},     // all letters
		{"a-abcdefabcd", false},     // one hyphen
		{"a" + strings.Repeat("-", 12), false},
	} {
		if got := ReservedRelease(tt.name); got != tt.want {
			t.Errorf("ReservedRelease(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestNoApplicationNameIsAComponentName: the operator never uses a name an
// application may take. Application HelmRelease names are
// "<prefix><name>" with both DNS-1035 label parts; cozystack-api refuses
// the reserved ones, and every component name is reserved, across
// Package and component names of every shape and length.
func TestNoApplicationNameIsAComponentName(t *testing.T) {
	pkgs := []string{"a", "demo", "acme.web", "acme-web", "0", "x.y.z", strings.Repeat("p", 63), strings.Repeat("q.", 100) + "q", "tenant-root"}
	comps := []string{"a", "echo", "web-frontend", "x1", strings.Repeat("c", 63), "postgres-operator"}
	for _, p := range pkgs {
		for _, c := range comps {
			for _, n := range []string{HelmRelease(p, c), Installer(p, c), CatalogValues(p, c)} {
				if !ReservedRelease(n) {
					t.Errorf("(%q, %q): %q is not reserved, an application could take it", p, c, n)
				}
			}
			if hr := HelmRelease(p, c); len(hr) > MaxReleaseName || !dnsLabel.MatchString(hr) {
				t.Errorf("HelmRelease(%q, %q) = %q: not a DNS label of at most %d characters", p, c, hr, MaxReleaseName)
			}
		}
	}
}
