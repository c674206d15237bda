package localcp

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

//go:embed versions.yaml
var versionsYAML []byte

// Component is one upstream Go module from which binaries are built.
type Component struct {
	// Name identifies the component in progress output and build directories.
	Name string `json:"name"`
	// Module is the upstream module path, e.g. k8s.io/kubernetes.
	Module string `json:"module"`
	// Version is the pinned module version.
	Version string `json:"version"`
	// LocalReplaceVersion pins the modules that the upstream go.mod replaces
	// with a path inside its own repository (not present in the module zip).
	LocalReplaceVersion string `json:"localReplaceVersion,omitempty"`
	// KubernetesVersionLDFlags sets the version variables the way
	// hack/lib/version.sh does, so discovery reports Version and not
	// v0.0.0-master.
	KubernetesVersionLDFlags bool `json:"kubernetesVersionLDFlags,omitempty"`
	// Optional components are not part of the default set: Build builds
	// them only when one of their binaries is named (`cozystack-local
	// build oras`), so `make build` and CI do not pay for tools only some
	// targets use (the oras CLI, for `make bench`).
	Optional bool `json:"optional,omitempty"`
	// Binaries maps a binary name to its package path relative to Module
	// ("." for the module root).
	Binaries map[string]string `json:"binaries"`
}

// BinaryNames returns the component's binary names, sorted.
func (c Component) BinaryNames() []string {
	names := make([]string, 0, len(c.Binaries))
	for n := range c.Binaries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Package returns the full import path of a binary's main package.
func (c Component) Package(binary string) string {
	rel := c.Binaries[binary]
	if rel == "." || rel == "" {
		return c.Module
	}
	return c.Module + "/" + strings.TrimPrefix(rel, "./")
}

// CRDSource names CRD manifests inside an upstream module's source tree.
type CRDSource struct {
	Module  string   `json:"module"`
	Version string   `json:"version"`
	Files   []string `json:"files"`
}

// Pins is the content of versions.yaml.
type Pins struct {
	Components []Component `json:"components"`
	CRDs       []CRDSource `json:"crds"`
}

// LoadPins returns the pinned versions embedded from versions.yaml.
func LoadPins() (*Pins, error) {
	return ParsePins(versionsYAML)
}

// ParsePins parses and validates a versions file. Errors name the entry and
// field at fault.
func ParsePins(data []byte) (*Pins, error) {
	var p Pins
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("versions file: %w", err)
	}
	seen := map[string]string{}
	for i, c := range p.Components {
		where := fmt.Sprintf("components[%d]", i)
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("versions file: %s.name is empty", where)
		case c.Module == "":
			return nil, fmt.Errorf("versions file: %s (%s).module is empty", where, c.Name)
		case !strings.HasPrefix(c.Version, "v"):
			return nil, fmt.Errorf("versions file: %s (%s).version %q is not a module version like v1.2.3", where, c.Name, c.Version)
		case len(c.Binaries) == 0:
			return nil, fmt.Errorf("versions file: %s (%s).binaries is empty", where, c.Name)
		}
		for b := range c.Binaries {
			if other, ok := seen[b]; ok {
				return nil, fmt.Errorf("versions file: binary %q is built by both %s and %s", b, other, c.Name)
			}
			seen[b] = c.Name
		}
	}
	for i, s := range p.CRDs {
		if s.Module == "" || !strings.HasPrefix(s.Version, "v") || len(s.Files) == 0 {
			return nil, fmt.Errorf("versions file: crds[%d] needs module, version (v1.2.3) and files", i)
		}
	}
	return &p, nil
}

// ComponentFor returns the component that builds binary, or false.
func (p *Pins) ComponentFor(binary string) (Component, bool) {
	for _, c := range p.Components {
		if _, ok := c.Binaries[binary]; ok {
			return c, true
		}
	}
	return Component{}, false
}

// ComponentNamed returns the component with the given name, or false.
func (p *Pins) ComponentNamed(name string) (Component, bool) {
	for _, c := range p.Components {
		if c.Name == name {
			return c, true
		}
	}
	return Component{}, false
}
