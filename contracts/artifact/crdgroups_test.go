package artifact_test

import (
	"bytes"
	"strings"
	"testing"

	"cozystack.io/contracts/artifact"
)

// TestCRDGroupKeysMatchExactly: CheckChartCRDs reads spec.group as
// Kubernetes does, by its exact key. A "Group" key after the real
// "group" (which the apiserver ignores) does not hide another
// catalog's group from the check.
func TestCRDGroupKeysMatchExactly(t *testing.T) {
	c := groupsCatalog(t, "  apiGroups: [widgets.example.org]", "[]", "", "")
	doc := crd("victim.example.org") + "  Group: widgets.example.org\n"
	files, err := artifact.ChartCRDFiles(bytes.NewReader(chartArchive(t, map[string]string{"op/crds/w.yaml": doc})), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	err = artifact.CheckChartCRDs(c, "charts/op", files)
	if want := `CustomResourceDefinition widgets.victim.example.org has spec.group "victim.example.org"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("CheckChartCRDs = %v, want it to contain %q", err, want)
	}
}
