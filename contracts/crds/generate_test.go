package crds_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// deepcopyFile is the file controller-gen's object generator writes into
// each API package.
const deepcopyFile = "zz_generated.deepcopy.go"

// TestGeneratedUpToDate regenerates the CRDs and the deepcopy code into a
// temporary directory with the controller-gen pinned in contracts/go.mod
// (the command `make generate` runs, with the output redirected) and fails
// when the committed files differ.
func TestGeneratedUpToDate(t *testing.T) {
	root := moduleRoot(t)
	tmp := t.TempDir()

	// The CRDs: one invocation over every API package, as `make generate`.
	genCRDs := filepath.Join(tmp, "crds")
	controllerGen(t, root, "crd", "paths=./apis/...", "output:crd:artifacts:config="+genCRDs)
	if len(readFiles(t, genCRDs, isYAML)) == 0 {
		t.Fatalf("controller-gen generated no CRD into %s", genCRDs)
	}
	compareDirs(t, filepath.Join(root, "crds"), genCRDs, "crds", isYAML)

	// The deepcopy code: controller-gen writes it into each package's own
	// directory, so redirect one package at a time.
	for _, pkg := range apiPackages(t, root) {
		out := filepath.Join(tmp, "object", pkg)
		controllerGen(t, root, "object", "paths=./"+filepath.ToSlash(pkg), "output:object:dir="+out)
		compareDirs(t, filepath.Join(root, pkg), out, pkg, func(name string) bool {
			return name == deepcopyFile
		})
	}
}

func isYAML(name string) bool { return strings.HasSuffix(name, ".yaml") }

// moduleRoot is the directory of contracts/go.mod, the parent of this
// package's directory (the test's working directory).
func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(wd)
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatalf("contracts module root: %v", err)
	}
	if !bytes.Contains(data, []byte("module cozystack.io/contracts\n")) {
		t.Fatalf("%s/go.mod is not the cozystack.io/contracts module", root)
	}
	return root
}

// apiPackages lists, relative to root, every directory under apis holding
// non-test Go files.
func apiPackages(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, "apis"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		seen[rel] = true
		return nil
	})
	if err != nil {
		t.Fatalf("list API packages: %v", err)
	}
	pkgs := make([]string, 0, len(seen))
	for p := range seen {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	if len(pkgs) == 0 {
		t.Fatalf("no Go packages under %s/apis", root)
	}
	return pkgs
}

// controllerGen runs `go tool controller-gen args...` in dir.
func controllerGen(t *testing.T, dir string, args ...string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run controller-gen: %v", err)
	}
	cmd := exec.Command(goBin, append([]string{"tool", "controller-gen"}, args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool controller-gen %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out.String())
	}
}

// compareDirs compares the files of committed and generated that match
// keep; label is the committed directory relative to the contracts module.
func compareDirs(t *testing.T, committed, generated, label string, keep func(name string) bool) {
	t.Helper()
	want := readFiles(t, generated, keep)
	got := readFiles(t, committed, keep)
	for name, gen := range want {
		com, ok := got[name]
		if !ok {
			t.Errorf("contracts/%s/%s is missing: run `make generate` and commit the result", label, name)
			continue
		}
		if diff := cmp.Diff(string(com), string(gen)); diff != "" {
			t.Errorf("contracts/%s/%s is stale: run `make generate` and commit the result (-committed +generated):\n%s", label, name, diff)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("contracts/%s/%s is no longer generated from contracts/apis: delete it, run `make generate` and commit the result", label, name)
		}
	}
}

// readFiles reads the regular files of dir that match keep; a missing dir
// reads as empty.
func readFiles(t *testing.T, dir string, keep func(name string) bool) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() || !keep(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files
}
