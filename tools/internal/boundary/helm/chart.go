package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// chart is one Helm chart: a directory holding Chart.yaml, or a .tgz in a
// chart's charts/ directory (a vendored dependency).
//
// The same files can be reached by several paths (symbolic links, or a
// linked archive): each path gets its own chart, so that it can be the
// subchart of its own parent, and all but one are dups, whose files are not
// scanned for edges again.
type chart struct {
	dir       string // logical slash path relative to the root, as the walk reached it ("" for the root); for an archive, its label
	real      string // where its files lie: slash path relative to the real root (links resolved); for an archive, its label
	chartFile string // Chart.yaml's path as reported in edges
	name      string
	module    string // the module its files lie in (by real)
	owner     string // the module that owns its content: module, or the owner of a chart it is a vendored copy of
	parent    *chart
	subs      []*chart
	archive   bool
	link      *dependency // for a subchart reached through a symbolic link below its parent: the link, as a file:// dependency
	foreign   []crossing  // links in the chart to files or directories of another module
	viaLink   bool        // reached through a symbolic link (so not the preferred one of its dups)
	dup       bool        // another chart stands for the same files
	deps      []dependency
	files     []*templateFile
	crds      []crdGroup
	loadErr   error // Chart.yaml or the archive could not be read
}

// clone copies a chart and, for an archive, the subcharts inside it; the
// parsed files are shared.
func (c *chart) clone() *chart {
	n := *c
	n.parent, n.subs = nil, nil
	for _, sub := range c.subs {
		n.addSub(sub.clone())
	}
	return &n
}

// dependency is one entry of Chart.yaml's (or requirements.yaml's) dependencies.
type dependency struct {
	name, alias, version, repository string
	file                             string // where it is declared
	line                             int
}

// crdGroup is the spec.group of a CustomResourceDefinition a chart ships.
type crdGroup struct {
	group, file string
	line        int
}

// ours reports whether the chart's files are its module's own code, not a
// vendored copy of a chart another module owns: only those are scanned for
// edges.
func (c *chart) ours() bool { return c.owner == c.module }

// top is the chart Helm would install: the outermost parent.
func (c *chart) top() *chart {
	for c.parent != nil {
		c = c.parent
	}
	return c
}

// helmPath is the chart's path in the tree Helm loads: the top chart's
// name, then charts/<name> for each subchart level.
func (c *chart) helmPath() string {
	if c.parent == nil {
		return c.name
	}
	return c.parent.helmPath() + "/charts/" + c.name
}

// dependencyFor returns the dependency entry a subchart satisfies.
func (c *chart) dependencyFor(name string) *dependency {
	for i, d := range c.deps {
		if d.name == name || (d.alias != "" && d.alias == name) {
			return &c.deps[i]
		}
	}
	return nil
}

// subFor returns the subchart under charts/ that satisfies a dependency, if
// it is vendored.
func (c *chart) subFor(d dependency) *chart {
	for _, s := range c.subs {
		if s.name == d.name {
			return s
		}
	}
	return nil
}

// wantedFile says which paths of a chart directory (slash, inside the
// chart) the scan reads: Chart.yaml and requirements.yaml, everything under
// templates/ and crds/, and any other YAML file (a CRD may be shipped under
// files/ and applied from a template), but nothing under charts/ (subcharts
// are charts of their own) nor hidden files.
func wantedFile(inner string, isDir bool) bool {
	base := path.Base(inner)
	if strings.HasPrefix(base, ".") || inner == "charts" {
		return false
	}
	if isDir || strings.HasPrefix(inner, "templates/") || strings.HasPrefix(inner, "crds/") {
		return true
	}
	return isYAML(inner)
}

