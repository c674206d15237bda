package replacement

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"cozystack.io/tools/internal/boundary/edge"
)

// Entry says what replaces references to one API group (optionally one
// version, one kind, one of the two rules).
type Entry struct {
	// Group is an API group, or "*.x" for every subdomain of x.
	Group string `json:"group" yaml:"group"`
	// Version and Kind narrow the entry; empty matches any.
	Version string `json:"version,omitempty" yaml:"version,omitempty"`
	Kind    string `json:"kind,omitempty" yaml:"kind,omitempty"`
	// Rule is helm-lookup or helm-capabilities; empty matches both.
	Rule edge.Rule `json:"rule,omitempty" yaml:"rule,omitempty"`
	// K2 are cluster-values keys ("_cluster.<key>", "_namespace.<key>", or
	// a whole object), K3 property names. Neither: "none yet".
	K2   []string `json:"k2,omitempty" yaml:"k2,omitempty"`
	K3   []string `json:"k3,omitempty" yaml:"k3,omitempty"`
	Note string   `json:"note,omitempty" yaml:"note,omitempty"`
}

//go:embed defaults.yaml
var defaultsYAML []byte

// Defaults returns the built-in entries (defaults.yaml). It panics if the
// embedded file is invalid, which a test rules out.
func Defaults() []Entry {
	entries, err := parse(defaultsYAML)
	if err == nil {
		err = Validate(entries)
	}
	if err != nil {
		panic("replacement: defaults.yaml: " + err.Error())
	}
	return entries
}

func parse(data []byte) ([]Entry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var entries []Entry
	if err := dec.Decode(&entries); err != nil {
		return nil, err
	}
	return entries, nil
}

// Validate checks entries as a configuration gives them: each needs a
// group (a "*" only as a leading "*."), a rule that is empty or one of the
// two the table serves, and K2 keys that start with _cluster or _namespace.
func Validate(entries []Entry) error {
	for i, e := range entries {
		switch {
		case e.Group == "":
			return fmt.Errorf("replacements[%d]: group is required", i)
		case strings.Contains(strings.TrimPrefix(e.Group, "*."), "*"):
			return fmt.Errorf("replacements[%d]: group %q: only a leading \"*.\" is supported", i, e.Group)
		case e.Rule != "" && e.Rule != edge.HelmLookup && e.Rule != edge.HelmCapabilities:
			return fmt.Errorf("replacements[%d]: rule %q: want %s, %s or none", i, e.Rule, edge.HelmLookup, edge.HelmCapabilities)
		}
		for _, k := range e.K2 {
			if k != "_cluster" && k != "_namespace" && !strings.HasPrefix(k, "_cluster.") && !strings.HasPrefix(k, "_namespace.") {
				return fmt.Errorf("replacements[%d]: k2 %q: want _cluster.<key> or _namespace.<key>", i, k)
			}
		}
		for _, p := range e.K3 {
			if p == "" {
				return fmt.Errorf("replacements[%d]: empty k3 property", i)
			}
		}
	}
	return nil
}

// Table answers what replaces one reference.
type Table struct {
	entries []Entry // configuration's first, then the defaults
	config  int     // how many of entries come from the configuration
}

// New returns the table of the defaults with extra (a configuration's
// entries, already validated) taking precedence.
func New(extra []Entry) *Table {
	return &Table{entries: append(append([]Entry{}, extra...), Defaults()...), config: len(extra)}
}

// For returns what the contracts offer instead of a reference found by rule
// (helm-lookup or helm-capabilities) with target as the linter reports it:
// "group/version Kind" for a lookup, "group/version[/Kind]" for a
// Capabilities check. With no matching entry the offer is "none yet".
func (t *Table) For(rule edge.Rule, target string) *edge.Replacement {
	group, version, kind := split(target)
	best, bestScore := -1, -1
	for i, e := range t.entries {
		s := score(e, rule, group, version, kind)
		// Strictly greater: on a tie the earlier entry (the configuration's) wins.
		if s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return &edge.Replacement{Offer: edge.NoneYet}
	}
	e := t.entries[best]
	r := &edge.Replacement{K2: e.K2, K3: e.K3, Note: e.Note}
	var parts []string
	if len(e.K2) > 0 {
		parts = append(parts, "K2 "+strings.Join(e.K2, ", "))
	}
	if len(e.K3) > 0 {
		parts = append(parts, "K3 "+strings.Join(e.K3, ", "))
	}
	r.Offer = strings.Join(parts, "; ")
	if r.Offer == "" {
		r.Offer = edge.NoneYet
	}
	return r
}

// score is how specifically e matches, or -1 when it does not.
func score(e Entry, rule edge.Rule, group, version, kind string) int {
	if e.Rule != "" && e.Rule != rule {
		return -1
	}
	if e.Version != "" && e.Version != version || e.Kind != "" && e.Kind != kind {
		return -1
	}
	s := 0
	if suffix, ok := strings.CutPrefix(e.Group, "*"); ok {
		if !strings.HasSuffix(group, suffix) {
			return -1
		}
		s = len(suffix) // a longer pattern is more specific, but below an exact group
	} else if e.Group != group {
		return -1
	} else {
		s = 1 << 10
	}
	if e.Rule != "" {
		s += 1 << 11
	}
	if e.Version != "" {
		s += 1 << 12
	}
	if e.Kind != "" {
		s += 1 << 13
	}
	return s
}

// split parses "group/version Kind", "group/version/Kind", "group/version"
// or "version" (the core group).
func split(target string) (group, version, kind string) {
	target, kind, _ = strings.Cut(target, " ")
	parts := strings.Split(target, "/")
	switch {
	case len(parts) == 1:
		return "", parts[0], kind
	case len(parts) == 2 && isVersion(parts[0]): // "v1/Pod"
		return "", parts[0], parts[1]
	case len(parts) == 2:
		return parts[0], parts[1], kind
	default:
		return parts[0], parts[1], parts[2]
	}
}

func isVersion(s string) bool {
	return len(s) > 1 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9'
}
