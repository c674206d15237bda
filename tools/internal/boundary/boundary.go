package boundary

import (
	"fmt"
	"os"
	"path/filepath"

	"cozystack.io/tools/internal/boundary/config"
	"cozystack.io/tools/internal/boundary/edge"
	"cozystack.io/tools/internal/boundary/goimports"
	"cozystack.io/tools/internal/boundary/helm"
	"cozystack.io/tools/internal/boundary/replacement"
	"cozystack.io/tools/internal/boundary/report"
)

// Options say what to lint.
type Options struct {
	// Root is the tree to scan.
	Root string
	// Config is the configuration file; empty means Root/boundaries.yaml
	// when it exists, else an inferred configuration.
	Config string
	// Infer ignores any configuration file.
	Infer bool
}

// ConfigError is an error in the configuration or the options, as opposed
// to a failure to read the tree: the command line exits 2 on it.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Run scans the tree and returns the judged report, each forbidden
// helm-lookup and helm-capabilities edge with what the contracts offer
// instead. Errors are a *ConfigError for a bad configuration or root (a
// module path that matches nothing in the tree among them), or a failure of
// the go command or the file system.
func Run(opts Options) (*report.Report, error) {
	if st, err := os.Stat(opts.Root); err != nil || !st.IsDir() {
		return nil, &ConfigError{fmt.Errorf("root %q is not a directory", opts.Root)}
	}
	cfg, source, err := loadConfig(opts)
	if err != nil {
		return nil, &ConfigError{err}
	}
	if source != "" {
		if err := cfg.CheckPaths(opts.Root); err != nil {
			return nil, &ConfigError{fmt.Errorf("%s: %w", source, err)}
		}
	}
	var edges []edge.Edge
	goEdges, err := goimports.Scan(opts.Root, cfg)
	if err != nil {
		return nil, err
	}
	helmEdges, err := helm.Scan(opts.Root, cfg)
	if err != nil {
		return nil, err
	}
	edges = append(append(edges, goEdges...), helmEdges...)
	instead := replacement.New(cfg.Replacements)
	for i := range edges {
		e := &edges[i]
		cfg.Judge(e)
		if !e.Allowed && (e.Rule == edge.HelmLookup || e.Rule == edge.HelmCapabilities) {
			e.Instead = instead.For(e.Rule, e.Target)
		}
	}
	return report.New(opts.Root, source, cfg.Modules, edges), nil
}

// loadConfig returns the configuration and the path to show for it: as
// given, or relative to the root when found there, "" when inferred.
func loadConfig(opts Options) (*config.Config, string, error) {
	file, shown := opts.Config, opts.Config
	if opts.Infer {
		if file != "" {
			return nil, "", fmt.Errorf("--config and --infer exclude each other")
		}
	} else if file == "" {
		if _, err := os.Stat(filepath.Join(opts.Root, config.FileName)); err == nil {
			file, shown = filepath.Join(opts.Root, config.FileName), config.FileName
		}
	}
	if file == "" {
		cfg, err := config.Infer(opts.Root)
		return cfg, "", err
	}
	cfg, err := config.Load(file)
	return cfg, shown, err
}
