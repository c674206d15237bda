package artifact_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cozystack.io/contracts/artifact"
)

// testDefinitions holds the definitions of testCatalog (the Echo kind and
// a policy on it), outside the catalog so that it stays an artifact
// without definitions.
const testDefinitions = "testdata/definitions"

// withDefinitions copies testCatalog into a temporary directory with the
// files of testDefinitions in applicationdefinitions/, and returns it.
func withDefinitions(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "catalog")
	if err := os.CopyFS(dir, os.DirFS(testCatalog)); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(testDefinitions)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, artifact.DefinitionsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !artifact.IsDefinitionFileName(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(testDefinitions, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, artifact.DefinitionsDir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSplitDocuments(t *testing.T) {
	data := "# head\n---\na: 1\n--- # second\n# only a comment\n\n---\nb: 2\nc: 3\n---\n"
	docs := artifact.SplitDocuments([]byte(data))
	var lines []int
	var bodies []string
	for _, d := range docs {
		lines = append(lines, d.Line)
		bodies = append(bodies, strings.TrimSpace(string(d.Data)))
	}
	if want := []int{2, 7}; !slices.Equal(lines, want) {
		t.Errorf("lines %v, want %v", lines, want)
	}
	if want := []string{"a: 1", "b: 2\nc: 3"}; !slices.Equal(bodies, want) {
		t.Errorf("documents %q, want %q", bodies, want)
	}
}

func TestDecodeDefinitionFile(t *testing.T) {
	objs, err := artifact.DecodeDefinitionFile("applicationdefinitions/x.yaml", []byte("# c\napiVersion: v1\nkind: A\n---\n---\napiVersion: v1\nkind: B\n"))
	if err != nil || len(objs) != 2 || objs[0].GetKind() != "A" || objs[1].GetKind() != "B" {
		t.Fatalf("DecodeDefinitionFile = %v, %v", objs, err)
	}
	_, err = artifact.DecodeDefinitionFile("applicationdefinitions/x.yaml", []byte("kind: A\nkind: B\n---\n- a list\n---\njust a string\n"))
	for _, want := range []string{
		`applicationdefinitions/x.yaml, document 1 (line 1): not valid YAML`, `"kind" already set in map`,
		`applicationdefinitions/x.yaml, document 2 (line 3): not a YAML mapping`,
		`applicationdefinitions/x.yaml, document 3 (line 5): not a YAML mapping`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant it to contain %q", err, want)
		}
	}
}

func TestCheckDefinitionPath(t *testing.T) {
	for s, ok := range map[string]bool{
		"applicationdefinitions/echo.yaml":     true,
		"applicationdefinitions/echo.yml":      true,
		"applicationdefinitions/echo.json":     false,
		"applicationdefinitions/sub/echo.yaml": false,
		"applicationdefinitions/":              false,
		"applicationdefinitions/../echo.yaml":  false,
		"/applicationdefinitions/echo.yaml":    false,
		"charts/echo.yaml":                     false,
		"echo.yaml":                            false,
		"":                                     false,
	} {
		if err := artifact.CheckDefinitionPath(s); (err == nil) != ok {
			t.Errorf("CheckDefinitionPath(%q) = %v, want ok %v", s, err, ok)
		}
	}
}

const (
	echoAD = `apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: echo
spec:
  application: {kind: Echo, singular: echo, plural: echoes}
  release: {prefix: echo-, source: demo, component: echo-tenant}
`
	echoPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: echo-policy
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [apps.cozystack.io]
        apiVersions: [v1alpha1]
        operations: [CREATE]
        resources: [echoes, echoes/status]
  validations:
    - expression: "true"
`
	echoBinding = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: echo-policy
spec:
  policyName: echo-policy
  validationActions: [Deny]
`
)

// defs decodes files (path, content, path, content, ...) into
// Definitions.
func defs(t *testing.T, files ...string) []artifact.Definition {
	t.Helper()
	var out []artifact.Definition
	for i := 0; i+1 < len(files); i += 2 {
		objs, err := artifact.DecodeDefinitionFile(files[i], []byte(files[i+1]))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, artifact.Definition{Path: files[i], Objects: objs})
	}
	return out
}

