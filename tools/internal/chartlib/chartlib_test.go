package chartlib_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"cozystack.io/tools/internal/chartlib"
)

// repoRoot is the repository root, seen from this package's directory.
const repoRoot = "../../.."

func cozyLib(t *testing.T) *chartlib.Library {
	t.Helper()
	lib, err := chartlib.Package(filepath.Join(repoRoot, "platform", "charts", "cozy-lib"))
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// Every catalog chart that depends on cozy-lib carries exactly the archive
// packaging platform/charts/cozy-lib gives, and a Chart.lock in sync.
func TestVendoredCozyLibIsCurrent(t *testing.T) {
	lib := cozyLib(t)
	dirs, err := chartlib.FindDependents(lib.Name, filepath.Join(repoRoot, "catalogs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no catalog chart depends on cozy-lib")
	}
	for _, d := range dirs {
		if err := chartlib.Check(d, lib); err != nil {
			t.Error(err)
		}
	}
}

// Packaging is reproducible: two runs give the same bytes.
func TestPackageReproducible(t *testing.T) {
	a, b := cozyLib(t), cozyLib(t)
	if !bytes.Equal(a.Archive, b.Archive) {
		t.Fatal("two packagings of cozy-lib differ")
	}
	if a.Name != "cozy-lib" || a.FileName() != "cozy-lib-"+a.Version+".tgz" {
		t.Errorf("name %q file %q", a.Name, a.FileName())
	}
}

// writeChart makes an application chart depending on cozy-lib with the
// given version and repository.
func writeChart(t *testing.T, version, repository string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	chartYAML := "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n  - name: cozy-lib\n    version: " + version + "\n    repository: " + repository + "\n"
	files := map[string]string{
		"Chart.yaml":               chartYAML,
		"values.yaml":              "{}\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestVendorThenCheck(t *testing.T) {
	lib := cozyLib(t)
	dir := writeChart(t, lib.Version, "oci://localhost:5000/cozystack/charts")
	if err := chartlib.Check(dir, lib); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Check before Vendor: %v, want missing", err)
	}
	// A stale version is replaced.
	stale := filepath.Join(dir, "charts", "cozy-lib-0.0.1.tgz")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chartlib.Vendor(dir, lib); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale version is still there: %v", err)
	}
	if err := chartlib.Check(dir, lib); err != nil {
		t.Fatalf("Check after Vendor: %v", err)
	}
	// Helm loads the result with the library as its dependency and a lock,
	// and its lint (which checks dependencies against charts/) is clean.
	c, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Dependencies()) != 1 || c.Dependencies()[0].Name() != "cozy-lib" || c.Lock == nil {
		t.Fatalf("loaded chart: dependencies %v, lock %v", c.Dependencies(), c.Lock)
	}
	for _, m := range lint.All(dir, nil, "default", false).Messages {
		if m.Severity > support.InfoSev {
			t.Errorf("helm lint: %v", m)
		}
	}

	// A changed copy is caught.
	vendored := filepath.Join(dir, "charts", lib.FileName())
	if err := os.WriteFile(vendored, append(bytes.Clone(lib.Archive), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chartlib.Check(dir, lib); err == nil || !strings.Contains(err.Error(), "differs from the packaged library") {
		t.Fatalf("Check of a changed copy: %v", err)
	}
	// So is a lock that no longer matches Chart.yaml.
	if err := chartlib.Vendor(dir, lib); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Chart.lock"), []byte("digest: sha256:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chartlib.Check(dir, lib); err == nil || !strings.Contains(err.Error(), "out of sync") {
		t.Fatalf("Check of a stale lock: %v", err)
	}
}

func TestVendorRefusesUnpinned(t *testing.T) {
	lib := cozyLib(t)
	tests := []struct {
		name, version, repository, want string
	}{
		{"range", "^0.1.0", "oci://localhost:5000/cozystack/charts", "pin it to exactly"},
		{"other version", "9.9.9", "oci://localhost:5000/cozystack/charts", "pin it to exactly"},
		{"file path", lib.Version, "file://../../../platform/charts/cozy-lib", "want the published OCI chart"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeChart(t, tt.version, tt.repository)
			err := chartlib.Vendor(dir, lib)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Vendor: %v, want %q", err, tt.want)
			}
		})
	}
}

// Push writes a Helm OCI chart: config and layer media types as Helm's,
// tagged with the version, reproducible.
func TestPush(t *testing.T) {
	lib := cozyLib(t)
	ctx := context.Background()
	store := memory.New()
	desc, err := chartlib.Push(ctx, lib, store)
	if err != nil {
		t.Fatal(err)
	}
	tagged, err := store.Resolve(ctx, lib.Version)
	if err != nil || tagged.Digest != desc.Digest {
		t.Fatalf("tag %s resolves to %v (%v), want %s", lib.Version, tagged.Digest, err, desc.Digest)
	}
	data, err := content.FetchAll(ctx, store, desc)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Config.MediaType != chartlib.ConfigMediaType || len(m.Layers) != 1 || m.Layers[0].MediaType != chartlib.ChartMediaType {
		t.Fatalf("manifest %s", data)
	}
	layer, err := content.FetchAll(ctx, store, m.Layers[0])
	if err != nil || !bytes.Equal(layer, lib.Archive) {
		t.Fatalf("the layer is not the archive (%v)", err)
	}
	again, err := chartlib.Push(ctx, lib, memory.New())
	if err != nil || again.Digest != desc.Digest {
		t.Errorf("a second push gives %s (%v), want %s", again.Digest, err, desc.Digest)
	}
}
