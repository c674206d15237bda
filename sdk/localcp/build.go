package localcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// Layout is the cache directory layout. Everything under it is generated and
// ignored by git.
type Layout struct {
	// Root is the cache directory, e.g. <repo>/.cache.
	Root string
}

// BinDir holds the built binaries.
func (l Layout) BinDir() string { return filepath.Join(l.Root, "bin") }

// Binary returns the path of a built binary.
func (l Layout) Binary(name string) string { return filepath.Join(l.BinDir(), name) }

// BuildDir holds the generated build module of a component.
func (l Layout) BuildDir(component string) string { return filepath.Join(l.Root, "build", component) }

// CRDDir holds CRD manifests copied out of the Go module cache.
func (l Layout) CRDDir() string { return filepath.Join(l.Root, "crds") }

// StateDir is the default state directory of the cozystack-local CLI.
func (l Layout) StateDir() string { return filepath.Join(l.Root, "local") }

func (l Layout) stampFile(binary string) string {
	return filepath.Join(l.BinDir(), ".stamps", binary)
}

// DefaultLayout finds the cache directory: $COZYSTACK_CACHE_DIR if set, else
// .cache at the root of this repository when run inside it (found by walking
// up from the working directory to the go.work next to sdk/localcp), else
// the user cache directory.
func DefaultLayout() Layout {
	if d := os.Getenv("COZYSTACK_CACHE_DIR"); d != "" {
		abs, err := filepath.Abs(d)
		if err == nil {
			d = abs
		}
		return Layout{Root: d}
	}
	if root, ok := RepoRoot(); ok {
		return Layout{Root: filepath.Join(root, ".cache")}
	}
	if d, err := os.UserCacheDir(); err == nil {
		return Layout{Root: filepath.Join(d, "cozystack-local")}
	}
	return Layout{Root: filepath.Join(os.TempDir(), "cozystack-local")}
}

// RepoRoot walks up from the working directory to this repository's root:
// the nearest directory holding go.work beside sdk/localcp/versions.yaml.
// contracts/doctest.Root applies the same rule (contracts may not import
// sdk, boundaries.yaml); its TestRootIsLocalcpRepoRoot checks that both
// agree.
func RepoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if fileExists(filepath.Join(dir, "go.work")) && fileExists(filepath.Join(dir, "sdk", "localcp", "versions.yaml")) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// BuildOptions configure Build.
type BuildOptions struct {
	Layout Layout
	// Binaries limits the build to these binaries; empty means those of
	// every component not marked optional.
	Binaries []string
	// Out receives progress lines; nil discards them.
	Out io.Writer
	// ProgressInterval is how often a running build reports; default 20s.
	ProgressInterval time.Duration
}

