package conformance

// The rendering of K4-application-rights (k4rights.go): an application
// chart as Helm would install it, with its defaults and the K2 values of
// exampleK2.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// exampleK2 returns _cluster and _namespace as cozystack-controller
// projects them into a tenant namespace from a ClusterValues holding its
// required fields and defaults (valid under k2-cluster-values.schema.json;
// a test checks it). Each call returns a fresh copy.
func exampleK2() map[string]any {
	return map[string]any{
		"_cluster": map[string]any{
			"root-host":                          "example.org",
			"api-server-endpoint":                "https://api.example.org:6443",
			"cluster-domain":                     "cozy.local",
			"expose-ingress":                     "tenant-root",
			"issuer-name":                        "letsencrypt-prod",
			"clusterissuer":                      "http01",
			"oidc-enabled":                       "false",
			"gateway-api":                        "false",
			"gateway-class-name":                 "cilium",
			"cpu-allocation-ratio":               "10",
			"memory-allocation-ratio":            "1",
			"ephemeral-storage-allocation-ratio": "40",
		},
		"_namespace": map[string]any{"host": "example.example.org"},
	}
}

// renderedObject is one object a chart renders.
type renderedObject struct {
	// file is the template that rendered it, or the CRD file, relative to
	// the catalog.
	file string
	obj  map[string]any
}

func (o renderedObject) meta() (gvk schema.GroupVersionKind, name, namespace string) {
	apiVersion, _ := o.obj["apiVersion"].(string)
	kind, _ := o.obj["kind"].(string)
	md, _ := o.obj["metadata"].(map[string]any)
	name, _ = md["name"].(string)
	namespace, _ = md["namespace"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind), name, namespace
}

// renderChart renders a copy of c's chart as release name in
// rightsNamespace with its defaults and exampleK2, as Helm installs it
// (dependencies, values schema, engine), and returns the objects of its
// crds/ then of its manifests, in file order (Helm's partials and
// NOTES.txt left out).
func renderChart(c *loadedChart, name string) ([]renderedObject, error) {
	ch := copyChart(c.chart)
	vals := exampleK2()
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return nil, err
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: name, Namespace: rightsNamespace, Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	manifests, err := engine.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	var out []renderedObject
	for _, f := range ch.CRDObjects() {
		docs, err := decodeDocuments(f.File.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Filename, err)
		}
		for _, d := range docs {
			out = append(out, renderedObject{file: chartFile(c.path, strings.TrimPrefix(f.Filename, ch.Name()+"/")), obj: d.Object})
		}
	}
	for _, key := range slices.Sorted(maps.Keys(manifests)) {
		base := key[strings.LastIndex(key, "/")+1:]
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" || strings.TrimSpace(manifests[key]) == "" {
			continue
		}
		docs, err := decodeDocuments([]byte(manifests[key]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		// key is "<chart name>/templates/x.yaml" or, for a dependency,
		// "<chart name>/charts/<dep>/templates/x.yaml".
		file := chartFile(c.path, strings.TrimPrefix(key, ch.Name()+"/"))
		for _, d := range docs {
			out = append(out, renderedObject{file: file, obj: d.Object})
		}
	}
	return out, nil
}

// decodedDocument is one non-empty YAML document.
type decodedDocument struct{ Object map[string]any }

func (d decodedDocument) GetKind() string { s, _ := d.Object["kind"].(string); return s }

func (d decodedDocument) GetAPIVersion() string { s, _ := d.Object["apiVersion"].(string); return s }

// decodeDocuments decodes the non-empty documents of a multi-document
// YAML text.
func decodeDocuments(data []byte) ([]decodedDocument, error) {
	dec := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []decodedDocument
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return out, err
		}
		if len(m) > 0 {
			out = append(out, decodedDocument{Object: m})
		}
	}
}

// copyChart returns a copy of c that rendering may change: metadata,
// dependencies and values are copied, files are shared (read only).
func copyChart(c *chart.Chart) *chart.Chart {
	out := *c
	if c.Metadata != nil {
		md := *c.Metadata
		md.Dependencies = make([]*chart.Dependency, len(c.Metadata.Dependencies))
		for i, d := range c.Metadata.Dependencies {
			dd := *d
			md.Dependencies[i] = &dd
		}
		out.Metadata = &md
	}
	out.Values, _ = copyValue(c.Values).(map[string]any)
	deps := make([]*chart.Chart, 0, len(c.Dependencies()))
	for _, d := range c.Dependencies() {
		deps = append(deps, copyChart(d))
	}
	out.SetDependencies(deps...)
	return &out
}

// copyValue deep-copies the maps and lists of a decoded YAML value.
func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
