package doctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// Root returns the repository root: the nearest directory above the
// working directory that holds go.work beside sdk/localcp/versions.yaml, so
// another workspace's go.work in between is passed over. It is the rule of
// sdk/localcp.RepoRoot, written again because contracts may not import sdk
// (boundaries.yaml); TestRootIsLocalcpRepoRoot checks that both agree.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if isFile(filepath.Join(dir, "go.work")) && isFile(filepath.Join(dir, "sdk", "localcp", "versions.yaml")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("doctest: no go.work beside sdk/localcp/versions.yaml above the working directory: run the test inside the repository")
		}
		dir = parent
	}
}

func isFile(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// RepoFile returns the text of file, a slash-separated path from the
// repository root.
func RepoFile(t testing.TB, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Root(t), filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Section returns the text of file's section under heading (the heading's
// text without its "#"s, at any level): the lines after the heading up to
// the next heading of the same or a higher level, or the end of the file.
func Section(t testing.TB, file, heading string) string {
	t.Helper()
	text, _ := SectionAt(t, file, heading)
	return text
}

// SectionAt is Section, with the 1-based line number in file of the
// section's first line (the line after the heading), for messages that
// point at a line.
func SectionAt(t testing.TB, file, heading string) (string, int) {
	t.Helper()
	lines := strings.Split(RepoFile(t, file), "\n")
	start, level := -1, 0
	for _, h := range Headings(lines) {
		switch {
		case start < 0 && h.Text == heading:
			start, level = h.Line, h.Level
		case start >= 0 && h.Level <= level:
			return strings.Join(lines[start+1:h.Line], "\n"), start + 2
		}
	}
	if start < 0 {
		t.Fatalf("%s has no section %q", file, heading)
	}
	return strings.Join(lines[start+1:], "\n"), start + 2
}

// Heading is a Markdown ATX heading: its level (the number of "#"), its
// text and its 0-based line index.
type Heading struct {
	Level int
	Text  string
	Line  int
}

// Headings returns the ATX headings of lines, in order, skipping fenced
// code blocks (``` or ~~~).
func Headings(lines []string) []Heading {
	var out []Heading
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "#"))
		if n == 0 || n > 6 || (len(l) > n && l[n] != ' ') {
			continue
		}
		out = append(out, Heading{Level: n, Text: strings.TrimSpace(strings.TrimRight(strings.TrimSpace(l[n:]), "#")), Line: i})
	}
	return out
}

// Anchor returns the fragment a Markdown renderer such as GitHub's gives
// heading: lower case, every character but letters, digits, "-", "_" and
// spaces dropped, spaces made "-".
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
