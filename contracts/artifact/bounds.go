package artifact

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The bounds of one catalog (README.md, "Components and applications",
// "Bounds"). Each component name and each application name becomes one
// ExternalArtifact the operator publishes and keeps, and one entry of the
// PackageSource's status; the bounds keep both small whatever a catalog
// declares. The shipped catalogs use a fraction (services: 7 components
// and 8 applications, virtualization: 9 and 4).
const (
	// MaxComponents bounds the distinct component names of all variants.
	MaxComponents = 100
	// MaxApplications bounds applications[].
	MaxApplications = 100
)

// validateBounds refuses a catalog over MaxComponents or MaxApplications,
// naming the field, its count and the bound. The component count is of
// distinct names: a component shared by variants is one chart.
func validateBounds(c *Catalog) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, v := range c.Variants {
		for j, comp := range v.Components {
			if seen[comp.Name] {
				continue
			}
			seen[comp.Name] = true
			if len(seen) == MaxComponents+1 {
				errs = append(errs, field.Invalid(field.NewPath("variants").Index(i).Child("components").Index(j), comp.Name,
					fmt.Sprintf("is component name %d: a catalog has at most %d distinct component names across its variants (each is a published chart); split the catalog", MaxComponents+1, MaxComponents)))
			}
		}
	}
	if n := len(c.Applications); n > MaxApplications {
		e := field.TooMany(field.NewPath("applications"), n, MaxApplications)
		e.Detail += "; a catalog has at most " + fmt.Sprint(MaxApplications) + " applications (each is a published chart and a kind); split the catalog"
		errs = append(errs, e)
	}
	return errs
}