func TestCheckDefinitions(t *testing.T) {
	cat, err := artifact.LoadCatalog(testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	const ad, pol = "applicationdefinitions/echo.yaml", "applicationdefinitions/policy.yaml"
	policy := echoPolicy + "---\n" + echoBinding
	for _, tc := range []struct {
		name  string
		files []string
		// want are the problems, each a list of substrings of one error
		// line; none means valid.
		want [][]string
	}{
		{"the test definitions", nil, nil},
		{"an AD alone", []string{ad, echoAD}, nil},
		{"an AD and its policy in one file", []string{ad, echoAD + "---\n" + policy}, nil},
		{"no definitions at all", []string{}, nil},
		{"another kind", []string{ad, echoAD, pol, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"},
			[][]string{{pol + ", document 1: ", `apiVersion "v1", kind "ConfigMap"`, "installs only cozystack.io/v1alpha1 ApplicationDefinition, admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding"}}},
		{"another version of the AD kind", []string{ad, strings.Replace(echoAD, "v1alpha1", "v1beta1", 1)},
			[][]string{{ad, `apiVersion "cozystack.io/v1beta1", kind "ApplicationDefinition"`}, {"catalog.yaml: provides.applicationKinds[0]: kind Echo has no ApplicationDefinition"}}},
		{"an AD of a kind the catalog does not provide", []string{ad, echoAD, "applicationdefinitions/other.yaml", strings.NewReplacer("name: echo", "name: other", "kind: Echo", "kind: Other", "echoes", "others").Replace(echoAD)},
			[][]string{{"applicationdefinitions/other.yaml, document 1 (ApplicationDefinition other): spec.application.kind: Invalid value: \"Other\": is not in catalog.yaml provides.applicationKinds [Echo]"}}},
		{"two ADs of one kind", []string{ad, echoAD, "applicationdefinitions/again.yaml", strings.Replace(echoAD, "name: echo", "name: echo2", 1)},
			[][]string{{"applicationdefinitions/again.yaml, document 1 (ApplicationDefinition echo2): spec.application.kind: Invalid value: \"Echo\": is also served by the ApplicationDefinition in " + ad + ", document 1"}}},
		{"two ADs of one name", []string{ad, echoAD + "---\n" + echoAD},
			[][]string{{ad + ", document 2 (ApplicationDefinition echo): metadata.name: Invalid value: \"echo\": is also the name of the ApplicationDefinition in " + ad + ", document 1"}, {ad + ", document 2", "spec.application.kind: Invalid value"}}},
		{"a provided kind without an AD", []string{pol, strings.Replace(policy, "resources: [echoes, echoes/status]", "resources: [echoes]", 1)},
			[][]string{{"catalog.yaml: provides.applicationKinds[0]: kind Echo has no ApplicationDefinition in applicationdefinitions/"}, {pol, "resources[0]: Invalid value: \"echoes\": echoes is not the plural of an ApplicationDefinition of this catalog ([])"}}},
		{"an AD naming another catalog's chart", []string{ad, strings.Replace(echoAD, "source: demo", "source: services", 1)},
			[][]string{{ad + ", document 1 (ApplicationDefinition echo): spec.release.source: Invalid value: \"services\": a catalog's ApplicationDefinition installs only the catalog's own charts: set source: demo"}}},
		{"an AD naming a component's chart", []string{ad, strings.Replace(echoAD, "component: echo-tenant", "component: echo-operator", 1)},
			[][]string{{ad + ", document 1 (ApplicationDefinition echo): spec.release.component: Unsupported value: \"echo-operator\": supported values: \"echo-tenant\""}}},
		{"an AD naming its chart by chartRef", []string{ad, strings.Replace(echoAD, "source: demo, component: echo-tenant", "chartRef: {kind: HelmChart, name: x, namespace: flux-system}", 1)},
			[][]string{{ad, "spec.release.chartRef: Forbidden: a catalog's ApplicationDefinition names its chart by source and component, never by chartRef"}, {ad, "spec.release.source: Invalid value: \"\""}, {ad, "spec.release.component: Unsupported value: \"\""}}},
		{"an AD whose short names shadow built-in ones", []string{ad, strings.Replace(echoAD, "plural: echoes}", "plural: echoes, shortNames: [ec, cm, po]}", 1)},
			[][]string{{ad + ", document 1 (ApplicationDefinition echo): spec.application.shortNames[1]: Forbidden: \"cm\" is a name of the built-in resource configmaps: an application's names may not shadow"},
				{ad, "spec.application.shortNames[2]: Forbidden: \"po\" is a name of the built-in resource pods"}}},
		{"an AD whose plural and singular are built-in names", []string{ad, strings.Replace(echoAD, "singular: echo, plural: echoes}", "singular: secret, plural: svc}", 1), pol, strings.ReplaceAll(policy, "echoes", "svc")},
			[][]string{{ad, "spec.application.plural: Forbidden: \"svc\" is a name of the built-in resource services"},
				{ad, "spec.application.singular: Forbidden: \"secret\" is a name of the built-in resource secrets"}}},
		{"an unknown field in an AD's spec", []string{ad, strings.Replace(echoAD, "  release:", "  relase: {}\n  release:", 1)},
			[][]string{{ad + ", document 1 (ApplicationDefinition echo): ", `unknown field "spec.relase"`}}},
		{"a wrong type in an AD", []string{ad, strings.Replace(echoAD, "kind: Echo,", "kind: 5,", 1)},
			[][]string{{ad, "does not decode as kind ApplicationDefinition", "spec.application.kind"}}},
		{"a namespaced AD", []string{ad, strings.Replace(echoAD, "  name: echo\n", "  name: echo\n  namespace: default\n", 1)},
			[][]string{{ad + ", document 1 (ApplicationDefinition echo): metadata.namespace: Forbidden: the object is cluster-scoped: remove namespace default"}}},
		{"a namespaced binding", []string{ad, echoAD, pol, strings.Replace(policy, "  name: echo-policy\nspec:\n  policyName", "  name: echo-policy\n  namespace: x\nspec:\n  policyName", 1)},
			[][]string{{pol + ", document 2 (ValidatingAdmissionPolicyBinding echo-policy): metadata.namespace: Forbidden"}}},
		{"an unnamed object", []string{ad, strings.Replace(echoAD, "  name: echo\n", "  generateName: echo-\n", 1)},
			[][]string{{ad + ", document 1 (ApplicationDefinition ): metadata.name: Required value"}}},
		{"a name that is no DNS subdomain", []string{ad, strings.Replace(echoAD, "  name: echo\n", "  name: Echo_1\n", 1)},
			[][]string{{ad, `metadata.name: Invalid value: "Echo_1"`}}},
		{"a policy matching pods", []string{ad, echoAD, pol, strings.Replace(policy, "- apiGroups: [apps.cozystack.io]", "- apiGroups: [\"\"]", 1)},
			[][]string{{pol + ", document 1 (ValidatingAdmissionPolicy echo-policy): spec.matchConstraints.resourceRules[0].apiGroups: Invalid value", "must be exactly [apps.cozystack.io]"}}},
		{"a policy matching pods in the apps group", []string{ad, echoAD, pol, strings.Replace(policy, "resources: [echoes, echoes/status]", "resources: [echoes, pods]", 1)},
			[][]string{{pol, `spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: "pods": pods is not the plural of an ApplicationDefinition of this catalog ([echoes])`}}},
		{"a policy with a wildcard group", []string{ad, echoAD, pol, strings.Replace(policy, "- apiGroups: [apps.cozystack.io]", "- apiGroups: [\"*\"]", 1)},
			[][]string{{pol, "resourceRules[0].apiGroups"}}},
		{"a policy with a second group", []string{ad, echoAD, pol, strings.Replace(policy, "- apiGroups: [apps.cozystack.io]", "- apiGroups: [apps.cozystack.io, apps]", 1)},
			[][]string{{pol, "resourceRules[0].apiGroups"}}},
		{"a policy with wildcard resources", []string{ad, echoAD, pol, strings.Replace(policy, "resources: [echoes, echoes/status]", "resources: [\"*\", \"echoes/*\"]", 1)},
			[][]string{{pol, `resources[0]: Invalid value: "*": no wildcards`}, {pol, `resources[1]: Invalid value: "echoes/*": no wildcards`}}},
		{"a policy with a bad subresource", []string{ad, echoAD, pol, strings.Replace(policy, "echoes/status", "echoes/status/x", 1)},
			[][]string{{pol, `resources[1]: Invalid value: "echoes/status/x": a subresource is <plural>/<subresource>`}}},
		{"a policy without resources", []string{ad, echoAD, pol, strings.Replace(policy, "resources: [echoes, echoes/status]", "resources: []", 1)},
			[][]string{{pol, "resourceRules[0].resources: Required value"}}},
		{"an unknown field in a policy", []string{ad, echoAD, pol, strings.Replace(policy, "  matchConstraints:\n", "  matchConstraints: {}\n  x:\n", 1)},
			[][]string{{pol, `unknown field "spec.x"`}}},
		{"a policy matching nothing named", []string{ad, echoAD, pol, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {validations: [{expression: 'true'}]}\n"},
			[][]string{{pol + ", document 1 (ValidatingAdmissionPolicy p): spec.matchConstraints.resourceRules: Required value"}}},
		{"a binding to an unknown policy", []string{ad, echoAD, pol, strings.Replace(policy, "policyName: echo-policy", "policyName: cluster-wide", 1)},
			[][]string{{pol + ", document 2 (ValidatingAdmissionPolicyBinding echo-policy): spec.policyName: Invalid value: \"cluster-wide\": is not a ValidatingAdmissionPolicy of this catalog's definitions ([echo-policy])"}}},
		{"a policy with parameters", []string{ad, echoAD, pol, strings.Replace(policy, "spec:\n  matchConstraints:", "spec:\n  paramKind: {apiVersion: v1, kind: Secret}\n  matchConstraints:", 1)},
			[][]string{{pol + ", document 1 (ValidatingAdmissionPolicy echo-policy): spec.paramKind: Forbidden: a catalog's policy takes no parameter resources"}}},
		{"a binding with parameters", []string{ad, echoAD, pol, strings.Replace(policy, "  policyName: echo-policy\n", "  policyName: echo-policy\n  paramRef: {name: cozystack-values, namespace: cozy-system}\n", 1)},
			[][]string{{pol + ", document 2 (ValidatingAdmissionPolicyBinding echo-policy): spec.paramRef: Forbidden"}}},
		{"a binding without a policy", []string{ad, echoAD, pol, strings.Replace(policy, "  policyName: echo-policy\n", "", 1)},
			[][]string{{pol, "spec.policyName: Required value"}}},
		{"a file without objects", []string{ad, echoAD, pol, "# nothing yet\n"},
			[][]string{{pol + ": holds no object"}}},
		{"every problem at once", []string{ad, strings.Replace(echoAD, "  name: echo\n", "  name: echo\n  namespace: x\n", 1), pol, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"},
			[][]string{{ad, "metadata.namespace"}, {pol, "Secret"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d []artifact.Definition
			if tc.files == nil {
				d = defs(t, ad, readFile(t, filepath.Join(testDefinitions, "echo.yaml")), pol, readFile(t, filepath.Join(testDefinitions, "echo-policy.yml")))
			} else {
				d = defs(t, tc.files...)
			}
			err := artifact.CheckDefinitions(cat, d)
			var lines []string
			if err != nil {
				lines = strings.Split(err.Error(), "\n")
			}
			if len(lines) != len(tc.want) {
				t.Fatalf("CheckDefinitions: %d problems, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, want := range tc.want {
				for _, w := range want {
					if !strings.Contains(lines[i], w) {
						t.Errorf("problem %d %q\ndoes not contain %q", i, lines[i], w)
					}
				}
			}
		})
	}
}

// A catalog that provides no kinds may still ship definitions only if they
// match nothing of another catalog: a policy alone is refused.
func TestCheckDefinitionsWithoutKinds(t *testing.T) {
	cat, err := artifact.LoadCatalog(testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	cat.Provides.ApplicationKinds = nil
	err = artifact.CheckDefinitions(cat, defs(t, "applicationdefinitions/p.yaml", echoPolicy))
	if err == nil || !strings.Contains(err.Error(), "echoes is not the plural of an ApplicationDefinition of this catalog") {
		t.Errorf("CheckDefinitions: %v", err)
	}
	if err := artifact.CheckDefinitions(cat, nil); err != nil {
		t.Errorf("no definitions: %v", err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
