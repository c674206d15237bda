package crds_test

import (
	"io/fs"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/crds"
)

func TestApplicationDefinition(t *testing.T) {
	crd, err := crds.ApplicationDefinition()
	if err != nil {
		t.Fatal(err)
	}
	if crd.Name != crds.ApplicationDefinitionName {
		t.Errorf("name = %q, want %q", crd.Name, crds.ApplicationDefinitionName)
	}
	if crd.Spec.Group != v1alpha1.GroupVersion.Group || crd.Spec.Names.Kind != "ApplicationDefinition" ||
		crd.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Errorf("group %q kind %q scope %q, want %q ApplicationDefinition Cluster",
			crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.Scope, v1alpha1.GroupVersion.Group)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("versions = %d, want 1", len(crd.Spec.Versions))
	}
	v := crd.Spec.Versions[0]
	if v.Name != v1alpha1.GroupVersion.Version || !v.Served || !v.Storage || v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("version %q served=%v storage=%v subresources=%v, want %q served, stored, with status",
			v.Name, v.Served, v.Storage, v.Subresources, v1alpha1.GroupVersion.Version)
	}

	// Each call returns a fresh object.
	crd.Name = "changed"
	again, err := crds.ApplicationDefinition()
	if err != nil {
		t.Fatal(err)
	}
	if again.Name != crds.ApplicationDefinitionName {
		t.Errorf("ApplicationDefinition returned a shared object")
	}
}

func TestFilesAndAll(t *testing.T) {
	files := crds.Files()
	if _, ok := files[crds.ApplicationDefinitionFile]; !ok {
		t.Fatalf("Files() lacks %s; has %d files", crds.ApplicationDefinitionFile, len(files))
	}
	onDisk, err := fs.Glob(crds.FS(), "*")
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) != len(files) {
		t.Errorf("FS has %d entries, Files %d", len(onDisk), len(files))
	}

	// The map and the slices are copies.
	files[crds.ApplicationDefinitionFile][0] = 'X'
	delete(files, crds.ApplicationDefinitionFile)
	if data := crds.Files()[crds.ApplicationDefinitionFile]; len(data) == 0 || data[0] == 'X' {
		t.Errorf("Files returned shared data")
	}

	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(onDisk) {
		t.Errorf("All() = %d CRDs, want %d", len(all), len(onDisk))
	}
	for _, crd := range all {
		if crd.Spec.Group == "" || crd.Name != crd.Spec.Names.Plural+"."+crd.Spec.Group {
			t.Errorf("CRD %q: group %q plural %q", crd.Name, crd.Spec.Group, crd.Spec.Names.Plural)
		}
	}
}
