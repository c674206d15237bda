// Package crdsync copies the CRDs of the catalog's operator charts from
// where they are pinned, never from a hand-made copy: a Go module (at the
// version go.mod requires) or a file of a mirror directory the user names
// (pinned by SHA-256). The sources are listed in crds.yaml at the root of
// the catalog; each lands in <chart>/crds/ with a header naming it.
package crdsync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// SourcesFile is the name of the list of sources in a catalog directory.
const SourcesFile = "crds.yaml"

// Source is one entry of crds.yaml: a module's files or one mirror file,
// for one chart.
type Source struct {
	// Chart is the chart directory, relative to the catalog directory.
	Chart string `json:"chart"`
	// Module is a Go module path; Files are globs inside it.
	Module string   `json:"module,omitempty"`
	Files  []string `json:"files,omitempty"`
	// Mirror is a file name in the mirror directory, and SHA256 its pinned
	// digest (hex).
	Mirror string `json:"mirror,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Sources is crds.yaml.
type Sources struct {
	Sources []Source `json:"sources"`
}

// Load reads and checks catalogDir/crds.yaml.
func Load(catalogDir string) (*Sources, error) {
	file := filepath.Join(catalogDir, SourcesFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var s Sources
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for i, src := range s.Sources {
		switch {
		case src.Chart == "" || path.IsAbs(src.Chart) || strings.Contains(src.Chart, ".."):
			err = fmt.Errorf("sources[%d]: chart %q: want a path inside the catalog", i, src.Chart)
		case (src.Module == "") == (src.Mirror == ""):
			err = fmt.Errorf("sources[%d]: set exactly one of module and mirror", i)
		case src.Module != "" && (len(src.Files) == 0 || src.SHA256 != ""):
			err = fmt.Errorf("sources[%d]: a module source needs files and no sha256", i)
		case src.Mirror != "" && (len(src.Files) != 0 || len(src.SHA256) != 64 || strings.ContainsRune(src.Mirror, '/')):
			err = fmt.Errorf("sources[%d]: a mirror source is a file name with a 64-digit sha256 and no files", i)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return &s, nil
}

// Options say where the inputs are.
type Options struct {
	// Mirror is the mirror directory; empty skips mirror sources.
	Mirror string
	// ModuleDir returns the directory and version of a Go module as the
	// catalog's go.mod pins it; nil uses GoModule.
	ModuleDir func(ctx context.Context, catalogDir, module string) (dir, version string, err error)
}

// File is one CRD file a source gives: its path in the catalog directory
// and its content (header included).
type File struct {
	Path    string
	Content []byte
}

// Resolve returns the files the sources give, sorted by path, and the
// mirror sources skipped for want of a mirror directory.
func Resolve(ctx context.Context, catalogDir string, s *Sources, opts Options) ([]File, []Source, error) {
	moduleDir := opts.ModuleDir
	if moduleDir == nil {
		moduleDir = GoModule
	}
	var files []File
	var skipped []Source
	for _, src := range s.Sources {
		crds := path.Join(src.Chart, "crds")
		if src.Mirror != "" {
			if opts.Mirror == "" {
				skipped = append(skipped, src)
				continue
			}
			data, err := os.ReadFile(filepath.Join(opts.Mirror, src.Mirror))
			if err != nil {
				return nil, nil, fmt.Errorf("mirror: %w", err)
			}
			if got := digest(data); got != src.SHA256 {
				return nil, nil, fmt.Errorf("mirror file %s has sha256 %s, but %s pins %s: use the pinned file, or update the pin on purpose",
					filepath.Join(opts.Mirror, src.Mirror), got, SourcesFile, src.SHA256)
			}
			header := fmt.Sprintf("# Source: mirror file %s (sha256 %s), via %s. Do not edit: run `make crds MIRROR=<dir>`.\n", src.Mirror, src.SHA256, SourcesFile)
			files = append(files, File{Path: path.Join(crds, src.Mirror), Content: append([]byte(header), data...)})
			continue
		}
		dir, version, err := moduleDir(ctx, catalogDir, src.Module)
		if err != nil {
			return nil, nil, err
		}
		for _, glob := range src.Files {
			matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(glob)))
			if err != nil {
				return nil, nil, err
			}
			if len(matches) == 0 {
				return nil, nil, fmt.Errorf("%s@%s: no file matches %s", src.Module, version, glob)
			}
			for _, m := range matches {
				data, err := os.ReadFile(m)
				if err != nil {
					return nil, nil, err
				}
				rel, _ := filepath.Rel(dir, m)
				header := fmt.Sprintf("# Source: %s@%s %s, via %s. Do not edit: run `make crds`.\n", src.Module, version, filepath.ToSlash(rel), SourcesFile)
				files = append(files, File{Path: path.Join(crds, filepath.Base(m)), Content: append([]byte(header), data...)})
			}
		}
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, nil, fmt.Errorf("two sources write %s", files[i].Path)
		}
	}
	return files, skipped, nil
}

// Write writes files under catalogDir, and removes the other files of the
// crds/ directories it writes to, so a CRD dropped upstream goes too.
func Write(catalogDir string, files []File) error {
	keep := map[string]bool{}
	dirs := map[string]bool{}
	for _, f := range files {
		keep[f.Path] = true
		dirs[path.Dir(f.Path)] = true
	}
	for d := range dirs {
		abs := filepath.Join(catalogDir, filepath.FromSlash(d))
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return err
		}
		entries, err := os.ReadDir(abs)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !keep[path.Join(d, e.Name())] {
				if err := os.Remove(filepath.Join(abs, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(catalogDir, filepath.FromSlash(f.Path)), f.Content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Check returns an error naming every file under catalogDir that differs
// from files, is missing, or is extra in one of their crds/ directories.
func Check(catalogDir string, files []File) error {
	var errs []error
	dirs := map[string]bool{}
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Path] = true
		dirs[path.Dir(f.Path)] = true
		got, err := os.ReadFile(filepath.Join(catalogDir, filepath.FromSlash(f.Path)))
		if err != nil {
			errs = append(errs, err)
		} else if !bytes.Equal(got, f.Content) {
			errs = append(errs, fmt.Errorf("%s differs from its source", f.Path))
		}
	}
	for d := range dirs {
		entries, _ := os.ReadDir(filepath.Join(catalogDir, filepath.FromSlash(d)))
		for _, e := range entries {
			if !keep[path.Join(d, e.Name())] {
				errs = append(errs, fmt.Errorf("%s comes from no source", path.Join(d, e.Name())))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w (run `make crds MIRROR=<dir>`)", errors.Join(errs...))
	}
	return nil
}

// GoModule returns the directory (downloading the module when needed) and
// the version of module as the go.mod in catalogDir requires it, asking the
// go command.
func GoModule(ctx context.Context, catalogDir, module string) (string, string, error) {
	var info struct{ Version, Dir string }
	query := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = catalogDir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return json.Unmarshal(out, &info)
	}
	if err := query("list", "-m", "-json", module); err != nil {
		return "", "", err
	}
	if info.Dir == "" {
		if err := query("mod", "download", "-json", module+"@"+info.Version); err != nil {
			return "", "", err
		}
	}
	if info.Dir == "" {
		return "", "", fmt.Errorf("%s@%s: the go command gave no directory", module, info.Version)
	}
	return info.Dir, info.Version, nil
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