func isYAML(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// readArchive returns the files of a chart archive, relative to the chart
// (the archive's first path component, the chart's name, removed).
func readArchive(data []byte) (map[string][]byte, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		_, name, ok := strings.Cut(path.Clean(h.Name), "/")
		if !ok {
			continue
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[name] = content
	}
	if _, ok := files["Chart.yaml"]; !ok {
		return nil, fmt.Errorf("no Chart.yaml in the archive")
	}
	return files, nil
}

// newChart builds a chart from its files. label prefixes the paths edges
// report (the chart directory, or the .tgz for an archive). Archives carry
// their subcharts inside; they are built here too.
func newChart(files map[string][]byte, dir, label string, archive bool) *chart {
	c := &chart{dir: dir, real: label, archive: archive, chartFile: join(label, "Chart.yaml"), name: path.Base(dir)}
	if err := c.readMeta(files, label); err != nil {
		c.loadErr = err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch {
		case strings.HasPrefix(name, "templates/"):
			tf := parseTemplate(join(label, name), string(files[name]))
			tf.inner = name
			c.files = append(c.files, tf)
			c.crds = append(c.crds, crdGroups(join(label, name), string(files[name]))...)
		case strings.HasPrefix(name, "crds/"), !strings.HasPrefix(name, "charts/") && isYAML(name):
			c.crds = append(c.crds, crdGroups(join(label, name), string(files[name]))...)
		}
	}
	if !archive {
		return c
	}
	// An archive's own subcharts: charts/<name>/... directories and charts/*.tgz.
	subdirs := map[string]map[string][]byte{}
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, "charts/")
		if !ok {
			continue
		}
		if sub, inner, ok := strings.Cut(rest, "/"); ok {
			if subdirs[sub] == nil {
				subdirs[sub] = map[string][]byte{}
			}
			subdirs[sub][inner] = files[name]
		} else if strings.HasSuffix(rest, ".tgz") {
			c.addSub(archiveChart(files[name], join(label, name)))
		}
	}
	subnames := make([]string, 0, len(subdirs))
	for s := range subdirs {
		subnames = append(subnames, s)
	}
	sort.Strings(subnames)
	for _, s := range subnames {
		if _, ok := subdirs[s]["Chart.yaml"]; ok {
			c.addSub(newChart(subdirs[s], join(dir, "charts/"+s), join(label, "charts/"+s), true))
		}
	}
	return c
}

// archiveChart builds the chart of a .tgz found at label.
func archiveChart(data []byte, label string) *chart {
	files, err := readArchive(data)
	if err != nil {
		c := &chart{dir: label, real: label, chartFile: label, archive: true, name: strings.TrimSuffix(path.Base(label), ".tgz")}
		c.loadErr = fmt.Errorf("reading chart archive: %w", err)
		return c
	}
	return newChart(files, label, label, true)
}

func (c *chart) addSub(s *chart) {
	s.parent = c
	c.subs = append(c.subs, s)
}

// readMeta reads the name and dependencies from Chart.yaml (and, for
// apiVersion v1 charts, requirements.yaml), with each dependency's line.
func (c *chart) readMeta(files map[string][]byte, label string) error {
	for _, name := range []string{"Chart.yaml", "requirements.yaml"} {
		data, ok := files[name]
		if !ok {
			continue
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %w", join(label, name), err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		var meta struct {
			Name         string `yaml:"name"`
			Dependencies []struct {
				Name       string `yaml:"name"`
				Alias      string `yaml:"alias"`
				Version    string `yaml:"version"`
				Repository string `yaml:"repository"`
			} `yaml:"dependencies"`
		}
		if err := doc.Decode(&meta); err != nil {
			return fmt.Errorf("%s: %w", join(label, name), err)
		}
		if name == "Chart.yaml" && meta.Name != "" {
			c.name = meta.Name
		}
		lines := dependencyLines(doc.Content[0])
		for i, d := range meta.Dependencies {
			line := 0
			if i < len(lines) {
				line = lines[i]
			}
			c.deps = append(c.deps, dependency{name: d.Name, alias: d.Alias, version: d.Version,
				repository: d.Repository, file: join(label, name), line: line})
		}
	}
	return nil
}

// dependencyLines returns, for each entry of the top-level dependencies
// list, the line of its repository key, or of the entry when it has none.
func dependencyLines(root *yaml.Node) []int {
	if root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "dependencies" || root.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		var lines []int
		for _, item := range root.Content[i+1].Content {
			line := item.Line
			for j := 0; item.Kind == yaml.MappingNode && j+1 < len(item.Content); j += 2 {
				if item.Content[j].Value == "repository" {
					line = item.Content[j].Line
				}
			}
			lines = append(lines, line)
		}
		return lines
	}
	return nil
}

var (
	crdKindRE  = regexp.MustCompile(`(?m)^kind:[ \t]*["']?CustomResourceDefinition["']?[ \t]*$`)
	crdGroupRE = regexp.MustCompile(`(?m)^[ \t]+group:[ \t]*["']?([a-z0-9.-]+)["']?[ \t]*$`)
)

// crdGroups returns the spec.group of each CustomResourceDefinition in a
// YAML (or template) file, document by document. A regex, not a YAML
// parser, because templates need not be YAML before rendering.
func crdGroups(rel, text string) []crdGroup {
	var out []crdGroup
	lines := newLineIndex(text)
	starts := []int{0}
	for _, s := range docSepRE.FindAllStringIndex(text, -1) {
		starts = append(starts, s[1])
	}
	for i, start := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		doc := text[start:end]
		if !crdKindRE.MatchString(doc) {
			continue
		}
		if m := crdGroupRE.FindStringSubmatchIndex(doc); m != nil {
			out = append(out, crdGroup{group: doc[m[2]:m[3]], file: rel, line: lines.line(start + m[2])})
		}
	}
	return out
}

// join is path.Join that keeps "" meaning the root.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
