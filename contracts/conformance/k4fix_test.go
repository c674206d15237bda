package conformance_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/conformance"
)

// fixCase is one K4 rule's failure and the way out its fix text names:
// broken seeds the failure into the base catalog (with previous, the
// catalog's previous version, for the rules across versions), follow
// applies the fix text of the finding to the catalog directory, and the
// rule must then pass.
type fixCase struct {
	rule   string
	broken func(t *testing.T) (dir string, prev string)
	// fixSays is text the fix must hold: what follow does.
	fixSays string
	follow  func(t *testing.T, dir string, f conformance.Finding)
}

const schemaFile = "charts/demo/values.schema.json"

// editSchema decodes the demo chart's values schema in dir, lets fn
// change it and writes it back.
func editSchema(t *testing.T, dir string, fn func(root map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(schemaFile))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	fn(root)
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// at returns the subschema a finding's JSON pointer ("#/properties/x")
// names.
func at(t *testing.T, root map[string]any, ptr string) map[string]any {
	t.Helper()
	node := root
	for _, seg := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(ptr, "#"), "/"), "/") {
		if seg == "" {
			continue
		}
		next, ok := node[seg].(map[string]any)
		if !ok {
			t.Fatalf("%s: no object at %s", ptr, seg)
		}
		node = next
	}
	return node
}

// quotedKeyValue matches `"key": {json}` in a fix text.
var quotedKeyValue = regexp.MustCompile(`"([^"]+)": (\{.*\})`)

// keyValue returns the key and JSON value a fix text says to add or set.
func keyValue(t *testing.T, fix string) (string, any) {
	t.Helper()
	m := quotedKeyValue.FindStringSubmatch(fix)
	if m == nil {
		t.Fatalf("fix %q names no \"key\": {value}", fix)
	}
	// The value ends where its braces balance.
	depth, end := 0, 0
	for i, r := range m[2] {
		if r == '{' {
			depth++
		} else if r == '}' {
			depth--
			if depth == 0 {
				end = i + 1
				break
			}
		}
	}
	var v any
	if err := json.Unmarshal([]byte(m[2][:end]), &v); err != nil {
		t.Fatalf("fix %q: the value of %s is not JSON: %v", fix, m[1], err)
	}
	return m[1], v
}

// flowRule matches the rule a K4-application-rights fix says to add.
var flowRule = regexp.MustCompile(`add (\{apiGroups: .*\}) to applications\[(\d+)\]\.rules in catalog\.yaml`)

// addRule follows "add {rule} to applications[i].rules in catalog.yaml".
func addRule(t *testing.T, dir string, f conformance.Finding) {
	t.Helper()
	m := flowRule.FindStringSubmatch(f.Fix)
	if m == nil {
		t.Fatalf("fix %q names no rule to add", f.Fix)
	}
	var rule map[string]any
	if err := yaml.Unmarshal([]byte(m[1]), &rule); err != nil {
		t.Fatalf("the rule of fix %q does not decode: %v", f.Fix, err)
	}
	applyEdits(t, dir, []edit{{File: "catalog.yaml", Replace: "\n    rules:\n", With: "\n    rules:\n      - " + m[1] + "\n"}})
}

func deploymentChart(rules string) []edit {
	return []edit{{File: "catalog.yaml", Replace: "\n    rules:\n", With: "\n    rules:\n" + rules}}
}

const deploymentTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 0
  selector: {matchLabels: {app: demo}}
  template:
    metadata: {labels: {app: demo}}
    spec: {containers: [{name: demo, image: "nginx:1.27"}]}
