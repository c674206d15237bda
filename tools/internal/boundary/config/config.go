package config

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"cozystack.io/tools/internal/boundary/edge"
	"cozystack.io/tools/internal/boundary/replacement"
)

// FileName is the configuration file looked for at the root of a tree.
const FileName = "boundaries.yaml"

// RootModule names files that lie under no declared module.
const RootModule = "."

// Module maps a directory to a module name.
type Module struct {
	Name string `json:"name" yaml:"name"`
	Path string `json:"path" yaml:"path"`
}

// Allow permits edges from every module matching From to each module in To;
// with Files, only edges from files whose base name matches one of those
// patterns (for example "*_test.go": a test-only dependency).
type Allow struct {
	From  string   `json:"from" yaml:"from"`
	To    []string `json:"to" yaml:"to"`
	Files []string `json:"files,omitempty" yaml:"files,omitempty"`
}

// PublishedChart is a chart that Module publishes for Consumers: a chart
// dependency on it (and includes of its templates through that dependency)
// is allowed when the dependency's repository starts with Repository and its
// version is pinned to one exact version, never a file:// path or a range.
type PublishedChart struct {
	Name       string   `json:"name" yaml:"name"`
	Module     string   `json:"module" yaml:"module"`
	Consumers  []string `json:"consumers" yaml:"consumers"`
	Repository string   `json:"repository" yaml:"repository"`
}

// VendoredCopy says that a vendored chart named Chart, found in a module
// matching one of In (path.Match patterns over module names; empty: any
// other module), is a copy of Module's chart rather than its own code.
type VendoredCopy struct {
	Chart  string   `json:"chart" yaml:"chart"`
	Module string   `json:"module" yaml:"module"`
	In     []string `json:"in,omitempty" yaml:"in,omitempty"`
}

// Config is a parsed and validated boundaries.yaml, or an inferred one.
type Config struct {
	Modules         []Module            `json:"modules" yaml:"modules"`
	Allow           []Allow             `json:"allow,omitempty" yaml:"allow,omitempty"`
	PublishedCharts []PublishedChart    `json:"publishedCharts,omitempty" yaml:"publishedCharts,omitempty"`
	APIGroups       map[string][]string `json:"apiGroups,omitempty" yaml:"apiGroups,omitempty"`
	Shared          []string            `json:"shared,omitempty" yaml:"shared,omitempty"`
	VendoredCopies  []VendoredCopy      `json:"vendoredCopies,omitempty" yaml:"vendoredCopies,omitempty"`
	// Replacements add to or override the built-in table of what the
	// contracts offer instead of a lookup or Capabilities check.
	Replacements []replacement.Entry `json:"replacements,omitempty" yaml:"replacements,omitempty"`
	Exclude      []string            `json:"exclude,omitempty" yaml:"exclude,omitempty"`

	source   string
	owners   map[string]string // exact group → module ("" when shared)
	patterns []groupPattern    // "*.suffix" groups, longest first
}

type groupPattern struct {
	pattern, module string
}

// Load reads and validates the configuration file at path. Unknown keys,
// duplicate modules, names that match no module and groups with two owners
// are errors.
func Load(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	c.source = file
	if err := c.init(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &c, nil
}

// Infer builds the configuration of a tree without boundaries.yaml: every
// top-level directory (or the root itself, when it is a chart) is its own
// module, no edge is allowed, and no group is owned until AddGroup is told
// so (the Helm scanner does, from the CRDs each module ships).
func Infer(root string) (*Config, error) {
	c := &Config{}
	if _, err := os.Stat(filepath.Join(root, "Chart.yaml")); err == nil {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		c.Modules = []Module{{Name: filepath.Base(abs), Path: ""}}
	} else {
		entries, err := os.ReadDir(root)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() && !c.Excluded(e.Name()) {
				c.Modules = append(c.Modules, Module{Name: e.Name(), Path: e.Name()})
			}
		}
	}
	if err := c.init(); err != nil {
		return nil, err
	}
	return c, nil
}

// CheckPaths returns an error naming every module whose path matches
// nothing under root: missing, or excluded from the scan. A configuration
// written for another tree would otherwise put every file in no module and
// report a clean tree.
func (c *Config) CheckPaths(root string) error {
	var bad []string
	for _, m := range c.Modules {
		if m.Path == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m.Path))); err != nil {
			bad = append(bad, fmt.Sprintf("%s (path %s: not found)", m.Name, m.Path))
		} else if c.Excluded(m.Path) || c.Skips(m.Path+"/x") {
			bad = append(bad, fmt.Sprintf("%s (path %s: excluded from the scan)", m.Name, m.Path))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("module paths match nothing in %s: %s", root, strings.Join(bad, ", "))
	}
	return nil
}

