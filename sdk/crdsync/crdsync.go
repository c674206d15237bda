package crdsync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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

// The errors callers can tell apart with errors.Is.
var (
	// ErrInvalidSource: an entry of crds.yaml is not one of the three
	// kinds of source (see the package doc and Source).
	ErrInvalidSource = errors.New("invalid source")
	// ErrDigestMismatch: a mirror file is not the one crds.yaml pins.
	ErrDigestMismatch = errors.New("mirror file does not match its pin")
	// ErrOutOfSync: the crds/ of a chart are not what the sources give.
	ErrOutOfSync = errors.New("CRDs out of sync with " + SourcesFile)
)

// ControllerTools is the module of controller-gen; go.mod requires it as a
// tool, which pins the generator's version.
const ControllerTools = "sigs.k8s.io/controller-tools"

// Source is one entry of crds.yaml: a module's files, CRDs generated from
// a module's packages, or one mirror file, for one chart.
type Source struct {
	// Chart is the chart directory, relative to the catalog directory.
	Chart string `json:"chart"`
	// Module is a Go module path. Files are globs inside it; Generate are
	// its packages (paths inside it) to generate CRDs from.
	Module   string   `json:"module,omitempty"`
	Files    []string `json:"files,omitempty"`
	Generate []string `json:"generate,omitempty"`
	// Version pins the module of a files source; empty means the version
	// go.mod requires. A generate source always uses go.mod's version,
	// since controller-gen loads its packages through the catalog module.
	Version string `json:"version,omitempty"`
	// Options are controller-gen crd options, e.g. allowDangerousTypes=true.
	Options []string `json:"options,omitempty"`
	// Exclude are globs of file names the source gives that are left out.
	Exclude []string `json:"exclude,omitempty"`
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
		if err := src.check(); err != nil {
			return nil, fmt.Errorf("%s: sources[%d]: %w: %w", file, i, ErrInvalidSource, err)
		}
	}
	return &s, nil
}

func (src Source) check() error {
	switch {
	case src.Chart == "" || path.IsAbs(src.Chart) || strings.Contains(src.Chart, ".."):
		return fmt.Errorf("chart %q: want a path inside the catalog", src.Chart)
	case (src.Module == "") == (src.Mirror == ""):
		return errors.New("set exactly one of module and mirror")
	case src.Module != "" && (len(src.Files) == 0) == (len(src.Generate) == 0):
		return errors.New("a module source needs exactly one of files and generate")
	case src.Module != "" && src.SHA256 != "":
		return errors.New("a module source has no sha256 (the Go checksum database pins it)")
	case len(src.Generate) > 0 && src.Version != "":
		return errors.New("a generate source takes its version from go.mod (controller-gen loads the packages through it): remove version")
	case len(src.Files) > 0 && len(src.Options) > 0:
		return errors.New("options are for generate sources")
	case src.Version != "" && !strings.HasPrefix(src.Version, "v"):
		return fmt.Errorf("version %q: want a module version such as v1.2.3", src.Version)
	case src.Mirror != "" && (len(src.Files) != 0 || len(src.Generate) != 0 || src.Version != "" || len(src.Options) != 0 || len(src.Exclude) != 0 ||
		len(src.SHA256) != 64 || strings.ContainsRune(src.Mirror, '/')):
		return errors.New("a mirror source is a file name with a 64-digit sha256, and nothing else")
	}
	return nil
}

// ModuleDirFunc returns the directory and the version of a Go module:
// version when given, else the version the go.mod in catalogDir requires.
// GoModule is the real one; tests stand in fakes.
type ModuleDirFunc func(ctx context.Context, catalogDir, module, version string) (dir, resolved string, err error)

// GenerateFunc generates CRDs from packages (import paths) with
// controller-gen crd options, in catalogDir's module, and returns the files
// it writes by name. ControllerGen is the real one.
type GenerateFunc func(ctx context.Context, catalogDir string, packages, options []string) (map[string][]byte, error)

// Options say where the inputs are.
type Options struct {
	// Mirror is the mirror directory; empty skips mirror sources.
	Mirror string
	// ModuleDir finds Go modules; nil uses GoModule.
	ModuleDir ModuleDirFunc
	// Generate runs controller-gen; nil uses ControllerGen.
	Generate GenerateFunc
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
	if opts.ModuleDir == nil {
		opts.ModuleDir = GoModule
	}
	if opts.Generate == nil {
		opts.Generate = ControllerGen
	}
	var files []File
	var skipped []Source
	for _, src := range s.Sources {
		var got []File
		var err error
		switch {
		case src.Mirror != "" && opts.Mirror == "":
			skipped = append(skipped, src)
			continue
		case src.Mirror != "":
			got, err = mirrorFiles(src, opts)
		case len(src.Generate) > 0:
			got, err = generatedFiles(ctx, catalogDir, src, opts)
		default:
			got, err = moduleFiles(ctx, catalogDir, src, opts)
		}
		if err != nil {
			return nil, nil, err
		}
		files = append(files, got...)
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, nil, fmt.Errorf("two sources write %s", files[i].Path)
		}
	}
	return files, skipped, nil
}

