package crds_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/crds"
)

func TestClusterValues(t *testing.T) {
	crd, err := crds.ClusterValues()
	if err != nil {
		t.Fatal(err)
	}
	if crd.Name != crds.ClusterValuesName {
		t.Errorf("name = %q, want %q", crd.Name, crds.ClusterValuesName)
	}
	if crd.Spec.Group != v1alpha1.GroupVersion.Group || crd.Spec.Names.Kind != "ClusterValues" ||
		crd.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Errorf("group %q kind %q scope %q, want %q ClusterValues Cluster",
			crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.Scope, v1alpha1.GroupVersion.Group)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("versions = %d, want 1", len(crd.Spec.Versions))
	}
	v := crd.Spec.Versions[0]
	if v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("version %q has no status subresource", v.Name)
	}
	// The singleton rule is on the root of the schema.
	root := v.Schema.OpenAPIV3Schema
	var singleton bool
	for _, rule := range root.XValidations {
		if rule.Rule == "self.metadata.name == '"+v1alpha1.ClusterValuesName+"'" {
			singleton = true
		}
	}
	if !singleton {
		t.Errorf("the root schema lacks the singleton rule; has %v", root.XValidations)
	}
	spec := root.Properties["spec"]
	for _, field := range []string{"rootHost", "apiServerEndpoint"} {
		p := spec.Properties[field]
		if p.MinLength == nil || *p.MinLength != 1 {
			t.Errorf("spec.%s: minLength = %v, want 1", field, p.MinLength)
		}
	}
	if got := spec.Required; len(got) != 2 {
		t.Errorf("spec.required = %v, want apiServerEndpoint and rootHost", got)
	}
}
