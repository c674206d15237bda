package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"cozystack.io/contracts/artifact"
)

// The readers below cozypkg (Helm's chart loader, os.ReadFile, os.Stat)
// meet a symbolic link whose target is missing as "no such file" for the
// target, or as a file that is not there (a catalog.yaml that is a
// dangling link made "neither a catalog directory nor an OCI layout").
// So every tree cozypkg reads is walked first, and a dangling link is an
// error naming the link and its target.

// linkError describes the symbolic link p that os.Stat could not follow
// (err): dangling, or a loop.
func linkError(p string, err error) error {
	target, rerr := os.Readlink(p)
	if rerr != nil {
		target = "?"
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is a dangling symbolic link: its target %s does not exist", p, target)
	}
	return fmt.Errorf("%s is a symbolic link to %s that does not resolve: %w", p, target, err)
}

// checkLinks walks each of roots (paths under base; a root that does not
// exist is left to the reader to report) and returns a linkError for the
// first symbolic link that does not resolve. Links to directories inside
// base are walked too, as Helm's loader follows them; links leading out of
// base are not (the build refuses those itself).
func checkLinks(base string, roots ...string) error {
	realBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		if _, lerr := os.Lstat(base); lerr == nil {
			return linkError(base, err)
		}
		return nil
	}
	if realBase, err = filepath.Abs(realBase); err != nil {
		return err
	}
	seen := map[string]bool{}
	var walk func(root string) error
	walk = func(root string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == root && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			st, err := os.Stat(p)
			if err != nil {
				return linkError(p, err)
			}
			if !st.IsDir() {
				return nil
			}
			real, err := filepath.EvalSymlinks(p)
			if err == nil {
				real, err = filepath.Abs(real)
			}
			if err != nil {
				return linkError(p, err)
			}
			if seen[real] || !inside(realBase, real) {
				return nil
			}
			seen[real] = true
			// The trailing separator makes WalkDir follow the link.
			return walk(p + string(filepath.Separator))
		})
	}
	for _, r := range roots {
		if err := walk(r); err != nil {
			return err
		}
	}
	return nil
}

// inside reports whether p is root or below it; both absolute and clean.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkCatalogLinks checks what a build or a conformance run reads of the
// catalog directory dir: catalog.yaml, applicationdefinitions/ and, when
// catalog.yaml loads, the charts and libraries it names (when it does not,
// the build or the check says why). The rest of the directory is not read,
// so a dangling link there does not matter.
func checkCatalogLinks(dir string) error {
	roots := []string{filepath.Join(dir, artifact.CatalogFile), filepath.Join(dir, artifact.DefinitionsDir)}
	if err := checkLinks(dir, roots...); err != nil {
		return err
	}
	cat, err := artifact.LoadCatalog(dir)
	if err != nil {
		return nil
	}
	roots = roots[:0]
	for _, l := range cat.Libraries {
		roots = append(roots, filepath.Join(dir, filepath.FromSlash(l.Path)))
	}
	for _, p := range cat.ChartPaths() {
		roots = append(roots, filepath.Join(dir, filepath.FromSlash(p)))
	}
	return checkLinks(dir, roots...)
}

// checkChartTreeLinks checks the trees vendor-lib searches for charts,
// skipping what chartlib.FindDependents skips (testdata and hidden
// directories, which may hold dangling links on purpose): a Chart.yaml
// that is a dangling link would make its chart silently not found.
func checkChartTreeLinks(roots ...string) error {
	for _, root := range roots {
		if err := checkLinks(root); err != nil {
			return err
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
				return filepath.SkipDir
			case d.Type()&fs.ModeSymlink != 0:
				if _, err := os.Stat(p); err != nil {
					return linkError(p, err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// exists reports whether p is there, even as a dangling link: which kind
// of directory an argument is must not hinge on a link resolving.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
