package doctest

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpan = regexp.MustCompile("`[^`]*`")
)

// documents returns README.md, every Markdown file under docs/ and the
// READMEs the docs send readers to for a part of the journey.
func documents(t *testing.T, root string) []string {
	t.Helper()
	docs := []string{"README.md", "sdk/backup/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			docs = append(docs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestRelativeLinksResolve: every relative link of README.md and docs/
// names a file or directory of the repository, and its #fragment, when it
// has one and names a Markdown file, is one of that file's headings.
func TestRelativeLinksResolve(t *testing.T) {
	root := Root(t)
	links := 0
	for _, doc := range documents(t, root) {
		lines := strings.Split(RepoFile(t, doc), "\n")
		fence := ""
		for i, l := range lines {
			trimmed := strings.TrimLeft(l, " ")
			if fence != "" || strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
				switch {
				case fence == "":
					fence = trimmed[:3]
				case strings.HasPrefix(trimmed, fence):
					fence = ""
				}
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, fragment, _ := strings.Cut(target, "#")
				if file == "" {
					file = doc
				} else {
					file = path.Join(path.Dir(doc), file)
				}
				if strings.HasPrefix(file, "../") {
					t.Errorf("%s:%d: %s leaves the repository", doc, i+1, target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(file))); err != nil {
					t.Errorf("%s:%d: %s: no such file or directory %s", doc, i+1, target, file)
					continue
				}
				if fragment == "" || !strings.HasSuffix(file, ".md") {
					continue
				}
				found := false
				for _, h := range Headings(strings.Split(RepoFile(t, file), "\n")) {
					if Anchor(h.Text) == fragment {
						found = true
					}
				}
				if !found {
					t.Errorf("%s:%d: %s: %s has no heading #%s", doc, i+1, target, file, fragment)
				}
			}
		}
	}
	if links == 0 {
		t.Error("no relative link found: the document walk is broken")
	}
}

// The section reader and the anchors, on a document of this test's own.
func TestSection(t *testing.T) {
	lines := strings.Split("# T\nintro\n## A: b `c`\none\n```sh\n# not a heading\n```\n### A.1\ntwo\n## B\nthree", "\n")
	hs := Headings(lines)
	var texts []string
	for _, h := range hs {
		texts = append(texts, h.Text)
	}
	if strings.Join(texts, "|") != "T|A: b `c`|A.1|B" {
		t.Errorf("headings %q", texts)
	}
	if got := Anchor("A: b `c`"); got != "a-b-c" {
		t.Errorf("Anchor = %q, want a-b-c", got)
	}
	if got := Anchor("Tenants: who may do what"); got != "tenants-who-may-do-what" {
		t.Errorf("Anchor = %q", got)
	}
}

// SectionAt stops at the next heading of the same or a higher level, not
// at a deeper one or a "#" line of a fenced block, and numbers the
// section's first line.
func TestSectionAt(t *testing.T) {
	const doc = "contracts/doctest/testdata/section.md"
	text, line := SectionAt(t, doc, "A")
	want := "one\n```sh\n# a comment, not a heading\n## nor this\n```\n### A.1\ntwo"
	if text != want || line != 5 {
		t.Errorf("SectionAt(A) = %q, line %d; want %q, line 5", text, line, want)
	}
	if got := Section(t, doc, "B"); got != "three\n" {
		t.Errorf("Section(B) = %q, want %q", got, "three\n")
	}
}
