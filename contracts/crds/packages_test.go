package crds_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/crds"
)

func TestPackageCRDs(t *testing.T) {
	for _, tc := range []struct {
		kind, name string
		get        func() (*apiextensionsv1.CustomResourceDefinition, error)
		// rules are the CEL rules the spec schema must carry.
		rules []string
	}{
		{"PackageSource", crds.PackageSourceName, crds.PackageSource, []string{"has(self.oci) != has(self.layout)"}},
		{"Package", crds.PackageName, crds.Package, nil},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			crd, err := tc.get()
			if err != nil {
				t.Fatal(err)
			}
			if crd.Name != tc.name || crd.Spec.Names.Kind != tc.kind || crd.Spec.Group != v1alpha1.GroupVersion.Group ||
				crd.Spec.Scope != apiextensionsv1.ClusterScoped {
				t.Errorf("got %s kind %s group %s scope %s, want %s kind %s group %s, cluster-scoped",
					crd.Name, crd.Spec.Names.Kind, crd.Spec.Group, crd.Spec.Scope, tc.name, tc.kind, v1alpha1.GroupVersion.Group)
			}
			if len(crd.Spec.Versions) != 1 {
				t.Fatalf("versions = %d, want 1", len(crd.Spec.Versions))
			}
			v := crd.Spec.Versions[0]
			if v.Subresources == nil || v.Subresources.Status == nil {
				t.Errorf("version %q has no status subresource", v.Name)
			}
			var ready bool
			for _, c := range v.AdditionalPrinterColumns {
				ready = ready || c.Name == "Ready"
			}
			if !ready {
				t.Errorf("no Ready printer column in %v", v.AdditionalPrinterColumns)
			}
			spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
			for _, rule := range tc.rules {
				var found bool
				for _, r := range spec.XValidations {
					found = found || r.Rule == rule
				}
				if !found {
					t.Errorf("spec lacks the rule %q; has %v", rule, spec.XValidations)
				}
			}
		})
	}
}
