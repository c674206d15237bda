package conformance

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// positions maps object paths of one YAML (or JSON) document to lines.
type positions struct {
	root *yaml.Node
	// offset is added to every line: the document's first line in its
	// file, minus one.
	offset int
}

// newPositions parses data; a document that does not parse gives lines 0.
func newPositions(data []byte, offset int) positions {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil || len(n.Content) == 0 {
		return positions{offset: offset}
	}
	return positions{root: n.Content[0], offset: offset}
}

// line returns the line of the deepest node on path that exists (a
// mapping key's line for a mapping value), or 0. Path segments are map
// keys or decimal sequence indexes.
func (p positions) line(path ...string) int {
	n := p.root
	if n == nil {
		return 0
	}
	line := n.Line
	for _, seg := range path {
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == seg {
					line = n.Content[i].Line
					n = n.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				return line + p.offset
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line + p.offset
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line + p.offset
		}
	}
	return line + p.offset
}

// pointerSegments splits a JSON pointer ("/properties/a~1b") into
// segments.
func pointerSegments(ptr string) []string {
	ptr = strings.TrimPrefix(ptr, "#")
	if ptr == "" || ptr == "/" {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs
}

// pointer joins segments into a JSON pointer with a leading "#".
func pointer(segs ...string) string {
	var b strings.Builder
	b.WriteString("#")
	for _, s := range segs {
		b.WriteString("/")
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
	}
	if len(segs) == 0 {
		b.WriteString("/")
	}
	return b.String()
}

// fieldPath renders segments as a Kubernetes field path:
// spec.dashboard.keysOrder[3].
func fieldPath(segs ...string) string {
	var b strings.Builder
	for _, s := range segs {
		if _, err := strconv.Atoi(s); err == nil {
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteString(".")
		}
		b.WriteString(s)
	}
	return b.String()
}