// Build compiles the pinned components into Layout.BinDir and copies the
// pinned CRDs into Layout.CRDDir. It is idempotent: a binary whose stamp
// (a hash of its build module, flags and Go version) matches is not rebuilt.
// It needs the go command and the Go module proxy (or a warm module cache).
func Build(ctx context.Context, opts BuildOptions) error {
	pins, err := LoadPins()
	if err != nil {
		return err
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	if opts.ProgressInterval == 0 {
		opts.ProgressInterval = 20 * time.Second
	}
	want := map[string]bool{}
	for _, b := range opts.Binaries {
		if _, ok := pins.ComponentFor(b); !ok {
			return fmt.Errorf("unknown binary %q: versions.yaml builds %s", b, strings.Join(allBinaries(pins), ", "))
		}
		want[b] = true
	}
	goVersion, err := goEnv(ctx, "GOVERSION")
	if err != nil {
		return err
	}
	for _, c := range pins.Components {
		if len(want) == 0 && c.Optional {
			fmt.Fprintf(out, "  %-24s optional, not built by default: cozystack-local build %s\n", strings.Join(c.BinaryNames(), ","), strings.Join(c.BinaryNames(), " "))
			continue
		}
		var binaries []string
		for _, b := range c.BinaryNames() {
			if len(want) == 0 || want[b] {
				binaries = append(binaries, b)
			}
		}
		if len(binaries) == 0 {
			continue
		}
		if err := buildComponent(ctx, opts, out, c, binaries, goVersion); err != nil {
			return fmt.Errorf("build %s (%s@%s): %w", c.Name, c.Module, c.Version, err)
		}
	}
	return CopyCRDs(ctx, pins, opts.Layout, out)
}

func allBinaries(p *Pins) []string {
	var all []string
	for _, c := range p.Components {
		all = append(all, c.BinaryNames()...)
	}
	return all
}

// moduleInfo is the subset of `go mod download -json` we use.
type moduleInfo struct {
	Path, Version, GoMod, Dir, Time, Error string
}

func downloadModule(ctx context.Context, module, version string) (*moduleInfo, error) {
	tmp, err := os.MkdirTemp("", "localcp-mod-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	var info moduleInfo
	if jerr := json.Unmarshal(data, &info); jerr == nil && info.Error != "" {
		return nil, fmt.Errorf("go mod download %s@%s: %s", module, version, info.Error)
	}
	if err != nil {
		return nil, fmt.Errorf("go mod download %s@%s: %v: %s", module, version, err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	return &info, nil
}

func goEnv(ctx context.Context, key string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", key).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w (is Go installed and on PATH?)", key, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func buildComponent(ctx context.Context, opts BuildOptions, out io.Writer, c Component, binaries []string, goVersion string) error {
	l := opts.Layout
	info, err := downloadModule(ctx, c.Module, c.Version)
	if err != nil {
		return err
	}
	upstream, err := os.ReadFile(info.GoMod)
	if err != nil {
		return err
	}
	gomod, err := BuildGoMod(c, upstream, "")
	if err != nil {
		return err
	}
	ldflags := ""
	if c.KubernetesVersionLDFlags {
		date := info.Time
		if date == "" {
			date = "1970-01-01T00:00:00Z"
		}
		if ldflags, err = KubernetesLDFlags(c.Version, date); err != nil {
			return err
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", gomod, ldflags, goVersion)
	stamp := hex.EncodeToString(h.Sum(nil))

	var stale []string
	for _, b := range binaries {
		got, _ := os.ReadFile(l.stampFile(b))
		if !fileExists(l.Binary(b)) || strings.TrimSpace(string(got)) != stamp {
			stale = append(stale, b)
		}
	}
	if len(stale) == 0 {
		fmt.Fprintf(out, "  %-24s up to date (%s@%s)\n", strings.Join(binaries, ","), c.Module, c.Version)
		return nil
	}

	dir := l.BuildDir(c.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !bytes.Equal(old, gomod) {
		// A changed pin invalidates the recorded sums and requirements.
		_ = os.Remove(filepath.Join(dir, "go.sum"))
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), gomod, 0o644); err != nil {
			return err
		}
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false")

	var pkgs []string
	for _, b := range stale {
		pkgs = append(pkgs, c.Package(b))
	}
	fmt.Fprintf(out, "  %-24s resolving %s@%s\n", strings.Join(stale, ","), c.Module, c.Version)
	get := exec.CommandContext(ctx, "go", append([]string{"get"}, withVersion(pkgs, c.Version)...)...)
	get.Dir, get.Env = dir, env
	if b, err := get.CombinedOutput(); err != nil {
		return fmt.Errorf("go get: %v\n%s", err, b)
	}

	if err := os.MkdirAll(filepath.Join(l.BinDir(), ".stamps"), 0o755); err != nil {
		return err
	}
	for _, b := range stale {
		start := time.Now()
		fmt.Fprintf(out, "  %-24s building %s\n", b, c.Package(b))
		args := []string{"build", "-v", "-trimpath", "-o", l.Binary(b) + ".tmp"}
		if ldflags != "" {
			args = append(args, "-ldflags", ldflags)
		}
		args = append(args, c.Package(b))
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir, cmd.Env = dir, env
		if err := runWithProgress(cmd, out, b, start, opts.ProgressInterval); err != nil {
			return err
		}
		if err := os.Rename(l.Binary(b)+".tmp", l.Binary(b)); err != nil {
			return err
		}
		if err := os.WriteFile(l.stampFile(b), []byte(stamp+"\n"), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-24s built in %s\n", b, time.Since(start).Round(time.Second))
	}
	return nil
}

func withVersion(pkgs []string, version string) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = p + "@" + version
	}
	return out
}

// runWithProgress runs a `go build -v`, counting the packages it compiles
// and reporting every interval, so a 10-minute cold build is not silent.
func runWithProgress(cmd *exec.Cmd, out io.Writer, name string, start time.Time, interval time.Duration) error {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	var tail tailBuffer
	var compiled atomic.Int64
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			tail.add(line)
			if !strings.Contains(line, " ") {
				compiled.Add(1)
			}
		}
	}()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	waitErr := make(chan error, 1)
	go func() {
		<-done
		waitErr <- cmd.Wait()
	}()
	for {
		select {
		case err := <-waitErr:
			if err != nil {
				return fmt.Errorf("go build: %v\n%s", err, tail.String())
			}
			return nil
		case <-ticker.C:
			fmt.Fprintf(out, "  %-24s still building: %d packages compiled (cached ones not counted), %s elapsed\n", name, compiled.Load(), time.Since(start).Round(time.Second))
		}
	}
}

// tailBuffer keeps the last lines of a command's output for error messages.
type tailBuffer struct{ lines []string }

func (t *tailBuffer) add(s string) {
	t.lines = append(t.lines, s)
	if len(t.lines) > 40 {
		t.lines = t.lines[len(t.lines)-40:]
	}
}

func (t *tailBuffer) String() string { return strings.Join(t.lines, "\n") }

// CopyCRDs copies the pinned CRD manifests from the Go module cache into
// Layout.CRDDir, one file per manifest, named after the manifest.
func CopyCRDs(ctx context.Context, pins *Pins, l Layout, out io.Writer) error {
	if err := os.MkdirAll(l.CRDDir(), 0o755); err != nil {
		return err
	}
	for _, src := range pins.CRDs {
		info, err := downloadModule(ctx, src.Module, src.Version)
		if err != nil {
			return err
		}
		for _, f := range src.Files {
			data, err := os.ReadFile(filepath.Join(info.Dir, f))
			if err != nil {
				return fmt.Errorf("CRD %s in %s@%s: %w", f, src.Module, src.Version, err)
			}
			dst := filepath.Join(l.CRDDir(), filepath.Base(f))
			if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
				continue
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(out, "  %-24s from %s@%s\n", filepath.Base(f), src.Module, src.Version)
		}
	}
	return nil
}

// MissingBinaries returns the binaries among names that are not built yet.
func (l Layout) MissingBinaries(names ...string) []string {
	var missing []string
	for _, n := range names {
		if !fileExists(l.Binary(n)) {
			missing = append(missing, n)
		}
	}
	return missing
}

// ErrNotBuilt reports binaries that Build has not produced yet.
var ErrNotBuilt = errors.New("binaries not built")