// CopyOwner returns the module whose chart a vendored chart named name,
// lying in module in, is a copy of: a published chart's module, else the
// first matching vendoredCopies entry; "" when it is its own module's.
func (c *Config) CopyOwner(name, in string) string {
	for _, p := range c.PublishedCharts {
		if p.Name == name && p.Module != in {
			return p.Module
		}
	}
	for _, v := range c.VendoredCopies {
		if v.Chart == name && v.Module != in && (len(v.In) == 0 || matchAny(v.In, in)) {
			return v.Module
		}
	}
	return ""
}

// Source is the file the configuration was read from, or "" when inferred.
func (c *Config) Source() string { return c.source }

func (c *Config) init() error {
	names := map[string]bool{}
	paths := map[string]bool{}
	for i, m := range c.Modules {
		if m.Name == "" || m.Name == RootModule {
			return fmt.Errorf("modules[%d]: name %q is empty or reserved", i, m.Name)
		}
		p := path.Clean(m.Path)
		if p == "." {
			p = ""
		}
		if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("module %s: path %q must be relative and inside the root", m.Name, m.Path)
		}
		if names[m.Name] {
			return fmt.Errorf("module %s is declared twice", m.Name)
		}
		if paths[p] {
			return fmt.Errorf("module %s: path %q is declared twice", m.Name, m.Path)
		}
		names[m.Name], paths[p] = true, true
		c.Modules[i].Path = p
	}
	for _, a := range c.Allow {
		if err := c.mustMatch("allow.from", a.From); err != nil {
			return err
		}
		for _, to := range a.To {
			if !names[to] {
				return fmt.Errorf("allow: %s → %s: no module is named %s", a.From, to, to)
			}
		}
		for _, f := range a.Files {
			if _, err := path.Match(f, ""); err != nil {
				return fmt.Errorf("allow: %s: files %q: %w", a.From, f, err)
			}
		}
	}
	for _, p := range c.PublishedCharts {
		if p.Name == "" || !names[p.Module] {
			return fmt.Errorf("publishedCharts: %q: needs a name and a declared module (got %q)", p.Name, p.Module)
		}
		if p.Repository == "" || strings.HasPrefix(p.Repository, "file://") {
			return fmt.Errorf("publishedCharts: %s: repository must be a published location such as oci://, not %q", p.Name, p.Repository)
		}
		for _, consumer := range p.Consumers {
			if err := c.mustMatch("publishedCharts.consumers", consumer); err != nil {
				return err
			}
		}
	}
	for _, v := range c.VendoredCopies {
		if v.Chart == "" || !names[v.Module] {
			return fmt.Errorf("vendoredCopies: %q: needs a chart name and a declared module (got %q)", v.Chart, v.Module)
		}
		for _, in := range v.In {
			if err := c.mustMatch("vendoredCopies.in", in); err != nil {
				return err
			}
		}
	}
	if err := replacement.Validate(c.Replacements); err != nil {
		return err
	}
	c.owners = map[string]string{}
	c.patterns = nil
	for _, g := range c.Shared {
		if err := c.addGroup(g, ""); err != nil {
			return err
		}
	}
	modules := make([]string, 0, len(c.APIGroups))
	for m := range c.APIGroups {
		modules = append(modules, m)
	}
	sort.Strings(modules)
	for _, m := range modules {
		if !names[m] {
			return fmt.Errorf("apiGroups: no module is named %s", m)
		}
		for _, g := range c.APIGroups[m] {
			if err := c.addGroup(g, m); err != nil {
				return err
			}
		}
	}
	for _, e := range c.Exclude {
		if _, err := path.Match(e, ""); err != nil {
			return fmt.Errorf("exclude: %q: %w", e, err)
		}
	}
	return nil
}

func (c *Config) mustMatch(field, pattern string) error {
	for _, m := range c.Modules {
		ok, err := path.Match(pattern, m.Name)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", field, pattern, err)
		}
		if ok {
			return nil
		}
	}
	return fmt.Errorf("%s: %q matches no module", field, pattern)
}

func (c *Config) addGroup(group, module string) error {
	owner := module
	if owner == "" {
		owner = "shared"
	}
	if strings.HasPrefix(group, "*.") {
		for _, p := range c.patterns {
			if p.pattern == group {
				return fmt.Errorf("apiGroups: %s is declared for both %s and %s", group, ownerName(p.module), owner)
			}
		}
		c.patterns = append(c.patterns, groupPattern{group, module})
		slices.SortStableFunc(c.patterns, func(a, b groupPattern) int { return len(b.pattern) - len(a.pattern) })
		return nil
	}
	if strings.Contains(group, "*") {
		return fmt.Errorf("apiGroups: %q: only a leading \"*.\" is supported", group)
	}
	if prev, ok := c.owners[group]; ok {
		return fmt.Errorf("apiGroups: %s is declared for both %s and %s", group, ownerName(prev), owner)
	}
	c.owners[group] = module
	return nil
}

