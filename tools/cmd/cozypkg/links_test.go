package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkIn copies the catalog from and replaces its entry rel (removed if
// there) by a symbolic link to target; it returns the copy.
func linkIn(t *testing.T, from, rel, target string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "catalog")
	if err := os.CopyFS(dir, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A symbolic link whose target is missing, anywhere build, push,
// conformance, package or vendor-lib read, is an error naming the link and its
// target, not "no such file" for the target; one where nothing is read
// does not matter.
func TestDanglingSymlinks(t *testing.T) {
	dangling := func(dir, rel, target string) string {
		return filepath.Join(dir, filepath.FromSlash(rel)) + " is a dangling symbolic link: its target " + target + " does not exist"
	}
	lib := newLibFixture(t)
	layout := filepath.Join(t.TempDir(), "layout")
	mustRun(t, "build", conformanceCatalog, "--oci-layout", layout)
	if err := os.Symlink("gone", filepath.Join(layout, "blobs", "sha256", "extra")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("gone.tpl", filepath.Join(lib.dir, "templates", "_more.tpl")); err != nil {
		t.Fatal(err)
	}
	charts := t.TempDir()
	if err := os.Mkdir(filepath.Join(charts, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../gone", filepath.Join(charts, "other", "Chart.yaml")); err != nil {
		t.Fatal(err)
	}
	ads := t.TempDir()
	if err := os.Symlink("gone.yaml", filepath.Join(ads, "ad.yaml")); err != nil {
		t.Fatal(err)
	}

	type place struct{ catalog, rel, target string }
	places := []place{
		{conformanceCatalog, "catalog.yaml", "elsewhere.yaml"},
		{conformanceCatalog, "applicationdefinitions/demo.yaml", "../demo.yaml"},
		{conformanceCatalog, "applicationdefinitions", "../definitions"},
		{conformanceCatalog, "charts/demo", "../../demo"},
		{conformanceCatalog, "charts/demo/templates/configmap.yaml", "missing.yaml"},
		{testCatalog, "lib/demo-lib/templates/_helpers.tpl", "missing.tpl"},
	}
	type tc struct {
		name string
		args []string
		want string
	}
	var cases []tc
	for _, p := range places {
		dir := linkIn(t, p.catalog, p.rel, p.target)
		want := dangling(dir, p.rel, p.target)
		cases = append(cases,
			tc{"build " + p.rel, []string{"build", dir, "--oci-layout", t.TempDir()}, want},
			tc{"push " + p.rel, []string{"push", dir, "127.0.0.1:1/x:1", "--plain-http"}, want},
		)
		if p.catalog == conformanceCatalog {
			cases = append(cases, tc{"conformance " + p.rel, []string{"conformance", dir, "--platform-version", "0.1.0"}, want},
				tc{"conformance --previous " + p.rel, []string{"conformance", conformanceCatalog, "--previous", dir, "--platform-version", "0.1.0"}, want})
		}
	}
	loop := linkIn(t, conformanceCatalog, "charts/demo/templates/loop.yaml", "loop.yaml")
	cases = append(cases,
		tc{"build with a link loop", []string{"build", loop, "--oci-layout", t.TempDir()},
			filepath.Join(loop, "charts", "demo", "templates", "loop.yaml") + " is a symbolic link to loop.yaml that does not resolve"},
		tc{"conformance of a layout", []string{"conformance", layout, "--platform-version", "0.1.0"}, dangling(layout, "blobs/sha256/extra", "gone")},
		tc{"push of a layout", []string{"push", layout, "127.0.0.1:1/x:1"}, dangling(layout, "blobs/sha256/extra", "gone")},
		tc{"conformance --ads of a file", []string{"conformance", "--ads", filepath.Join(ads, "ad.yaml"), "--platform-version", "0.1.0"}, dangling(ads, "ad.yaml", "gone.yaml")},
		tc{"conformance --ads of a directory", []string{"conformance", "--ads", ads, "--platform-version", "0.1.0"}, dangling(ads, "ad.yaml", "gone.yaml")},
		tc{"package", []string{"package", lib.dir, "-d", t.TempDir()}, dangling(lib.dir, "templates/_more.tpl", "gone.tpl")},
		tc{"vendor-lib", []string{"vendor-lib", lib.archive, charts, "--check"}, dangling(charts, "other/Chart.yaml", "../../gone")},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := runExit(t, "", c.args...)
			if code != exitFailed || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, c.want)
			}
		})
	}

	// Outside what is read, a dangling link does not stop a build.
	dir := linkIn(t, conformanceCatalog, "NOTES.md", "gone.md")
	mustRun(t, "build", dir, "--oci-layout", t.TempDir())
	mustRun(t, "conformance", dir, "--platform-version", "0.1.0")
}
