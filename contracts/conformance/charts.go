package conformance

import (
	"slices"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"

	"cozystack.io/contracts/helmtemplate"
)

// loadedChart is one chart of the catalog with what the rules read of it.
type loadedChart struct {
	path  string
	chart *chart.Chart
	// schemaDoc is values.schema.json decoded (nil when absent);
	// schemaErr says why it did not decode.
	schemaDoc any
	schemaErr error
	schemaPos positions
	// chartPos locates paths in Chart.yaml.
	chartPos positions
	// templates are the chart's own templates, parsed.
	templates []*helmtemplate.File
	problems  []Finding
}

// chartSet holds the catalog's charts by chart path.
type chartSet map[string]*loadedChart

func (s chartSet) get(path string) *loadedChart { return s[path] }

// paths returns the chart paths, sorted.
func (s chartSet) paths() []string {
	var out []string
	for p := range s {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func loadCharts(src *Source) chartSet {
	set := chartSet{}
	for p, c := range src.Charts {
		lc := &loadedChart{path: p, chart: c, chartPos: newPositions(rawFile(c, "Chart.yaml"), 0)}
		if data := rawFile(c, "values.schema.json"); len(data) > 0 {
			lc.schemaDoc, lc.schemaErr = decodeJSON(data)
			lc.schemaPos = newPositions(data, 0)
		}
		for _, t := range c.Templates {
			if !strings.HasPrefix(t.Name, "templates/") {
				continue
			}
			file := chartFile(p, t.Name)
			trees, err := parseTemplate(file, string(t.Data))
			if err != nil {
				lc.problems = append(lc.problems, Finding{RuleID: "CAT-chart", Severity: Error, File: file, Message: "template does not parse: " + err.Error(),
					Fix: "fix the template's syntax (helm template shows the same error)"})
				continue
			}
			lc.templates = append(lc.templates, &helmtemplate.File{Name: file, Text: string(t.Data), Trees: trees})
		}
		slices.SortFunc(lc.templates, func(a, b *helmtemplate.File) int { return strings.Compare(a.Name, b.Name) })
		set[p] = lc
	}
	return set
}

// parseTemplate parses a Helm template without knowing its functions.
func parseTemplate(name, text string) (map[string]*parse.Tree, error) {
	f, err := helmtemplate.Parse(name, text, nil)
	if err != nil {
		return nil, err
	}
	return f.Trees, nil
}

// dependencyKeys returns the values keys of the chart's dependencies:
// each one's alias, else its name.
func (c *loadedChart) dependencyKeys() []string {
	var keys []string
	for _, d := range c.chart.Metadata.Dependencies {
		k := d.Name
		if d.Alias != "" {
			k = d.Alias
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func (c *loadedChart) schemaFile() string { return chartFile(c.path, "values.schema.json") }
func (c *loadedChart) chartYAML() string  { return chartFile(c.path, "Chart.yaml") }