func ownerName(m string) string {
	if m == "" {
		return "shared"
	}
	return m
}

// AddGroup makes module the owner of group unless the configuration
// already says who owns it (exactly or by a pattern). It reports whether
// the group was added. Used for inference from CRDs.
func (c *Config) AddGroup(group, module string) bool {
	if _, declared := c.GroupOwner(group); declared {
		return false
	}
	c.owners[group] = module
	return true
}

// GroupOwner returns the module that owns an API group ("" for the core
// group "v1" and shared groups) and whether the configuration says anything
// about the group at all. An exact entry wins over a pattern, and a longer
// pattern over a shorter one.
func (c *Config) GroupOwner(group string) (module string, declared bool) {
	if m, ok := c.owners[group]; ok {
		return m, true
	}
	for _, p := range c.patterns {
		if strings.HasSuffix(group, p.pattern[1:]) {
			return p.module, true
		}
	}
	return "", false
}

// ModuleOf returns the module of a slash-separated path relative to the
// root: the module with the longest path that is rel or a parent of it, or
// RootModule when there is none.
func (c *Config) ModuleOf(rel string) string {
	rel = path.Clean(filepath.ToSlash(rel))
	best, bestLen := RootModule, -1
	for _, m := range c.Modules {
		if m.Path == "" || rel == m.Path || strings.HasPrefix(rel, m.Path+"/") {
			if len(m.Path) > bestLen {
				best, bestLen = m.Name, len(m.Path)
			}
		}
	}
	return best
}

// Excluded reports whether a directory (slash path relative to the root)
// is not scanned: hidden directories, testdata, vendor and node_modules
// always (Go's own conventions, and where fixtures with seeded violations
// live), plus the configuration's exclude entries, matched against the
// whole path and against the base name.
func (c *Config) Excluded(rel string) bool {
	base := path.Base(rel)
	if (strings.HasPrefix(base, ".") && base != ".") || base == "testdata" || base == "vendor" || base == "node_modules" {
		return true
	}
	for _, e := range c.Exclude {
		if ok, _ := path.Match(e, rel); ok {
			return true
		}
		if ok, _ := path.Match(e, base); ok {
			return true
		}
	}
	return false
}

// Skips reports whether a file or directory (slash path relative to the
// root) lies in an excluded directory, checking every parent.
func (c *Config) Skips(rel string) bool {
	for dir := path.Dir(path.Clean(rel)); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if c.Excluded(dir) {
			return true
		}
	}
	return false
}

// Allows reports whether an allow entry permits the edge (its From, To
// and, for entries limited to some files, File).
func (c *Config) Allows(e *edge.Edge) bool {
	for _, a := range c.Allow {
		if ok, _ := path.Match(a.From, e.From); !ok || !slices.Contains(a.To, e.To) {
			continue
		}
		if len(a.Files) == 0 || matchAny(a.Files, path.Base(e.File)) {
			return true
		}
	}
	return false
}

// pinned matches one exact (semantic) version: no range, no wildcard.
var pinned = regexp.MustCompile(`^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)

// Judge sets e.Allowed and e.Reason. Edges without a target module
// (unknown-include, go-parse, template-parse) are always forbidden and keep
// the reason their scanner gave. Otherwise an allow entry, or a published
// chart reached through a pinned dependency from its published repository,
// allows the edge; anything else is forbidden, and a note the scanner left
// in Reason comes before the verdict.
func (c *Config) Judge(e *edge.Edge) {
	if e.To == "" {
		e.Allowed = false
		return
	}
	if note := e.Reason; note != "" {
		defer func() { e.Reason = note + "; " + e.Reason }()
	}
	if c.Allows(e) {
		e.Allowed, e.Reason = true, fmt.Sprintf("%s → %s is allowed", e.From, e.To)
		return
	}
	if e.Via != nil {
		for _, p := range c.PublishedCharts {
			if p.Name != e.Via.Name || p.Module != e.To || !matchAny(p.Consumers, e.From) {
				continue
			}
			switch {
			case !strings.HasPrefix(e.Via.Repository, p.Repository):
				e.Allowed, e.Reason = false, fmt.Sprintf("%s is published by %s: depend on it through %s at a pinned version, not %q", p.Name, p.Module, p.Repository, e.Via.Repository)
			case !pinned.MatchString(e.Via.Version):
				e.Allowed, e.Reason = false, fmt.Sprintf("%s is published by %s: pin one exact version, not %q", p.Name, p.Module, e.Via.Version)
			default:
				e.Allowed, e.Reason = true, fmt.Sprintf("published chart %s %s from %s", p.Name, e.Via.Version, e.Via.Repository)
			}
			return
		}
	}
	e.Allowed, e.Reason = false, fmt.Sprintf("%s → %s is not an allowed edge", e.From, e.To)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