`

// previousWith returns the base catalog as version 0.1.0 with edits.
func previousWith(t *testing.T, edits ...edit) string {
	return seed(t, append([]edit{{File: "catalog.yaml", Replace: "version: 0.2.0", With: "version: 0.1.0"}}, edits...), nil, nil)
}

var k4FixCases = []fixCase{
	{rule: "K4-schema-missing", fixSays: "add a values.schema.json whose objects reject unknown keys",
		broken: func(t *testing.T) (string, string) { return seed(t, nil, nil, []string{schemaFile}), "" },
		follow: func(t *testing.T, dir string, _ conformance.Finding) {
			data, err := os.ReadFile(filepath.Join(baseCatalog, schemaFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, schemaFile), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	{rule: "K4-root", fixSays: `set "type": "object" and "additionalProperties": false at the root`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Replace: "  \"additionalProperties\": false,\n  \"properties\"", With: "  \"additionalProperties\": true,\n  \"properties\""}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, _ conformance.Finding) {
			editSchema(t, dir, func(root map[string]any) { root["type"], root["additionalProperties"] = "object", false })
		}},
	{rule: "K4-root", fixSays: "remove patternProperties and x-kubernetes-preserve-unknown-fields from the root",
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Replace: "  \"additionalProperties\": false,\n  \"properties\"", With: "  \"additionalProperties\": false,\n  \"patternProperties\": {\"^x-\": {\"type\": \"string\", \"maxLength\": 8}},\n  \"properties\""}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, _ conformance.Finding) {
			editSchema(t, dir, func(root map[string]any) {
				delete(root, "patternProperties")
				delete(root, "x-kubernetes-preserve-unknown-fields")
			})
		}},
	{rule: "K4-unbounded", fixSays: `add "maxItems"`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Replace: "\"users\": {\n", With: "\"zones\": {\"description\": \"Zones.\", \"type\": \"array\", \"items\": {\"type\": \"string\", \"maxLength\": 63}, \"default\": []},\n    \"users\": {\n"}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, f conformance.Finding) {
			editSchema(t, dir, func(root map[string]any) { at(t, root, f.Path)["maxItems"] = 16 })
		}},
	{rule: "K4-open-object", fixSays: `set "additionalProperties": false`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Replace: "        \"additionalProperties\": false,\n        \"properties\": {\n          \"password\"", With: "        \"properties\": {\n          \"password\""}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, f conformance.Finding) {
			editSchema(t, dir, func(root map[string]any) { at(t, root, f.Path)["additionalProperties"] = false })
		}},
	{rule: "K4-platform-keys", fixSays: `set "_cluster": {"type": "object"}`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Replace: `"_cluster": {"description": "Cluster values (K2).", "type": "object"}`, With: `"_cluster": {"type": "object", "additionalProperties": false, "properties": {"root-host": {"type": "string"}}}`}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, f conformance.Finding) {
			k, v := keyValue(t, f.Fix)
			editSchema(t, dir, func(root map[string]any) { root["properties"].(map[string]any)[k] = v })
		}},
	{rule: "K4-platform-keys", fixSays: `add "_namespace": {"type": "object"} to the root's properties`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Replace: "    \"_namespace\": {\"description\": \"Tenant values (K2).\", \"type\": \"object\"},\n", With: ""}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, f conformance.Finding) {
			k, v := keyValue(t, f.Fix)
			editSchema(t, dir, func(root map[string]any) { root["properties"].(map[string]any)[k] = v })
		}},
	{rule: "K4-dependency-key", fixSays: `add "cozy-lib": {`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Regexp: true, Replace: `,\n    "cozy-lib": \{(?s:.*)\n    \}\n`, With: "\n"}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, f conformance.Finding) {
			k, v := keyValue(t, f.Fix)
			editSchema(t, dir, func(root map[string]any) { root["properties"].(map[string]any)[k] = v })
		}},
	{rule: "K4-unbounded", fixSays: `add "maxLength"`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Replace: `"default": "1Gi", "maxLength": 64`, With: `"default": "1Gi"`}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, f conformance.Finding) {
			editSchema(t, dir, func(root map[string]any) { at(t, root, f.Path)["maxLength"] = 64 })
		}},
	{rule: "K4-unbounded", fixSays: `add "maxProperties"`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Replace: `"default": {}, "maxProperties": 16`, With: `"default": {}`}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, f conformance.Finding) {
			editSchema(t, dir, func(root map[string]any) { at(t, root, f.Path)["maxProperties"] = 32 })
		}},
	{rule: "K4-unbounded", fixSays: `add "propertyNames": {"maxLength": 63}`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: schemaFile, Replace: `, "propertyNames": {"maxLength": 63}`, With: ""}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, f conformance.Finding) {
			k, v := keyValue(t, f.Fix)
			editSchema(t, dir, func(root map[string]any) { at(t, root, f.Path)[k] = v })
		}},
	{rule: "K4-unquoted-string", fixSays: "print it through quote",
		broken: func(t *testing.T) (string, string) {
			return seed(t, []edit{{File: "charts/demo/templates/configmap.yaml", Replace: "size: {{ .Values.size | quote }}", With: "size: {{ .Values.size }}"}}, nil, nil), ""
		},
		follow: func(t *testing.T, dir string, _ conformance.Finding) {
			applyEdits(t, dir, []edit{{File: "charts/demo/templates/configmap.yaml", Replace: "size: {{ .Values.size }}", With: "size: {{ .Values.size | quote }}"}})
		}},
	{rule: "K4-application-rights", fixSays: "add {apiGroups: [\"\"], resources: [secrets], verbs: [get, list, watch, create, update, patch, delete]} to applications[0].rules in catalog.yaml",
		broken: func(t *testing.T) (string, string) {
			return seed(t, nil, map[string]string{"charts/demo/templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-credentials\n"}, nil), ""
		},
		follow: addRule},
	// Helm's readiness wait lists a Deployment's ReplicaSets as the
	// installer: the rule for Deployments alone installs nothing.
	{rule: "K4-application-rights", fixSays: "add {apiGroups: [apps], resources: [replicasets], verbs: [get, list, watch]} to applications[0].rules in catalog.yaml",
		broken: func(t *testing.T) (string, string) {
			return seed(t, deploymentChart("      - {apiGroups: [apps], resources: [deployments], verbs: [get, list, watch, create, update, patch, delete]}\n"),
				map[string]string{"charts/demo/templates/deployment.yaml": deploymentTemplate}, nil), ""
		},
		follow: addRule},
	{rule: "K4-application-rights", fixSays: "leave metadata.namespace out",
		broken: func(t *testing.T) (string, string) {
			return seed(t, nil, map[string]string{"charts/demo/templates/shared.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-shared\n  namespace: kube-system\n"}, nil), ""
		},
		follow: func(t *testing.T, dir string, _ conformance.Finding) {
			applyEdits(t, dir, []edit{{File: "charts/demo/templates/shared.yaml", Replace: "  namespace: kube-system\n", With: ""}})
		}},
	{rule: "K4-application-rights", fixSays: "remove it from the application chart",
		broken: func(t *testing.T) (string, string) {
			return seed(t, nil, map[string]string{"charts/demo/templates/clusterrole.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {{ .Release.Name }}-reader\nrules: []\n"}, nil), ""
		},
		follow: func(t *testing.T, dir string, f conformance.Finding) {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f.File))); err != nil {
				t.Fatal(err)
			}
		}},
	// The retirement path of k4-values.md: the previous version (0.1.0)
	// has external; the fix keeps it deprecated for one version (0.2.0,
	// checked against 0.1.0), then removes it (0.3.0, checked against
	// 0.2.0).
	{rule: "K4-key-removed", fixSays: `keep external with "deprecated": true for one version (the API warns on its use), then remove it in the next`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, nil, nil, nil), previousWith(t, edit{File: schemaFile, Replace: "\"users\": {\n", With: "\"external\": {\"description\": \"Publish outside the cluster.\", \"type\": \"boolean\", \"default\": false},\n    \"users\": {\n"})
		},
		follow: nil},
	{rule: "K4-key-renamed", fixSays: `keep pass with "deprecated": true beside password for one version (the chart maps it to password), then remove it in the next`,
		broken: func(t *testing.T) (string, string) {
			return seed(t, nil, nil, nil), previousWith(t, edit{File: schemaFile,
				Replace: "\"password\": {\"description\": \"The password; empty means generated.\", \"type\": \"string\", \"maxLength\": 128}",
				With:    "\"pass\": {\"description\": \"The password.\", \"type\": \"string\", \"maxLength\": 128}"})
		},
		follow: nil},
}

