package localcp

import (
	"strings"
	"testing"
)

func TestLoadPinsEmbedded(t *testing.T) {
	p, err := LoadPins()
	if err != nil {
		t.Fatal(err)
	}
	// versions.yaml pins these (docs/contributor/development.md, "Pinned versions"); a change
	// here is a deliberate upgrade.
	want := map[string]string{
		"kube-apiserver":          "k8s.io/kubernetes@v1.37.2",
		"kube-controller-manager": "k8s.io/kubernetes@v1.37.2",
		"kubectl":                 "k8s.io/kubernetes@v1.37.2",
		"helm-controller":         "github.com/fluxcd/helm-controller@v1.4.0",
		"registry":                "github.com/distribution/distribution/v3@v3.1.2",
		"oras":                    "oras.land/oras@v1.3.6",
	}
	for bin, mv := range want {
		c, ok := p.ComponentFor(bin)
		if !ok {
			t.Errorf("no component builds %s", bin)
			continue
		}
		if got := c.Module + "@" + c.Version; got != mv {
			t.Errorf("%s is built from %s, want %s", bin, got, mv)
		}
	}
	etcd, ok := p.ComponentFor("etcd")
	if !ok || etcd.Module != "go.etcd.io/etcd/server/v3" || !strings.HasPrefix(etcd.Version, "v3.6.") {
		t.Errorf("etcd pin = %+v, want go.etcd.io/etcd/server/v3 v3.6.x", etcd)
	}
	if k, _ := p.ComponentNamed("kubernetes"); k.LocalReplaceVersion != "v0.37.2" {
		t.Errorf("kubernetes staging modules pinned to %q, want v0.37.2", k.LocalReplaceVersion)
	}
	// The oras CLI is only the benchmark's reference: `make build` (CI)
	// skips it; everything testenv starts is in the default set.
	for _, c := range p.Components {
		if got, want := c.Optional, c.Name == "oras"; got != want {
			t.Errorf("component %s: optional = %v, want %v", c.Name, got, want)
		}
	}
	if len(p.CRDs) == 0 {
		t.Error("no CRD sources pinned")
	}
}

func TestParsePinsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown field", "components: []\nextra: 1\n", "unknown field"},
		{"no name", "components:\n- module: m\n  version: v1.0.0\n  binaries: {b: .}\n", "components[0].name is empty"},
		{"no module", "components:\n- name: x\n  version: v1.0.0\n  binaries: {b: .}\n", "components[0] (x).module is empty"},
		{"bad version", "components:\n- name: x\n  module: m\n  version: \"1.0\"\n  binaries: {b: .}\n", `version "1.0" is not a module version`},
		{"no binaries", "components:\n- name: x\n  module: m\n  version: v1.0.0\n", "binaries is empty"},
		{"duplicate binary", "components:\n- {name: a, module: m, version: v1.0.0, binaries: {b: .}}\n- {name: c, module: m2, version: v1.0.0, binaries: {b: .}}\n", `binary "b" is built by both a and c`},
		{"bad crd", "crds:\n- module: m\n", "crds[0] needs module, version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePins([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParsePins error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestComponentPackage(t *testing.T) {
	c := Component{Module: "k8s.io/kubernetes", Binaries: map[string]string{"kubectl": "cmd/kubectl", "root": "."}}
	if got := c.Package("kubectl"); got != "k8s.io/kubernetes/cmd/kubectl" {
		t.Errorf("Package(kubectl) = %s", got)
	}
	if got := c.Package("root"); got != "k8s.io/kubernetes" {
		t.Errorf("Package(root) = %s", got)
	}
	if got := c.BinaryNames(); strings.Join(got, ",") != "kubectl,root" {
		t.Errorf("BinaryNames = %v", got)
	}
}