func mirrorFiles(src Source, opts Options) ([]File, error) {
	data, err := os.ReadFile(filepath.Join(opts.Mirror, src.Mirror))
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	if got := digest(data); got != src.SHA256 {
		return nil, fmt.Errorf("%w: %s has sha256 %s, but %s pins %s: use the pinned file, or update the pin on purpose",
			ErrDigestMismatch, filepath.Join(opts.Mirror, src.Mirror), got, SourcesFile, src.SHA256)
	}
	header := fmt.Sprintf("# Source: mirror file %s (sha256 %s), via %s. Do not edit: run `make crds MIRROR=<dir>`.\n", src.Mirror, src.SHA256, SourcesFile)
	return []File{{Path: path.Join(src.Chart, "crds", src.Mirror), Content: append([]byte(header), data...)}}, nil
}

func moduleFiles(ctx context.Context, catalogDir string, src Source, opts Options) ([]File, error) {
	dir, version, err := opts.ModuleDir(ctx, catalogDir, src.Module, src.Version)
	if err != nil {
		return nil, err
	}
	var files []File
	for _, glob := range src.Files {
		matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(glob)))
		if err != nil {
			return nil, err
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("%s@%s: no file matches %s", src.Module, version, glob)
		}
		for _, m := range matches {
			if excluded(src, filepath.Base(m)) {
				continue
			}
			data, err := os.ReadFile(m)
			if err != nil {
				return nil, err
			}
			rel, _ := filepath.Rel(dir, m)
			header := fmt.Sprintf("# Source: %s@%s %s, via %s. Do not edit: run `make crds`.\n", src.Module, version, filepath.ToSlash(rel), SourcesFile)
			files = append(files, File{Path: path.Join(src.Chart, "crds", filepath.Base(m)), Content: append([]byte(header), data...)})
		}
	}
	return files, nil
}

func generatedFiles(ctx context.Context, catalogDir string, src Source, opts Options) ([]File, error) {
	_, version, err := opts.ModuleDir(ctx, catalogDir, src.Module, "")
	if err != nil {
		return nil, err
	}
	_, genVersion, err := opts.ModuleDir(ctx, catalogDir, ControllerTools, "")
	if err != nil {
		return nil, fmt.Errorf("controller-gen: %w (go.mod must require it as a tool)", err)
	}
	pkgs := make([]string, len(src.Generate))
	for i, p := range src.Generate {
		pkgs[i] = src.Module + "/" + p
	}
	out, err := opts.Generate(ctx, catalogDir, pkgs, src.Options)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("controller-gen made no CRD from %s@%s %v", src.Module, version, src.Generate)
	}
	header := fmt.Sprintf("# Source: generated by controller-gen (%s@%s) from %s@%s %s, via %s. Do not edit: run `make crds`.\n",
		ControllerTools, genVersion, src.Module, version, strings.Join(src.Generate, " "), SourcesFile)
	var files []File
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if excluded(src, name) {
			continue
		}
		files = append(files, File{Path: path.Join(src.Chart, "crds", name), Content: append([]byte(header), out[name]...)})
	}
	return files, nil
}

func excluded(src Source, name string) bool {
	for _, g := range src.Exclude {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
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
		return fmt.Errorf("%w (run `make crds MIRROR=<dir>`):\n%w", ErrOutOfSync, errors.Join(errs...))
	}
	return nil
}

// goCommand runs the go command in dir, outside any workspace, and returns
// its standard output.
func goCommand(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// GoModule returns the directory (downloading the module when needed) and
// the version of module: version when given, fetched with `go mod
// download` (which checks it against the Go checksum database), else the
// version the go.mod in catalogDir requires.
func GoModule(ctx context.Context, catalogDir, module, version string) (string, string, error) {
	var info struct{ Version, Dir, Error string }
	query := func(dir string, args ...string) error {
		out, err := goCommand(ctx, dir, args...)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(out, &info); err != nil {
			return err
		}
		if info.Error != "" {
			return fmt.Errorf("go %s: %s", strings.Join(args, " "), info.Error)
		}
		return nil
	}
	if version != "" {
		// Outside the catalog module, so that go.mod is neither read nor
		// changed: the pin is crds.yaml's.
		tmp, err := os.MkdirTemp("", "crdsync-")
		if err != nil {
			return "", "", err
		}
		defer os.RemoveAll(tmp)
		if err := query(tmp, "mod", "download", "-json", module+"@"+version); err != nil {
			return "", "", err
		}
	} else {
		if err := query(catalogDir, "list", "-m", "-json", module); err != nil {
			return "", "", err
		}
		if info.Dir == "" {
			if err := query(catalogDir, "mod", "download", "-json", module+"@"+info.Version); err != nil {
				return "", "", err
			}
		}
	}
	if info.Dir == "" {
		return "", "", fmt.Errorf("%s@%s: the go command gave no directory", module, info.Version)
	}
	return info.Dir, info.Version, nil
}

// ControllerGen runs `go tool controller-gen crd` in catalogDir (whose
// go.mod pins controller-gen as a tool and requires the packages' modules)
// and returns the CRD files it writes.
func ControllerGen(ctx context.Context, catalogDir string, packages, options []string) (map[string][]byte, error) {
	out, err := os.MkdirTemp("", "crdsync-gen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	crd := "crd"
	if len(options) > 0 {
		crd += ":" + strings.Join(options, ",")
	}
	args := []string{"tool", "controller-gen", crd}
	for _, p := range packages {
		args = append(args, "paths="+p)
	}
	args = append(args, "output:crd:dir="+out)
	if _, err := goCommand(ctx, catalogDir, args...); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = data
	}
	return files, nil
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
