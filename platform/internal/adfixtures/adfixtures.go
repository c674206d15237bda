package adfixtures

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/sdk/testenv"
)

// All returns every upstream ApplicationDefinition, decoded strictly (an
// unknown field fails the test), in file-name order.
func All(tb testing.TB) []*v1alpha1.ApplicationDefinition {
	tb.Helper()
	var ads []*v1alpha1.ApplicationDefinition
	for _, f := range testenv.UpstreamADs(tb) {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var ad v1alpha1.ApplicationDefinition
		if err := yaml.UnmarshalStrict(data, &ad); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		ads = append(ads, &ad)
	}
	return ads
}

// Named returns the upstream ApplicationDefinition called name.
func Named(tb testing.TB, name string) *v1alpha1.ApplicationDefinition {
	tb.Helper()
	for _, ad := range All(tb) {
		if ad.Name == name {
			return ad
		}
	}
	tb.Fatalf("no upstream ApplicationDefinition %s", name)
	return nil
}
