package build

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"cozystack.io/contracts/artifact"
)

// chartDir is the absolute directory of the chart at rel (a chart path,
// slash-separated) in the catalog directory root, after checking that it is
// a directory and that neither it nor any symbolic link below it resolves
// outside root: Helm's loader follows links, and a link to /etc must not
// end up in an archive.
func chartDir(root, rel string) (string, error) {
	dir := filepath.Join(root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("chart %s: %w", rel, err)
	}
	if !inside(root, real) {
		return "", fmt.Errorf("chart %s: resolves to %s, outside the catalog directory %s", rel, real, root)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("chart %s: %s is not a chart directory", rel, dir)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("chart %s: %w", rel, err)
		}
		if !inside(root, target) {
			return fmt.Errorf("chart %s: %s links to %s, outside the catalog directory; copy the file into the chart instead", rel, p, target)
		}
		return nil
	})
	return dir, err
}

// inside reports whether p is root or below it; both absolute and clean.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// loadChart loads the chart at rel with Helm's loader (which applies
// .helmignore and checks Chart.yaml) and vendors into it the catalog
// libraries it depends on through a file:// repository. libs maps library
// paths to their versions. Every dependency must end up in the chart:
// Flux installs the archive as is.
func loadChart(root, rel string, libs map[string]string) (*chart.Chart, error) {
	dir, err := chartDir(root, rel)
	if err != nil {
		return nil, err
	}
	c, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", rel, err)
	}
	if c.Metadata.Type == "library" {
		return nil, fmt.Errorf("chart %s: is a library chart, which Helm cannot install: list it under libraries, and use an application chart for the component", rel)
	}
	// cozy-lib only as the OCI chart the platform publishes, at one
	// version: the rule conformance's K5-pin applies.
	for i, dep := range c.Metadata.Dependencies {
		if dep.Name != artifact.CozyLib {
			continue
		}
		var errs []error
		for _, p := range artifact.CheckCozyLibPin(dep.Repository, dep.Version, "the platform's release") {
			errs = append(errs, fmt.Errorf("chart %s: Chart.yaml dependencies[%d].%s: %s: %s (contract K5, k5-cozy-lib.md)", rel, i, p.Field, p.Message, p.Fix))
		}
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
	}
	vendored := map[string]bool{}
	for _, sub := range c.Dependencies() {
		vendored[sub.Name()] = true
	}
	for _, dep := range c.Metadata.Dependencies {
		if vendored[dep.Name] {
			continue
		}
		lib, err := libraryFor(root, dir, rel, dep, libs)
		if err != nil {
			return nil, err
		}
		c.AddDependency(lib)
		vendored[dep.Name] = true
	}
	return c, nil
}

// libraryFor loads the catalog library that dep of the chart at rel (in
// dir) names through its file:// repository.
func libraryFor(root, dir, rel string, dep *chart.Dependency, libs map[string]string) (*chart.Chart, error) {
	fix := fmt.Sprintf("run `helm dependency build` in %s, or point its repository at a library listed in catalog.yaml (file://<path>)", rel)
	repo, ok := strings.CutPrefix(dep.Repository, "file://")
	if !ok {
		return nil, fmt.Errorf("chart %s: dependency %q (repository %q) is not vendored in charts/: %s", rel, dep.Name, dep.Repository, fix)
	}
	target := filepath.Clean(filepath.Join(dir, filepath.FromSlash(repo)))
	libPath, err := filepath.Rel(root, target)
	if err != nil || !inside(root, target) {
		return nil, fmt.Errorf("chart %s: dependency %q: %s is outside the catalog directory: %s", rel, dep.Name, repo, fix)
	}
	libPath = filepath.ToSlash(libPath)
	version, ok := libs[libPath]
	if !ok {
		return nil, fmt.Errorf("chart %s: dependency %q: %s is not a library of the catalog: add {path: %s} to libraries in catalog.yaml, or %s", rel, dep.Name, libPath, libPath, fix)
	}
	if dep.Version != "" {
		constraint, err := semver.NewConstraint(dep.Version)
		if err != nil {
			return nil, fmt.Errorf("chart %s: dependency %q: version %q: %w", rel, dep.Name, dep.Version, err)
		}
		if !constraint.Check(semver.MustParse(version)) {
			return nil, fmt.Errorf("chart %s: dependency %q wants version %s, but library %s is %s", rel, dep.Name, dep.Version, libPath, version)
		}
	}
	// A fresh load each time: AddDependency sets the chart's parent.
	lib, err := loader.LoadDir(target)
	if err != nil {
		return nil, fmt.Errorf("library %s: %w", libPath, err)
	}
	if lib.Name() != dep.Name {
		return nil, fmt.Errorf("chart %s: dependency %q points at %s, whose chart is named %q", rel, dep.Name, libPath, lib.Name())
	}
	return lib, nil
}

// loadLibrary loads the library at rel and returns its name and version.
func loadLibrary(root, rel string) (name, version string, err error) {
	dir, err := chartDir(root, rel)
	if err != nil {
		return "", "", err
	}
	c, err := loader.LoadDir(dir)
	if err != nil {
		return "", "", fmt.Errorf("library %s: %w", rel, err)
	}
	if c.Metadata.Type != "library" {
		kind := c.Metadata.Type
		if kind == "" {
			kind = "application" // Helm's default
		}
		return "", "", fmt.Errorf("library %s: Chart.yaml has type %q, want library", rel, kind)
	}
	if _, err := semver.StrictNewVersion(c.Metadata.Version); err != nil {
		return "", "", fmt.Errorf("library %s: version %q is not SemVer 2.0: %w", rel, c.Metadata.Version, err)
	}
	return c.Name(), c.Metadata.Version, nil
}
