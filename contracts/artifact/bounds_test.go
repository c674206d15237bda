package artifact_test

import (
	"fmt"
	"strings"
	"testing"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
)

// boundedCatalog is a valid catalog with comps distinct components (spread
// over two variants, each also holding the first one) and apps
// applications.
func boundedCatalog(comps, apps int) *artifact.Catalog {
	c := &artifact.Catalog{APIVersion: artifact.CatalogAPIVersion, Kind: artifact.CatalogKind}
	c.Name, c.Version, c.MinPlatformVersion = "big", "1.0.0", "0.1.0"
	var v [2]v1alpha1.PackageVariant
	v[0].Name, v[1].Name = "a", "b"
	for i := range comps {
		comp := v1alpha1.PackageComponent{Name: fmt.Sprintf("c%d", i), Chart: "charts/c", Namespace: "big"}
		v[i%2].Components = append(v[i%2].Components, comp)
		if i == 0 {
			v[1].Components = append(v[1].Components, comp)
		}
	}
	c.Variants = v[:]
	for i := range apps {
		c.Applications = append(c.Applications, v1alpha1.PackageApplication{Name: fmt.Sprintf("a%d", i), Chart: "charts/a"})
	}
	return c
}

// A catalog holds at most MaxComponents distinct component names and
// MaxApplications applications; the refusal names the field and the
// bound (README.md, "Bounds").
func TestValidateBounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reason string
		comps  int
		apps   int
		want   []string // nil for valid
	}{
		{
			name:   "at the bounds",
			reason: "the largest catalog allowed is valid: the bounds are inclusive",
			comps:  artifact.MaxComponents,
			apps:   artifact.MaxApplications,
			want:   nil,
		},
		{
			name:   "one component too many",
			reason: "the refusal names the entry that crossed the bound, its name and the bound",
			comps:  artifact.MaxComponents + 1,
			apps:   1,
			want:   []string{"variants[1].components[50]", `"c99"`, "is component name 101", "at most 100 distinct component names"},
		},
		{
			name:   "one application too many",
			reason: "applications are bounded apart from components, and the refusal says how many there are",
			comps:  1,
			apps:   artifact.MaxApplications + 1,
			want:   []string{"applications: Too many: 101", "at most 100 applications"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := boundedCatalog(tc.comps, tc.apps).Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("%v, want valid: %s", err, tc.reason)
				}
				return
			}
			if err == nil {
				t.Fatalf("valid, want a refusal: %s", tc.reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
