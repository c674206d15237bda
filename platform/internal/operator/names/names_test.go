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
		pkg        string
		component  string
		wantPrefix string
		reason     string
	}{
		{
			pkg:        "acme.web",
			component:  "frontend",
			wantPrefix: "acme-web-frontend--",
			reason:     "\".\" becomes \"-\" in the readable part; the hash keeps it apart from acme-web",
		},
		{
			pkg:        "acme-web",
			component:  "frontend",
			wantPrefix: "acme-web-frontend--",
			reason:     "the other half of the pair the system we follow collapses to one name",
		},
		{
			pkg:        "acme",
			component:  "web-frontend",
			wantPrefix: "acme-web-frontend--",
			reason:     "the package/component split moved: same readable part, another name",
		},
		{
			pkg:        "acme-web-frontend",
			component:  "x",
			wantPrefix: "acme-web-frontend-x--",
			reason:     "a package named like another pair's readable part",
		},
		{
			pkg:        "demo",
			component:  "echo",
			wantPrefix: "demo-echo--",
			reason:     "an ordinary name reads as package-component",
		},
		{
			pkg:        long,
			component:  "echo",
			wantPrefix: strings.Repeat("a", MaxReleaseName-len(ReleaseMarker)-hashLen) + "--",
			reason:     "a 253-character package is cut to fit Helm's 53",
		},
		{
			pkg:        long + "b",
			component:  "echo",
			wantPrefix: strings.Repeat("a", MaxReleaseName-len(ReleaseMarker)-hashLen) + "--",
			reason:     "two long names cut to the same prefix still differ by their hash",
		},
		{
			pkg:        "a.b.c.d",
			component:  "e",
			wantPrefix: "a-b-c-d-e--",
			reason:     "every \".\" is replaced, so no name is a subdomain",
		},
		{
			pkg:        "0",
			component:  "1",
			wantPrefix: "0-1--",
			reason:     "digits alone still make a DNS label",
		},
		{
			pkg:        "a-",
			component:  "-b",
			wantPrefix: "a---b--",
			reason:     "hyphens at the join are kept, and the hash still ends the name",
		},
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
			t.Errorf("HelmRelease(%q, %q) = %q, want prefix %q (%s)", tt.pkg, tt.component, got, tt.wantPrefix, tt.reason)
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
		name   string
		want   bool
		reason string
	}{
		{
			name:   "demo-echo--0123456789",
			want:   true,
			reason: "a component's HelmRelease: readable part, \"--\", 10 hex digits",
		},
		{
			name:   "demo-echo--abcdef0123",
			want:   true,
			reason: "the hash is hex, letters included",
		},
		{
			name:   "x--0123456789",
			want:   true,
			reason: "a one-letter readable part",
		},
		{
			name:   "--0123456789",
			want:   true,
			reason: "an empty readable part still marks a component's name",
		},
		{
			name:   "a---0123456789",
			want:   true,
			reason: "the last \"--\" before the digits counts",
		},
		{
			name:   "demo-echo--0123456789-installer",
			want:   true,
			reason: "the component's installer ServiceAccount name, derived from its release",
		},
		{
			name:   "demo-echo--0123456789-catalog-values",
			want:   true,
			reason: "the component's catalog values ConfigMap name",
		},
		{
			name:   "pg-mine--0123456789-x",
			want:   true,
			reason: "any name a chart derives from the release with \"-\"",
		},
		{
			name:   "a--zzzz--0123456789",
			want:   true,
			reason: "an earlier \"--\" not followed by a hash does not hide a later one",
		},
		{
			name:   "",
			want:   false,
			reason: "no name is no release",
		},
		{
			name:   "postgres",
			want:   false,
			reason: "an ordinary application name",
		},
		{
			name:   "db-0123456789",
			want:   false,
			reason: "one hyphen: an ordinary name, e.g. with a timestamp",
		},
		{
			name:   "test-1733097600",
			want:   false,
			reason: "a Unix time after one hyphen",
		},
		{
			name:   "a--012345678",
			want:   false,
			reason: "9 digits are not a hash",
		},
		{
			name:   "a--0123456789a",
			want:   false,
			reason: "11 hex digits are not a hash",
		},
		{
			name:   "a--0123456789b-x",
			want:   false,
			reason: "11 hex digits, then \"-\"",
		},
		{
			name:   "a--0123456789x",
			want:   false,
			reason: "the hash followed by a letter other than \"-\"",
		},
		{
			name:   "a--012345678g",
			want:   false,
			reason: "not hex",
		},
		{
			name:   "a--ABCDEF0123",
			want:   false,
			reason: "not lowercase (and not a DNS label)",
		},
		{
			name:   "a--0123456789.x",
			want:   false,
			reason: "followed by \".\" (a subdomain, not a release)",
		},
		{
			name:   "xn--bcher-kva",
			want:   false,
			reason: "punycode holds \"--\" and must stay usable",
		},
		{
			name:   "my--app",
			want:   false,
			reason: "a double hyphen alone",
		},
		{
			name:   "web--2024-01-01",
			want:   false,
			reason: "a date after \"--\"",
		},
		{
			name:   "a-b--0123456789",
			want:   true,
			reason: "prefix \"a-\" and application name \"b--0123456789\" together spell a component's name",
		},
		{
			name:   "a--0123456789--",
			want:   true,
			reason: "still holds the marked hash, whatever follows \"-\"",
		},
		{
			name:   "a--0123-456789ab",
			want:   false,
			reason: "the digits must be contiguous",
		},
		{
			name:   "a--abcdefabcd",
			want:   true,
			reason: "a hash of letters only",
		},
		{
			name:   "a-abcdefabcd",
			want:   false,
			reason: "one hyphen before a hash-like part",
		},
		{
			name:   "a" + strings.Repeat("-", 12),
			want:   false,
			reason: "hyphens only after the marker",
		},
	} {
		if got := ReservedRelease(tt.name); got != tt.want {
			t.Errorf("ReservedRelease(%q) = %v, want %v: %s", tt.name, got, tt.want, tt.reason)
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
