package chartlib

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/artifact/build"
)

// Generated is the Chart.lock "generated" time Vendor writes: fixed, so a
// re-vendor of the same library changes nothing (Helm writes the current
// time; it never reads the field back).
var Generated = time.Unix(0, 0).UTC()

// Library is a packaged library chart.
type Library struct {
	Name, Version string
	// Archive is the .tgz, byte for byte what Package produced.
	Archive []byte
}

// FileName is the name `helm dependency build` gives the archive in charts/.
func (l *Library) FileName() string { return l.Name + "-" + l.Version + ".tgz" }

// Package packages the library chart in dir reproducibly
// (build.PackageDir with the Unix epoch as every file's time). The chart
// must have type library.
func Package(dir string) (*Library, error) {
	c, data, err := build.PackageDir(dir, time.Time{})
	if err != nil {
		return nil, err
	}
	if c.Metadata.Type != "library" {
		return nil, fmt.Errorf("%s: Chart.yaml has type %q, want library", dir, c.Metadata.Type)
	}
	return &Library{Name: c.Name(), Version: c.Metadata.Version, Archive: data}, nil
}

// Load reads a packaged library chart (a .tgz).
func Load(path string) (*Library, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Metadata.Type != "library" {
		return nil, fmt.Errorf("%s: chart %s has type %q, want library", path, c.Name(), c.Metadata.Type)
	}
	return &Library{Name: c.Name(), Version: c.Metadata.Version, Archive: data}, nil
}

// Dependent reports whether the chart in dir declares a dependency on a
// chart named name in its Chart.yaml.
func Dependent(dir, name string) (bool, error) {
	md, err := chartMetadata(dir)
	if err != nil {
		return false, err
	}
	return dependency(md, name) != nil, nil
}

// Vendor writes lib into the chart in dir as charts/<name>-<version>.tgz,
// removes other versions of it there, and writes Chart.lock. The chart's
// Chart.yaml must declare the library pinned to exactly lib's version
// from an oci:// repository (K5), and no other dependency: a lock must
// describe every dependency, and only the library is vendored here.
func Vendor(dir string, lib *Library) error {
	md, err := chartMetadata(dir)
	if err != nil {
		return err
	}
	lock, err := lockFor(dir, md, lib)
	if err != nil {
		return err
	}
	chartsDir := filepath.Join(dir, "charts")
	if err := os.MkdirAll(chartsDir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(chartsDir, lib.Name+"-*.tgz"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if filepath.Base(f) != lib.FileName() {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(chartsDir, lib.FileName()), lib.Archive, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "Chart.lock"), lock, 0o644)
}

// Check returns an error, naming the file and the fix, unless the chart in
// dir carries exactly what Vendor(dir, lib) would write: the same archive
// bytes, no other version of the library, and the same Chart.lock.
func Check(dir string, lib *Library) error {
	md, err := chartMetadata(dir)
	if err != nil {
		return err
	}
	lock, err := lockFor(dir, md, lib)
	if err != nil {
		return err
	}
	fix := fmt.Sprintf("run `make vendor-cozy-lib` (cozypkg vendor-lib %s %s)", lib.FileName(), dir)
	vendored := filepath.Join(dir, "charts", lib.FileName())
	got, err := os.ReadFile(vendored)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: missing: %s", vendored, fix)
	} else if err != nil {
		return err
	}
	if !bytes.Equal(got, lib.Archive) {
		return fmt.Errorf("%s (sha256 %s) differs from the packaged library (sha256 %s): %s", vendored, digest(got), digest(lib.Archive), fix)
	}
	others, err := filepath.Glob(filepath.Join(dir, "charts", lib.Name+"-*.tgz"))
	if err != nil {
		return err
	}
	for _, f := range others {
		if filepath.Base(f) != lib.FileName() {
			return fmt.Errorf("%s: a second version of %s: %s", f, lib.Name, fix)
		}
	}
	gotLock, err := os.ReadFile(filepath.Join(dir, "Chart.lock"))
	if err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Join(dir, "Chart.lock"), err, fix)
	}
	if !bytes.Equal(gotLock, lock) {
		return fmt.Errorf("%s is out of sync with Chart.yaml: %s", filepath.Join(dir, "Chart.lock"), fix)
	}
	return nil
}

// lockFor returns the Chart.lock of the chart in dir (metadata md) once
// lib is vendored, after checking the chart's dependencies.
func lockFor(dir string, md *chart.Metadata, lib *Library) ([]byte, error) {
	file := filepath.Join(dir, "Chart.yaml")
	dep := dependency(md, lib.Name)
	if dep == nil {
		return nil, fmt.Errorf("%s: no dependency on %s: add {name: %s, version: %s, repository: oci://…}", file, lib.Name, lib.Name, lib.Version)
	}
	if len(md.Dependencies) != 1 {
		return nil, fmt.Errorf("%s: %d dependencies; only a chart whose one dependency is %s can be vendored here", file, len(md.Dependencies), lib.Name)
	}
	if dep.Version != lib.Version {
		return nil, fmt.Errorf("%s: dependency %s has version %q; pin it to exactly %s, the version being vendored (contract K5)", file, lib.Name, dep.Version, lib.Version)
	}
	if !strings.HasPrefix(dep.Repository, "oci://") {
		return nil, fmt.Errorf("%s: dependency %s has repository %q; want the published OCI chart, oci://… (contract K5)", file, lib.Name, dep.Repository)
	}
	locked := []*chart.Dependency{{Name: dep.Name, Repository: dep.Repository, Version: lib.Version}}
	sum, err := hashReq(md.Dependencies, locked)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(&chart.Lock{Generated: Generated, Digest: sum, Dependencies: locked})
}

// hashReq is Helm's resolver.HashReq (helm.sh/helm/v3 internal/resolver,
// v3.22.0), which `helm dependency build` compares with Chart.lock's
// digest to decide whether the lock is in sync with Chart.yaml.
func hashReq(req, lock []*chart.Dependency) (string, error) {
	data, err := json.Marshal([2][]*chart.Dependency{req, lock})
	if err != nil {
		return "", err
	}
	return "sha256:" + digest(data), nil
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func dependency(md *chart.Metadata, name string) *chart.Dependency {
	for _, d := range md.Dependencies {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// chartMetadata reads dir/Chart.yaml as Helm does.
func chartMetadata(dir string) (*chart.Metadata, error) {
	file := filepath.Join(dir, "Chart.yaml")
	md, err := chartutil.LoadChartfile(file)
	if err != nil {
		return nil, err
	}
	if err := md.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return md, nil
}

// FindDependents returns the chart directories under each root (or the
// root itself when it is a chart) whose Chart.yaml depends on name, in
// walk order. Vendored subcharts (anything under a charts/ directory of a
// chart) and testdata directories are skipped.
func FindDependents(name string, roots ...string) ([]string, error) {
	var dirs []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if d.Name() == "charts" {
				if _, err := os.Stat(filepath.Join(filepath.Dir(p), "Chart.yaml")); err == nil {
					return filepath.SkipDir
				}
			}
			if _, err := os.Stat(filepath.Join(p, "Chart.yaml")); err != nil {
				return nil
			}
			ok, err := Dependent(p, name)
			if err != nil {
				return err
			}
			if ok {
				dirs = append(dirs, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return dirs, nil
}
