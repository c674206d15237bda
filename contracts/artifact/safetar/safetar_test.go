package safetar_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cozystack.io/contracts/artifact/safetar"
)

type entry struct {
	name     string
	typeflag byte
	body     string
	link     string
	mode     int64
	size     int64 // when non-zero, the declared size with body repeated to it
}

func file(name, body string) entry  { return entry{name: name, typeflag: tar.TypeReg, body: body} }
func dir(name string) entry         { return entry{name: name, typeflag: tar.TypeDir} }
func symlink(name, to string) entry { return entry{name: name, typeflag: tar.TypeSymlink, link: to} }
func hardlink(name, to string) entry {
	return entry{name: name, typeflag: tar.TypeLink, link: to}
}

// archive writes a gzip-compressed tar of entries, as a hostile publisher
// could: archive/tar writes whatever names it is given.
func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		body := []byte(e.body)
		if e.size > 0 {
			body = bytes.Repeat([]byte{'x'}, int(e.size))
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		hd := &tar.Header{Name: e.name, Typeflag: e.typeflag, Linkname: e.link, Mode: mode}
		if e.typeflag == tar.TypeReg {
			hd.Size = int64(len(body))
		}
		if err := tw.WriteHeader(hd); err != nil {
			t.Fatalf("write header %q: %v", e.name, err)
		}
		if hd.Size > 0 {
			if _, err := tw.Write(body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func many(n int) []entry {
	es := make([]entry, n)
	for i := range es {
		es[i] = file(fmt.Sprintf("f%d", i), "")
	}
	return es
}

func TestUnsafeArchivesAreRejected(t *testing.T) {
	small := safetar.Limits{MaxEntries: 5, MaxFileSize: 10, MaxTotalSize: 15}
	for _, tc := range []struct {
		name    string
		entries []entry
		limits  safetar.Limits
		want    error
		entry   string // the entry the error names
		detail  string // a fragment of the message
	}{
		{
			name:    "parent traversal",
			entries: []entry{file("../evil", "x")},
			want:    safetar.ErrPathTraversal,
			entry:   "../evil",
		},
		{
			name:    "traversal inside a path",
			entries: []entry{file("chart/../../evil", "x")},
			want:    safetar.ErrPathTraversal,
			entry:   "chart/../../evil",
		},
		{
			name:    "traversal that stays inside",
			entries: []entry{file("chart/templates/../values.yaml", "x")},
			want:    safetar.ErrPathTraversal,
		},
		{
			name:    "absolute path",
			entries: []entry{file("/etc/cron.d/evil", "x")},
			want:    safetar.ErrAbsolutePath,
			entry:   "/etc/cron.d/evil",
		},
		{
			name:    "windows drive path",
			entries: []entry{file("C:/evil", "x")},
			want:    safetar.ErrAbsolutePath,
		},
		{
			name:    "backslash name",
			entries: []entry{file(`chart\..\..\evil`, "x")},
			want:    safetar.ErrInvalidName,
		},
		{
			name:    "file as the root",
			entries: []entry{file(".", "x")},
			want:    safetar.ErrInvalidName,
		},
		{
			name:    "symlink to an absolute path",
			entries: []entry{symlink("chart/passwd", "/etc/passwd")},
			want:    safetar.ErrLinkEscapes,
			detail:  "/etc/passwd",
		},
		{
			name:    "symlink to the parent",
			entries: []entry{symlink("chart/up", "../../outside")},
			want:    safetar.ErrLinkEscapes,
			entry:   "chart/up",
		},
		{
			name:    "symlink escaping through another symlink",
			entries: []entry{symlink("here", "."), symlink("escape", "here/..")},
			want:    safetar.ErrLinkEscapes,
			entry:   "escape",
		},
		{
			name:    "symlink loop",
			entries: []entry{symlink("a", "b"), symlink("b", "a")},
			want:    safetar.ErrLinkEscapes,
		},
		{
			name:    "file written through a symlink",
			entries: []entry{dir("sub/"), symlink("link", "sub"), file("link/f", "x")},
			want:    safetar.ErrThroughLink,
			entry:   "link/f",
		},
		{
			name:    "symlink replacing a directory",
			entries: []entry{file("a/f", "x"), symlink("a", "/tmp")},
			want:    safetar.ErrLinkEscapes,
		},
		{
			name:    "symlink over an earlier directory",
			entries: []entry{file("a/f", "x"), symlink("a", "b")},
			want:    safetar.ErrDuplicate,
			entry:   "a",
		},
		{
			name:    "hard link to an absolute path",
			entries: []entry{hardlink("chart/shadow", "/etc/shadow")},
			want:    safetar.ErrLinkEscapes,
			detail:  "/etc/shadow",
		},
		{
			name:    "hard link to the parent",
			entries: []entry{hardlink("chart/h", "../h")},
			want:    safetar.ErrLinkEscapes,
		},
		{
			name:    "hard link to no earlier file",
			entries: []entry{hardlink("h", "later"), file("later", "x")},
			want:    safetar.ErrLinkEscapes,
		},
		{
			name:    "character device",
			entries: []entry{{name: "dev/null", typeflag: tar.TypeChar}},
			want:    safetar.ErrSpecialFile,
			detail:  "character device",
		},
		{
			name:    "block device",
			entries: []entry{{name: "sda", typeflag: tar.TypeBlock}},
			want:    safetar.ErrSpecialFile,
		},
		{
			name:    "fifo",
			entries: []entry{{name: "pipe", typeflag: tar.TypeFifo}},
			want:    safetar.ErrSpecialFile,
		},
		{
			name:    "duplicate file",
			entries: []entry{file("a", "1"), file("a", "2")},
			want:    safetar.ErrDuplicate,
		},
		{
			name:    "file below a file",
			entries: []entry{file("a", "1"), file("a/b", "2")},
			want:    safetar.ErrDuplicate,
		},
		{
			name:    "file over the size limit",
			entries: []entry{{name: "big", typeflag: tar.TypeReg, size: 11}},
			limits:  small,
			want:    safetar.ErrFileTooLarge,
			entry:   "big",
		},
		{
			name:    "files over the total limit",
			entries: []entry{{name: "a", typeflag: tar.TypeReg, size: 10}, {name: "b", typeflag: tar.TypeReg, size: 6}},
			limits:  small,
			want:    safetar.ErrArchiveTooLarge,
			entry:   "b",
		},
		{
			name:    "too many entries",
			entries: many(6),
			limits:  small,
			want:    safetar.ErrTooManyEntries,
		},
		{
			name:    "gzip bomb over the default file limit",
			entries: []entry{{name: "zeros", typeflag: tar.TypeReg, size: 6 << 20}},
			want:    safetar.ErrFileTooLarge,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := archive(t, tc.entries...)

			err := safetar.Check(bytes.NewReader(data), tc.limits)
			checkErr(t, "Check", err, tc.want, tc.entry, tc.detail)

			parent := t.TempDir()
			target := filepath.Join(parent, "unpack")
			if err := os.Mkdir(target, 0o755); err != nil {
				t.Fatal(err)
			}
			err = safetar.Unpack(bytes.NewReader(data), target, tc.limits)
			checkErr(t, "Unpack", err, tc.want, tc.entry, tc.detail)
			// Nothing was written beside the target directory.
			if got, _ := os.ReadDir(parent); len(got) != 1 {
				t.Errorf("Unpack wrote outside its directory: %s holds %v", parent, got)
			}
			// And no link was created.
			_ = filepath.WalkDir(target, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type()&os.ModeSymlink != 0 {
					t.Errorf("Unpack created the link %s of a rejected archive", p)
				}
				return nil
			})
		})
	}
}

func checkErr(t *testing.T, op string, err, want error, entry, detail string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", op, err, want)
	}
	var ee *safetar.EntryError
	if !errors.As(err, &ee) {
		t.Fatalf("%s: err = %T (%v), want *safetar.EntryError", op, err, err)
	}
	if entry != "" && ee.Entry != entry {
		t.Errorf("%s: error names entry %q, want %q", op, ee.Entry, entry)
	}
	if !strings.Contains(err.Error(), "unsafe archive") || !strings.Contains(err.Error(), detail) {
		t.Errorf("%s: message %q lacks %q", op, err.Error(), detail)
	}
}

