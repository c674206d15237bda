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
		name        string
		comps, apps int
		want        []string // "" for valid
	}{
		{"at the bounds", artifact.MaxComponents, artifact.MaxApplications, nil},
		{"one component too many", artifact.MaxComponents + 1, 1,
			[]string{"variants[1].components[50]", `"c99"`, "is component name 101", "at most 100 distinct component names"}},
		{"one application too many", 1, artifact.MaxApplications + 1,
			[]string{"applications: Too many: 101", "at most 100 applications"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := boundedCatalog(tc.comps, tc.apps).Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("valid, want a refusal")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
