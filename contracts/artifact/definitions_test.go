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
		name   string
		reason string
		files  []string
		// want are the problems, each a list of substrings of one error
		// line; none means valid.
		want [][]string
	}{
		{
			name:   "the test definitions",
			reason: "the test catalog's own definitions (an AD and a policy with its binding) are valid",
			files:  nil,
			want:   nil,
		},
		{
			name:   "an AD alone",
			reason: "an AD alone is valid: a policy is optional",
			files:  []string{ad, echoAD},
			want:   nil,
		},
		{
			name:   "an AD and its policy in one file",
			reason: "one file may hold several documents",
			files:  []string{ad, echoAD + "---\n" + policy},
			want:   nil,
		},
		{
			name:   "no definitions at all",
			reason: "no definitions at all (an artifact made before they existed) is valid",
			files:  []string{},
			want:   nil,
		},
		{
			name:   "another kind",
			reason: "only ADs, ValidatingAdmissionPolicies and their bindings are installed; the error lists them",
			files:  []string{ad, echoAD, pol, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"},
			want:   [][]string{{pol + ", document 1: ", `apiVersion "v1", kind "ConfigMap"`, "installs only cozystack.io/v1alpha1 ApplicationDefinition, admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding"}},
		},
		{
			name:   "another version of the AD kind",
			reason: "only cozystack.io/v1alpha1 is the AD kind; another version counts as no AD",
			files:  []string{ad, strings.Replace(echoAD, "v1alpha1", "v1beta1", 1)},
			want:   [][]string{{ad, `apiVersion "cozystack.io/v1beta1", kind "ApplicationDefinition"`}, {"catalog.yaml: provides.applicationKinds[0]: kind Echo has no ApplicationDefinition"}},
		},
		{
			name:   "an AD of a kind the catalog does not provide",
			reason: "an AD serves only a kind in provides.applicationKinds",
			files:  []string{ad, echoAD, "applicationdefinitions/other.yaml", strings.NewReplacer("name: echo", "name: other", "kind: Echo", "kind: Other", "echoes", "others").Replace(echoAD)},
			want:   [][]string{{"applicationdefinitions/other.yaml, document 1 (ApplicationDefinition other): spec.application.kind: Invalid value: \"Other\": is not in catalog.yaml provides.applicationKinds [Echo]"}},
		},
		{
			name:   "two ADs of one kind",
			reason: "one kind is served by one AD; the error names the other",
			files:  []string{ad, echoAD, "applicationdefinitions/again.yaml", strings.Replace(echoAD, "name: echo", "name: echo2", 1)},
			want:   [][]string{{"applicationdefinitions/again.yaml, document 1 (ApplicationDefinition echo2): spec.application.kind: Invalid value: \"Echo\": is also served by the ApplicationDefinition in " + ad + ", document 1"}},
		},
		{
			name:   "two ADs of one name",
			reason: "AD names are unique; the error names the other document",
			files:  []string{ad, echoAD + "---\n" + echoAD},
			want:   [][]string{{ad + ", document 2 (ApplicationDefinition echo): metadata.name: Invalid value: \"echo\": is also the name of the ApplicationDefinition in " + ad + ", document 1"}, {ad + ", document 2", "spec.application.kind: Invalid value"}},
		},
		{
			name:   "a provided kind without an AD",
			reason: "every provided kind has an AD, and a policy matches only ADs' plurals",
			files:  []string{pol, strings.Replace(policy, "resources: [echoes, echoes/status]", "resources: [echoes]", 1)},
			want:   [][]string{{"catalog.yaml: provides.applicationKinds[0]: kind Echo has no ApplicationDefinition in applicationdefinitions/"}, {pol, "resources[0]: Invalid value: \"echoes\": echoes is not the plural of an ApplicationDefinition of this catalog ([])"}},
		},
		{
			name:   "an AD naming another catalog's chart",
			reason: "an AD installs only the catalog's own charts, and the error gives the source to set",
			files:  []string{ad, strings.Replace(echoAD, "source: demo", "source: services", 1)},
			want:   [][]string{{ad + ", document 1 (ApplicationDefinition echo): spec.release.source: Invalid value: \"services\": a catalog's ApplicationDefinition installs only the catalog's own charts: set source: demo"}},
		},
		{
			name:   "an AD naming a component's chart",
			reason: "an AD installs an application chart, not a component's",
			files:  []string{ad, strings.Replace(echoAD, "component: echo-tenant", "component: echo-operator", 1)},
			want:   [][]string{{ad + ", document 1 (ApplicationDefinition echo): spec.release.component: Unsupported value: \"echo-operator\": supported values: \"echo-tenant\""}},
		},
		{
			name:   "an AD naming its chart by chartRef",
			reason: "an AD names its chart by source and component, never by chartRef, which could point anywhere",
			files:  []string{ad, strings.Replace(echoAD, "source: demo, component: echo-tenant", "chartRef: {kind: HelmChart, name: x, namespace: flux-system}", 1)},
			want:   [][]string{{ad, "spec.release.chartRef: Forbidden: a catalog's ApplicationDefinition names its chart by source and component, never by chartRef"}, {ad, "spec.release.source: Invalid value: \"\""}, {ad, "spec.release.component: Unsupported value: \"\""}},
		},
		{
			name:   "an AD whose short names shadow built-in ones",
			reason: "an application's short names may not shadow built-in resources' names",
			files:  []string{ad, strings.Replace(echoAD, "plural: echoes}", "plural: echoes, shortNames: [ec, cm, po]}", 1)},
			want: [][]string{{ad + ", document 1 (ApplicationDefinition echo): spec.application.shortNames[1]: Forbidden: \"cm\" is a name of the built-in resource configmaps: an application's names may not shadow"},
				{ad, "spec.application.shortNames[2]: Forbidden: \"po\" is a name of the built-in resource pods"}},
		},
		{
			name:   "an AD whose plural and singular are built-in names",
			reason: "plural and singular may not shadow built-in names either",
			files:  []string{ad, strings.Replace(echoAD, "singular: echo, plural: echoes}", "singular: secret, plural: svc}", 1), pol, strings.ReplaceAll(policy, "echoes", "svc")},
			want: [][]string{{ad, "spec.application.plural: Forbidden: \"svc\" is a name of the built-in resource services"},
				{ad, "spec.application.singular: Forbidden: \"secret\" is a name of the built-in resource secrets"}},
		},
		{
			name:   "an unknown field in an AD's spec",
			reason: "an AD is decoded strictly: a misspelt spec field is refused",
			files:  []string{ad, strings.Replace(echoAD, "  release:", "  relase: {}\n  release:", 1)},
			want:   [][]string{{ad + ", document 1 (ApplicationDefinition echo): ", `unknown field "spec.relase"`}},
		},
		{
			name:   "a wrong type in an AD",
			reason: "a field of the wrong type is refused with its path",
			files:  []string{ad, strings.Replace(echoAD, "kind: Echo,", "kind: 5,", 1)},
			want:   [][]string{{ad, "does not decode as kind ApplicationDefinition", "spec.application.kind"}},
		},
		{
			name:   "a namespaced AD",
			reason: "ADs are cluster-scoped: a namespace is refused, and the error says to remove it",
			files:  []string{ad, strings.Replace(echoAD, "  name: echo\n", "  name: echo\n  namespace: default\n", 1)},
			want:   [][]string{{ad + ", document 1 (ApplicationDefinition echo): metadata.namespace: Forbidden: the object is cluster-scoped: remove namespace default"}},
		},
		{
			name:   "a namespaced binding",
			reason: "bindings are cluster-scoped too",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "  name: echo-policy\nspec:\n  policyName", "  name: echo-policy\n  namespace: x\nspec:\n  policyName", 1)},
			want:   [][]string{{pol + ", document 2 (ValidatingAdmissionPolicyBinding echo-policy): metadata.namespace: Forbidden"}},
		},
		{
			name:   "an unnamed object",
			reason: "an object is named: generateName is not enough",
			files:  []string{ad, strings.Replace(echoAD, "  name: echo\n", "  generateName: echo-\n", 1)},
			want:   [][]string{{ad + ", document 1 (ApplicationDefinition ): metadata.name: Required value"}},
		},
		{
			name:   "a name that is no DNS subdomain",
			reason: "a name is a DNS subdomain",
			files:  []string{ad, strings.Replace(echoAD, "  name: echo\n", "  name: Echo_1\n", 1)},
			want:   [][]string{{ad, `metadata.name: Invalid value: "Echo_1"`}},
		},
		{
			name:   "a policy matching pods",
			reason: "a policy matches exactly apps.cozystack.io, so never core objects like pods",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "- apiGroups: [apps.cozystack.io]", "- apiGroups: [\"\"]", 1)},
			want:   [][]string{{pol + ", document 1 (ValidatingAdmissionPolicy echo-policy): spec.matchConstraints.resourceRules[0].apiGroups: Invalid value", "must be exactly [apps.cozystack.io]"}},
		},
		{
			name:   "a policy matching pods in the apps group",
			reason: "in apps.cozystack.io a policy matches only the catalog's own plurals",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "resources: [echoes, echoes/status]", "resources: [echoes, pods]", 1)},
			want:   [][]string{{pol, `spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: "pods": pods is not the plural of an ApplicationDefinition of this catalog ([echoes])`}},
		},
		{
			name:   "a policy with a wildcard group",
			reason: "a wildcard group would match every group",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "- apiGroups: [apps.cozystack.io]", "- apiGroups: [\"*\"]", 1)},
			want:   [][]string{{pol, "resourceRules[0].apiGroups"}},
		},
		{
			name:   "a policy with a second group",
			reason: "a second group would match another group's objects",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "- apiGroups: [apps.cozystack.io]", "- apiGroups: [apps.cozystack.io, apps]", 1)},
			want:   [][]string{{pol, "resourceRules[0].apiGroups"}},
		},
		{
			name:   "a policy with wildcard resources",
			reason: "wildcard resources are refused, also as a subresource",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "resources: [echoes, echoes/status]", "resources: [\"*\", \"echoes/*\"]", 1)},
			want:   [][]string{{pol, `resources[0]: Invalid value: "*": no wildcards`}, {pol, `resources[1]: Invalid value: "echoes/*": no wildcards`}},
		},
		{
			name:   "a policy with a bad subresource",
			reason: "a subresource is <plural>/<subresource>, one level",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "echoes/status", "echoes/status/x", 1)},
			want:   [][]string{{pol, `resources[1]: Invalid value: "echoes/status/x": a subresource is <plural>/<subresource>`}},
		},
		{
			name:   "a policy without resources",
			reason: "a policy names the resources it matches",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "resources: [echoes, echoes/status]", "resources: []", 1)},
			want:   [][]string{{pol, "resourceRules[0].resources: Required value"}},
		},
		{
			name:   "an unknown field in a policy",
			reason: "a policy is decoded strictly too",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "  matchConstraints:\n", "  matchConstraints: {}\n  x:\n", 1)},
			want:   [][]string{{pol, `unknown field "spec.x"`}},
		},
		{
			name:   "a policy matching nothing named",
			reason: "a policy matches something named: without resourceRules it would match everything",
			files:  []string{ad, echoAD, pol, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {validations: [{expression: 'true'}]}\n"},
			want:   [][]string{{pol + ", document 1 (ValidatingAdmissionPolicy p): spec.matchConstraints.resourceRules: Required value"}},
		},
		{
			name:   "a binding to an unknown policy",
			reason: "a binding binds a policy of the catalog's definitions, never a cluster-wide one",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "policyName: echo-policy", "policyName: cluster-wide", 1)},
			want:   [][]string{{pol + ", document 2 (ValidatingAdmissionPolicyBinding echo-policy): spec.policyName: Invalid value: \"cluster-wide\": is not a ValidatingAdmissionPolicy of this catalog's definitions ([echo-policy])"}},
		},
		{
			name:   "a policy with parameters",
			reason: "a policy takes no parameters: the API server would read them with its own rights",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "spec:\n  matchConstraints:", "spec:\n  paramKind: {apiVersion: v1, kind: Secret}\n  matchConstraints:", 1)},
			want:   [][]string{{pol + ", document 1 (ValidatingAdmissionPolicy echo-policy): spec.paramKind: Forbidden: a catalog's policy takes no parameter resources"}},
		},
		{
			name:   "a binding with parameters",
			reason: "a binding takes no parameters either",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "  policyName: echo-policy\n", "  policyName: echo-policy\n  paramRef: {name: cozystack-values, namespace: cozy-system}\n", 1)},
			want:   [][]string{{pol + ", document 2 (ValidatingAdmissionPolicyBinding echo-policy): spec.paramRef: Forbidden"}},
		},
		{
			name:   "a binding without a policy",
			reason: "a binding names its policy",
			files:  []string{ad, echoAD, pol, strings.Replace(policy, "  policyName: echo-policy\n", "", 1)},
			want:   [][]string{{pol, "spec.policyName: Required value"}},
		},
		{
			name:   "a file without objects",
			reason: "a file holds at least one object",
			files:  []string{ad, echoAD, pol, "# nothing yet\n"},
			want:   [][]string{{pol + ": holds no object"}},
		},
		{
			name:   "every problem at once",
			reason: "every problem is reported at once, in file order",
			files:  []string{ad, strings.Replace(echoAD, "  name: echo\n", "  name: echo\n  namespace: x\n", 1), pol, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"},
			want:   [][]string{{ad, "metadata.namespace"}, {pol, "Secret"}},
		},
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
				t.Fatalf("%s: CheckDefinitions: %d problems, want %d (%s):\n%v", tc.name, len(lines), len(tc.want), tc.reason, err)
			}
			for i, want := range tc.want {
				for _, w := range want {
					if !strings.Contains(lines[i], w) {
						t.Errorf("%s: problem %d %q\ndoes not contain %q (%s)", tc.name, i, lines[i], w, tc.reason)
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