func TestUnpackSafeArchive(t *testing.T) {
	data := archive(t,
		dir("./"),
		dir("demo/"),
		file("demo/Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n"),
		file("demo/values.yaml", "replicas: 1\n"),
		entry{name: "demo/files/run.sh", typeflag: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o4755},
		symlink("demo/templates/values-link.yaml", "../values.yaml"),
		symlink("demo/here", "."),
		symlink("demo/through", "here/values.yaml"),
		hardlink("demo/values-copy.yaml", "demo/values.yaml"),
		dir("demo/"), // a repeated directory is harmless
	)
	if err := safetar.Check(bytes.NewReader(data), safetar.Limits{}); err != nil {
		t.Fatalf("Check: %v", err)
	}
	target := t.TempDir()
	if err := safetar.Unpack(bytes.NewReader(data), target, safetar.Limits{}); err != nil {
		t.Fatalf("Unpack: %v", err)
	}
	for name, want := range map[string]string{
		"demo/Chart.yaml":                 "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
		"demo/templates/values-link.yaml": "replicas: 1\n",
		"demo/through":                    "replicas: 1\n",
		"demo/values-copy.yaml":           "replicas: 1\n",
	} {
		got, err := os.ReadFile(filepath.Join(target, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if link, err := os.Readlink(filepath.Join(target, "demo/templates/values-link.yaml")); err != nil || link != "../values.yaml" {
		t.Errorf("values-link.yaml -> %q, %v; want ../values.yaml", link, err)
	}
	// Setuid is dropped, the execute bit kept.
	if fi, err := os.Stat(filepath.Join(target, "demo/files/run.sh")); err != nil || fi.Mode() != 0o755 {
		t.Errorf("run.sh mode = %v, %v; want -rwxr-xr-x", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(target, "demo/values.yaml")); err != nil || fi.Mode() != 0o644 {
		t.Errorf("values.yaml mode = %v, %v; want -rw-r--r--", fi.Mode(), err)
	}
}

func TestUnpackNeedsEmptyDirectory(t *testing.T) {
	target := t.TempDir()
	if err := os.WriteFile(filepath.Join(target, "old"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := safetar.Unpack(bytes.NewReader(archive(t, file("a", "x"))), target, safetar.Limits{})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("err = %v, want a refusal naming the non-empty directory", err)
	}
}

func TestNotAnArchive(t *testing.T) {
	err := safetar.Check(strings.NewReader("apiVersion: v2\n"), safetar.Limits{})
	if err == nil || !strings.Contains(err.Error(), "not a gzip-compressed tar archive") {
		t.Fatalf("err = %v, want not a gzip-compressed tar archive", err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(bytes.Repeat([]byte("garbage!"), 200))
	zw.Close()
	if err := safetar.Check(&buf, safetar.Limits{}); err == nil || !strings.Contains(err.Error(), "read archive") {
		t.Fatalf("err = %v, want a tar read error", err)
	}
}
