package sdkcompat

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// CRDChange is one difference between a baseline CRD and the current one.
// Kind, Version and Path locate it (Version and Path empty for a
// kind-level change); Path is a JSON path into the object, "[*]" an array
// item and ".*" a map value (additionalProperties).
type CRDChange struct {
	Kind       string `json:"kind"`
	Version    string `json:"version,omitempty"`
	Path       string `json:"path,omitempty"`
	What       string `json:"what"`
	Compatible bool   `json:"compatible"`
}

// String is the change as reports and decision files write it:
// "Plan v1alpha1 .spec.schedule: field removed".
func (c CRDChange) String() string {
	s := c.Kind
	if c.Version != "" {
		s += " " + c.Version
	}
	if c.Path != "" {
		s += " " + c.Path
	}
	return s + ": " + c.What
}

// LoadCRDs reads every *.yaml file of dir (several documents each allowed)
// and returns the CustomResourceDefinitions of group, by kind. Objects of
// other kinds or groups are skipped; a document that does not decode, or
// two definitions of one kind, is an error naming the file.
func LoadCRDs(dir, group string) (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			var meta struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if meta.Kind != "CustomResourceDefinition" {
				continue
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(doc, crd); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if crd.Spec.Group != group {
				continue
			}
			kind := crd.Spec.Names.Kind
			if _, dup := out[kind]; dup {
				return nil, fmt.Errorf("%s: a second definition of %s.%s", f, kind, group)
			}
			out[kind] = crd
		}
	}
	return out, nil
}

// DiffCRDs compares the CRDs of one group, by kind, as LoadCRDs returns
// them. Incompatible: a kind removed; its scope or plural changed; a
// served version removed or no longer served; in each version served by
// both, a field of the baseline's openAPIV3Schema missing now (removed or
// renamed), its type changed (x-kubernetes-int-or-string counts as a
// type), an enum value dropped, a field newly required (a new one
// included). Compatible, and listed: a kind, a served version, an optional
// field added. Changes are sorted by kind, version, path.
func DiffCRDs(old, cur map[string]*apiextensionsv1.CustomResourceDefinition) []CRDChange {
	var out []CRDChange
	for _, kind := range sortedKeys(old) {
		o, n := old[kind], cur[kind]
		if n == nil {
			out = append(out, CRDChange{Kind: kind, What: "kind removed"})
			continue
		}
		if o.Spec.Scope != n.Spec.Scope {
			out = append(out, CRDChange{Kind: kind, What: fmt.Sprintf("scope changed from %s to %s", o.Spec.Scope, n.Spec.Scope)})
		}
		if o.Spec.Names.Plural != n.Spec.Names.Plural {
			out = append(out, CRDChange{Kind: kind, What: fmt.Sprintf("plural changed from %s to %s", o.Spec.Names.Plural, n.Spec.Names.Plural)})
		}
		oldVersions, newVersions := servedVersions(o), servedVersions(n)
		for _, name := range sortedKeys(oldVersions) {
			nv := newVersions[name]
			if nv == nil {
				out = append(out, CRDChange{Kind: kind, Version: name, What: "version removed or no longer served"})
				continue
			}
			out = append(out, diffSchema(kind, name, "", schemaOf(oldVersions[name]), schemaOf(nv))...)
		}
		for _, name := range sortedKeys(newVersions) {
			if oldVersions[name] == nil {
				out = append(out, CRDChange{Kind: kind, Version: name, What: "version added", Compatible: true})
			}
		}
	}
	for _, kind := range sortedKeys(cur) {
		if old[kind] == nil {
			out = append(out, CRDChange{Kind: kind, What: "kind added", Compatible: true})
		}
	}
	return out
}

func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) map[string]*apiextensionsv1.CustomResourceDefinitionVersion {
	out := map[string]*apiextensionsv1.CustomResourceDefinitionVersion{}
	for i := range crd.Spec.Versions {
		if v := &crd.Spec.Versions[i]; v.Served {
			out[v.Name] = v
		}
	}
	return out
}

func schemaOf(v *apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.JSONSchemaProps {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return &apiextensionsv1.JSONSchemaProps{}
	}
	return v.Schema.OpenAPIV3Schema
}

// typeOf is a schema's type as the API server validates it.
func typeOf(s *apiextensionsv1.JSONSchemaProps) string {
	if s.XIntOrString {
		return "int-or-string"
	}
	return s.Type
}

// diffSchema compares the schema at path in both versions, and below it.
func diffSchema(kind, version, path string, o, n *apiextensionsv1.JSONSchemaProps) []CRDChange {
	var out []CRDChange
	change := func(p, what string, compatible bool) {
		if p == "" {
			p = "."
		}
		out = append(out, CRDChange{Kind: kind, Version: version, Path: p, What: what, Compatible: compatible})
	}
	if ot, nt := typeOf(o), typeOf(n); ot != nt {
		change(path, fmt.Sprintf("type changed from %s to %s", orNone(ot), orNone(nt)), false)
		return out // what is below a changed type is not comparable
	}
	if len(o.Enum) > 0 {
		if len(n.Enum) == 0 {
			// No enum now: every value is accepted.
		} else {
			have := map[string]bool{}
			for _, e := range n.Enum {
				have[string(e.Raw)] = true
			}
			for _, e := range o.Enum {
				if !have[string(e.Raw)] {
					change(path, "enum value "+string(e.Raw)+" removed", false)
				}
			}
		}
	}
	for _, name := range slices.Sorted(slices.Values(n.Required)) {
		if slices.Contains(o.Required, name) {
			continue
		}
		if _, existed := o.Properties[name]; existed {
			change(path+"."+name, "field became required", false)
		} else {
			change(path+"."+name, "required field added", false)
		}
	}
	for _, name := range sortedKeys(o.Properties) {
		op := o.Properties[name]
		np, ok := n.Properties[name]
		if !ok {
			change(path+"."+name, "field removed", false)
			continue
		}
		out = append(out, diffSchema(kind, version, path+"."+name, &op, &np)...)
	}
	for _, name := range sortedKeys(n.Properties) {
		if _, ok := o.Properties[name]; !ok && !slices.Contains(n.Required, name) {
			change(path+"."+name, "optional field added", true)
		}
	}
	if o.Items != nil && o.Items.Schema != nil {
		if n.Items == nil || n.Items.Schema == nil {
			change(path+"[*]", "item schema removed", false)
		} else {
			out = append(out, diffSchema(kind, version, path+"[*]", o.Items.Schema, n.Items.Schema)...)
		}
	}
	if o.AdditionalProperties != nil && o.AdditionalProperties.Schema != nil {
		if n.AdditionalProperties == nil || n.AdditionalProperties.Schema == nil {
			if n.AdditionalProperties == nil || !n.AdditionalProperties.Allows {
				change(path+".*", "map value schema removed", false)
			}
		} else {
			out = append(out, diffSchema(kind, version, path+".*", o.AdditionalProperties.Schema, n.AdditionalProperties.Schema)...)
		}
	}
	return out
}

func orNone(t string) string {
	if t == "" {
		return "(none)"
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
