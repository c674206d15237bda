package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"cozystack.io/contracts/doctest"
)

// readmeSections are the documents' sections on cozypkg, checked against
// what cozypkg does: the sections whose cozypkg commands TestREADME runs,
// in order: a document (a path from the repository root) and a heading.
var readmeSections = []struct{ doc, heading string }{
	{"docs/catalog-author/conformance.md", "Contracts and conformance"},
	{"docs/catalog-author/build-and-push.md", "Catalogs: cozypkg build and push"},
}

// repoRoot is the repository root, from this package's directory.
var repoRoot = filepath.Join("..", "..", "..")

// readmeExample is a command of a document's console block and the output it
// shows.
type readmeExample struct {
	section string
	line    int // of the command in its document
	block   int // of the section's fenced blocks
	args    []string
	want    []string
}

// readmeExamples parses the ```console blocks of a section: "$ " starts a
// command (a trailing backslash continues it on the next line), the lines
// up to the next command or the block's end are its output. Every
// cozypkg command in a fenced block of the section must be such a
// command, so that none escapes the test.
func readmeExamples(t *testing.T, doc, section string, lines []string, first int) []readmeExample {
	t.Helper()
	var out []readmeExample
	fence, block := "", 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case fence == "" && strings.HasPrefix(l, "```"):
			fence = strings.TrimPrefix(l, "```")
			block++
			continue
		case fence != "" && l == "```":
			fence = ""
			continue
		case fence == "":
			continue
		}
		if !strings.HasPrefix(l, "$ ") {
			if strings.Contains(l, "tools/cmd/cozypkg") {
				t.Errorf("%s:%d: a cozypkg command outside a ```console block's \"$ \" line is not tested: %s", doc, first+i, l)
			}
			if fence == "console" && len(out) > 0 {
				out[len(out)-1].want = append(out[len(out)-1].want, l)
			}
			continue
		}
		if fence != "console" {
			t.Errorf("%s:%d: a command in a ```%s block; use ```console", doc, first+i, fence)
		}
		line := first + i
		cmd := strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
		}
		rest, ok := strings.CutPrefix(cmd, "go run ./tools/cmd/cozypkg ")
		if !ok || strings.ContainsAny(rest, "\"'$|;&<>`#") {
			t.Errorf("%s:%d: %q: want go run ./tools/cmd/cozypkg and plain arguments", doc, line, cmd)
			continue
		}
		out = append(out, readmeExample{section: section, line: line, block: block, args: strings.Fields(rest)})
	}
	return out
}

var (
	longDigest = regexp.MustCompile(`sha256:[0-9a-f]{12,64}`)
	exitRow    = regexp.MustCompile(`^\| (\d+) \| (.+) \|$`)
	readmeHost = "127.0.0.1:15000"
)

// matchOutput reports whether got matches want, line by line, where a
// want line "..." stands for any number of lines.
func matchOutput(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchOutput(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchOutput(want[1:], got[1:])
}

// TestREADME runs every command the cozypkg sections of the catalog
// author's documents (readmeSections) show, in
// order, from a directory laid out as the repository (its entries linked,
// ../shared beside it; what the commands write stays in the test's
// directory), and compares what a terminal would show with `go run`:
// stdout and stderr as they interleave, then "exit status N" when N is not
// 0. Digests are shown as sha256:…, and a line "..." stands for any lines.
// The local registry, 127.0.0.1:15000 in the documents, is the test's (those
// commands, and the rest of their block, are skipped under -short). The
// section's table of exit statuses is exitStatuses.
func TestREADME(t *testing.T) {
	work := filepath.Join(t.TempDir(), "repo")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "dist" {
			if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Symlink(filepath.Join(root, "..", "shared"), filepath.Join(filepath.Dir(work), "shared")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)

	// The documents' registry host becomes the test registry's, under a
	// repository prefix of this run, and back in the output.
	var host string
	if env != nil {
		host = fmt.Sprintf("%s/readme-%d", env.RegistryHost(), time.Now().UnixNano())
	}

	var codes []int
	for _, sec := range readmeSections {
		doc, title := sec.doc, sec.heading
		text, first := doctest.SectionAt(t, doc, title)
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			if m := exitRow.FindStringSubmatch(l); m != nil {
				code, _ := strconv.Atoi(m[1])
				codes = append(codes, code)
				if s, ok := exitStatus(code); !ok || s != m[2] {
					t.Errorf("%s:%d: exit status %d is %q; cozypkg --help (exitStatuses) says %q", doc, first+i, code, m[2], s)
				}
			}
		}
		examples := readmeExamples(t, doc, title, lines, first)
		if len(examples) == 0 {
			t.Errorf("%s: section %q shows no cozypkg command", doc, title)
		}
		skipBlock := -1
		for _, ex := range examples {
			name := fmt.Sprintf("%s:%d", path.Base(doc), ex.line)
			t.Run(name, func(t *testing.T) {
				cmd := strings.Join(ex.args, " ")
				if strings.Contains(cmd, readmeHost) && env == nil {
					skipBlock = ex.block
				}
				if skipBlock == ex.block {
					t.Skipf("needs the test registry: %s", cmd)
				}
				args := strings.Fields(strings.ReplaceAll(cmd, readmeHost, host))
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				var terminal bytes.Buffer
				code := execute(ctx, args, strings.NewReader(""), &terminal, &terminal)
				out := terminal.String()
				if code != 0 {
					out += fmt.Sprintf("exit status %d\n", code)
				}
				if host != "" {
					out = strings.ReplaceAll(out, host, readmeHost)
				}
				out = longDigest.ReplaceAllString(out, "sha256:…")
				got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				for i := range got {
					got[i] = strings.TrimRight(got[i], " ")
				}
				if !matchOutput(ex.want, got) {
					t.Errorf("$ go run ./tools/cmd/cozypkg %s\nshows in %s:\n%s\nbut prints:\n%s", cmd, doc, strings.Join(ex.want, "\n"), strings.Join(got, "\n"))
				}
			})
		}
	}
	if len(codes) != len(exitStatuses) {
		t.Errorf("%v list the exit statuses %v; cozypkg has %d (exitStatuses)", readmeSections, codes, len(exitStatuses))
	}
}

func exitStatus(code int) (string, bool) {
	for _, s := range exitStatuses {
		if s.Code == code {
			return s.Meaning, true
		}
	}
	return "", false
}

// The "..." lines of matchOutput.
func TestMatchOutput(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\nb", true},
		{"a\nb", "a\nc", false},
		{"a\n...\nd", "a\nb\nc\nd", true},
		{"a\n...\nd", "a\nd", true},
		{"...\nd", "d\nx", false},
		{"...", "", true},
		{"a", "a\nb", false},
	} {
		if got := matchOutput(strings.Split(tc.want, "\n"), strings.Split(tc.got, "\n")); got != tc.ok {
			t.Errorf("matchOutput(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}