// findingsOf returns the findings of rule in the report.
func findingsOf(r *conformance.Report, rule string) []conformance.Finding {
	var out []conformance.Finding
	for _, f := range r.Findings {
		if f.RuleID == rule {
			out = append(out, f)
		}
	}
	return out
}

func checkAgainst(t *testing.T, dir, prev string) *conformance.Report {
	t.Helper()
	opts := conformance.Options{PlatformVersion: "0.1.0"}
	if prev != "" {
		p, err := conformance.LoadDir(prev)
		if err != nil {
			t.Fatal(err)
		}
		opts.Previous = p
	}
	r, err := conformance.CheckDir(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every K4 rule's fix text is a way out the suite accepts: for each rule
// (conformance.Rules), a catalog that breaks it is checked, the fix its
// finding names is followed as written, and the rule passes on the
// re-run. The rules across versions follow the retirement path of
// k4-values.md over three versions.
func TestK4FixTextsPass(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range k4FixCases {
		covered[c.rule] = true
		t.Run(c.rule+"/"+c.fixSays, func(t *testing.T) {
			dir, prev := c.broken(t)
			fs := findingsOf(checkAgainst(t, dir, prev), c.rule)
			if len(fs) != 1 {
				t.Fatalf("%d findings of %s, want 1: %v", len(fs), c.rule, fs)
			}
			f := fs[0]
			if !strings.Contains(f.Fix, c.fixSays) {
				t.Fatalf("fix %q does not say %q", f.Fix, c.fixSays)
			}
			t.Logf("%s", f)
			if c.follow != nil {
				c.follow(t, dir, f)
				if fs := findingsOf(checkAgainst(t, dir, prev), c.rule); len(fs) > 0 {
					t.Fatalf("after following the fix, %s still fails: %v", c.rule, fs)
				}
				return
			}
			followRetirement(t, dir, prev, c.rule)
		})
	}
	for _, r := range conformance.Rules {
		if r.Contract == "K4" && !covered[r.ID] {
			t.Errorf("rule %s has no case in k4FixCases", r.ID)
		}
	}
}

// followRetirement follows the retirement path from the previous version
// prev (0.1.0) to the current dir (0.2.0, the key gone): 0.2.0 keeps the
// old key of prev with "deprecated": true and passes against prev; 0.3.0
// (dir as it was) passes against that 0.2.0.
func followRetirement(t *testing.T, dir, prev, rule string) {
	t.Helper()
	deprecated := copyTree(t, prev)
	applyEdits(t, deprecated, []edit{{File: "catalog.yaml", Replace: "version: 0.1.0", With: "version: 0.2.0"}})
	editSchema(t, deprecated, func(root map[string]any) {
		marked := 0
		for _, node := range []map[string]any{root["properties"].(map[string]any),
			at(t, root, "#/properties/users/additionalProperties/properties")} {
			for _, k := range []string{"external", "pass"} {
				if s, ok := node[k].(map[string]any); ok {
					s["deprecated"] = true
					marked++
				}
			}
		}
		if marked != 1 {
			t.Fatalf("marked %d keys deprecated, want 1", marked)
		}
		if _, ok := at(t, root, "#/properties/users/additionalProperties/properties")["pass"]; ok {
			// The rename: the new key beside the old one.
			at(t, root, "#/properties/users/additionalProperties/properties")["password"] = map[string]any{
				"description": "The password; empty means generated.", "type": "string", "maxLength": 128}
		}
	})
	if fs := findingsOf(checkAgainst(t, deprecated, prev), rule); len(fs) > 0 {
		t.Fatalf("the version that deprecates the key fails %s: %v", rule, fs)
	}
	applyEdits(t, dir, []edit{{File: "catalog.yaml", Replace: "version: 0.2.0", With: "version: 0.3.0"}})
	if fs := findingsOf(checkAgainst(t, dir, deprecated), rule); len(fs) > 0 {
		t.Fatalf("the version that removes the deprecated key fails %s: %v", rule, fs)
	}
}
