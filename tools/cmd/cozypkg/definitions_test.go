package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// demoPolicy is a ValidatingAdmissionPolicy on the conformance catalog's
// kind Demo, and its binding.
const demoPolicy = `# The rule the Demo kind adds.
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: demo-replicas.cozystack.io
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: ["apps.cozystack.io"]
        apiVersions: ["v1alpha1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["demos"]
  validations:
    - expression: "!has(object.spec.replicas) || object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: demo-replicas.cozystack.io
spec:
  policyName: demo-replicas.cozystack.io
  validationActions: [Deny]
`

// catalogWithPolicy copies the conformance catalog (whose
// applicationdefinitions/ has the Demo AD) and adds demoPolicy, changed
// by the replacer.
func catalogWithPolicy(t *testing.T, r *strings.Replacer) string {
	t.Helper()
	dir := copyCatalog(t, "", "", "")
	if err := os.WriteFile(filepath.Join(dir, "applicationdefinitions", "demo-policy.yaml"), []byte(r.Replace(demoPolicy)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// build and push list the definitions layers: a progress line per file,
// and in the -o summary each file's path, digest, size and objects
// (testdata/build-definitions.golden.yaml, with what depends on the Go
// toolchain's gzip, the chart archives' digests and sizes, and on the
// temporary directory left out).
func TestBuildShowsDefinitions(t *testing.T) {
	dir := catalogWithPolicy(t, strings.NewReplacer())
	layout := filepath.Join(t.TempDir(), "demo")
	stdout, stderr := mustRun(t, "build", dir, "--oci-layout", layout, "-o", "yaml")
	for _, file := range []string{"applicationdefinitions/demo-policy.yaml", "applicationdefinitions/demo.yaml"} {
		for _, state := range []string{"uploading", "done"} {
			if !regexp.MustCompile(`(?m)^` + state + ` +sha256:[0-9a-f]{12}  definitions ` + regexp.QuoteMeta(file) + ` +[0-9.]+ (B|KiB)$`).MatchString(stderr) {
				t.Errorf("stderr has no %q line for definitions %s:\n%s", state, file, stderr)
			}
		}
	}
	var got result
	if err := yaml.UnmarshalStrict([]byte(stdout), &got); err != nil {
		t.Fatalf("-o yaml printed %q: %v", stdout, err)
	}
	if got.Reference != layout+":0.2.0" {
		t.Errorf("reference %q", got.Reference)
	}
	size := int64(0)
	for _, d := range got.Definitions {
		size += d.Size
	}
	if size == 0 || got.Size <= size {
		t.Errorf("size %d does not count the definitions (%d) and the rest", got.Size, size)
	}
	got.Reference, got.Digest, got.Size = "<layout>:0.2.0", "<digest>", 0
	for i := range got.Charts {
		got.Charts[i].Digest, got.Charts[i].Size = "<digest>", 0
	}
	data, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "build-definitions.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(want) {
		t.Errorf("summary (normalised):\n%s\nwant (%s; go test -run %s -update rewrites it):\n%s", data, golden, t.Name(), want)
	}
}

// A definition the platform would not install stops the build, naming the
// file, the document and the field; nothing is written.
func TestBuildRefusesBadDefinitions(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *strings.Replacer
		want string
	}{
		{"policy matching pods", strings.NewReplacer(`apiGroups: ["apps.cozystack.io"]`, `apiGroups: [""]`, `resources: ["demos"]`, `resources: ["pods"]`),
			`applicationdefinitions/demo-policy.yaml, document 1 (ValidatingAdmissionPolicy demo-replicas.cozystack.io): spec.matchConstraints.resourceRules[0].apiGroups: Invalid value`},
		{"binding to another policy", strings.NewReplacer("policyName: demo-replicas.cozystack.io", "policyName: cluster-wide"),
			`applicationdefinitions/demo-policy.yaml, document 2 (ValidatingAdmissionPolicyBinding demo-replicas.cozystack.io): spec.policyName: Invalid value: "cluster-wide"`},
		{"a Secret", strings.NewReplacer("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding", "apiVersion: v1\nkind: Secret"),
			`applicationdefinitions/demo-policy.yaml, document 2: apiVersion "v1", kind "Secret": the platform installs only`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := catalogWithPolicy(t, tc.r)
			layout := filepath.Join(t.TempDir(), "demo")
			_, _, err := run(t, "", "build", dir, "--oci-layout", layout)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tc.want)
			}
			if _, err := os.Stat(layout); !os.IsNotExist(err) {
				t.Errorf("a refused build wrote %s (%v)", layout, err)
			}
		})
	}
}
