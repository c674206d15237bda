package helm

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"cozystack.io/tools/internal/boundary/config"
	"cozystack.io/tools/internal/boundary/edge"
)

// Scan walks root (skipping what cfg excludes, following symbolic links as
// Helm's loader does) and returns the Helm edges with From and To set, not
// yet judged, and the chart-symlink findings. When cfg was inferred (no
// boundaries.yaml), each API group whose CRD exactly one module ships
// becomes that module's first. It fails only when the tree cannot be read.
func Scan(root string, cfg *config.Config) ([]edge.Edge, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return nil, err
	}
	s := &scanner{root: absRoot, realRoot: realRoot, cfg: cfg, byDir: map[string]*chart{}, byReal: map[string][]*chart{},
		parsed: map[string]*chart{}, archives: map[string]*chart{}, links: map[string]bool{},
		nameOwner: map[string]string{}, topByName: map[string]*chart{}}
	if err := s.discover(); err != nil {
		return nil, err
	}
	s.chooseDups()
	s.assignOwners()
	if cfg.Source() == "" {
		s.inferGroups()
	}
	s.indexDefinitions()
	for _, c := range s.all {
		if c.ours() && !c.dup {
			s.chartEdges(c)
		}
	}
	return s.edges, nil
}

type scanner struct {
	root      string // absolute
	realRoot  string // root with symbolic links resolved
	cfg       *config.Config
	all       []*chart            // every chart, parents before their subcharts
	tops      []*chart            // charts that are no other chart's subchart, dups left out
	byDir     map[string]*chart   // directory charts by logical slash path
	byReal    map[string][]*chart // charts by where their files lie: one chart and its dups
	parsed    map[string]*chart   // directory charts read so far, by real path
	archives  map[string]*chart   // archives read so far, by real path
	links     map[string]bool     // symbolic links reported
	nameOwner map[string]string   // chart name → owning module ("" when ambiguous)
	topByName map[string]*chart   // chart name → its one top-level chart, for name-resolved dependencies
	global    map[string][]definition
	families  map[*chart]*family
	edges     []edge.Edge
}

// discover walks the tree and builds a chart for every directory holding
// Chart.yaml (once per path it is reached by) and every archive under a
// chart's charts/.
func (s *scanner) discover() error {
	return s.walkTree("", []step{{real: s.realRoot}}, func(rel string, stack []step) error {
		if _, err := os.Stat(filepath.Join(stack[len(stack)-1].real, "Chart.yaml")); err != nil {
			return nil
		}
		return s.chartAt(rel, stack)
	})
}

// chartAt adds the chart of the directory at logical path rel, the last
// step of stack.
func (s *scanner) chartAt(rel string, stack []step) error {
	realAbs := stack[len(stack)-1].real
	real := s.realRel(realAbs)
	parsed, ok := s.parsed[real]
	if !ok {
		files, foreign, err := s.readFiles(stack)
		if err != nil {
			return err
		}
		parsed = newChart(files, real, real, false)
		parsed.foreign = foreign
		if parsed.name == "" || parsed.name == "." {
			parsed.name = filepath.Base(realAbs)
		}
		s.parsed[real] = parsed
	}
	c := parsed.clone()
	c.dir = rel
	for _, st := range stack {
		c.viaLink = c.viaLink || st.link != nil
	}
	parentDir := path.Dir(rel)
	if parent := s.byDir[cleanDir(path.Dir(parentDir))]; rel != "" && path.Base(parentDir) == "charts" && parent != nil {
		parent.addSub(c)
		// A link between the parent and this chart (charts/x, or charts
		// itself) makes this a dependency on wherever the link leads.
		link := stack[len(stack)-1].link
		if link == nil && len(stack) > 1 {
			link = stack[len(stack)-2].link
		}
		if link != nil {
			c.link = &dependency{name: c.name, repository: "file://" + link.text, file: link.at}
		}
	}
	s.byDir[rel] = c
	s.addTree(c, s.cfg.ModuleOf(real))
	s.addArchives(c, stack)
	return nil
}

// addArchives adds the .tgz archives under the charts/ directory of c
// (links to archives followed) as its subcharts.
func (s *scanner) addArchives(c *chart, stack []step) {
	chartsDir, err := filepath.EvalSymlinks(filepath.Join(stack[len(stack)-1].real, "charts"))
	if err != nil || !inside(s.realRoot, chartsDir) {
		return // no charts/, or a link the walk reports
	}
	entries, _ := os.ReadDir(chartsDir)
	inner := append(stack[:len(stack):len(stack)], step{real: chartsDir})
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tgz") || e.IsDir() {
			continue
		}
		abs, viaLink := filepath.Join(chartsDir, e.Name()), c.viaLink
		if e.Type()&fs.ModeSymlink != 0 {
			target, isDir, ok := s.follow(abs, inner, func(bool) bool { return true })
			if !ok || isDir {
				continue
			}
			abs, viaLink = target, true
		}
		label := s.realRel(abs)
		parsed, ok := s.archives[label]
		if !ok {
			data, err := os.ReadFile(abs)
			if err != nil {
				parsed = &chart{dir: label, real: label, chartFile: label, archive: true, name: strings.TrimSuffix(e.Name(), ".tgz"), loadErr: err}
			} else {
				parsed = archiveChart(data, label)
			}
			s.archives[label] = parsed
		}
		a := parsed.clone()
		setViaLink(a, viaLink)
		c.addSub(a)
		s.addTree(a, s.cfg.ModuleOf(label))
	}
}

func setViaLink(c *chart, v bool) {
	c.viaLink = v
	for _, sub := range c.subs {
		setViaLink(sub, v)
	}
}

func cleanDir(d string) string {
	if d == "." {
		return ""
	}
	return d
}

// addTree adds a chart and, for an archive, the subcharts inside it.
func (s *scanner) addTree(c *chart, module string) {
	c.module = module
	s.all = append(s.all, c)
	s.byReal[c.real] = append(s.byReal[c.real], c)
	for _, sub := range c.subs {
		s.addTree(sub, module)
	}
}
