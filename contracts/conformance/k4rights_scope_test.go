package conformance

import (
	"slices"
	"strings"
	"testing"
)

// What K4-application-rights reports, as contracts/artifact/README.md
// ("Application rights") and k4-values.md (rule 7) say: of the objects
// the chart renders with its default values and the K2 values, one
// finding per resource the rules do not grant, each naming the rule to
// add; an object only other input renders (here, only on upgrade) is not
// checked.
func TestApplicationRightsScope(t *testing.T) {
	r := seededRights(t, map[string]string{
		"charts/demo/templates/install.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}\n---\n" +
			"apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  ports: [{port: 80}]\n",
		"charts/demo/templates/upgrade.yaml": "{{- if .Release.IsUpgrade }}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n{{- end }}\n",
	})
	var got []string
	for _, f := range rightsFindings(r) {
		got = append(got, f.Fix)
	}
	slices.Sort(got)
	want := []string{
		`add {apiGroups: [""], resources: [secrets], verbs: [get, list, watch, create, update, patch, delete]} to applications[0].rules in catalog.yaml`,
		`add {apiGroups: [""], resources: [services], verbs: [get, list, watch, create, update, patch, delete]} to applications[0].rules in catalog.yaml`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("fixes:\n  %s\nwant one per resource the defaults render:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
