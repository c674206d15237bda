package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"oras.land/oras-go/v2/content/oci"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/conformance"
	"cozystack.io/contracts/schemas"
)

func newConformance() *cobra.Command {
	var platformVersion, previous, kubeconfig, format, tag string
	var live, plainHTTP, ads, keep bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "conformance <catalog-dir|oci-layout-dir|host/repository:tag> --platform-version X",
		Short: "Check a catalog against the contracts K1–K6 of a platform version",
		Long: `Conformance runs the contract conformance suite (cozystack.io/contracts/conformance)
on a catalog: a catalog directory, an OCI image-layout directory or an artifact in a
registry. Static checks: ApplicationDefinitions valid under K1, the _cluster and
_namespace keys the charts read provided by K2, requiredProperties known K3 properties,
values schemas strict (K4), the cozy-lib pin and helpers (K5), dashboard metadata (K6),
minPlatformVersion not newer than the platform. An artifact carries the
ApplicationDefinitions of applicationdefinitions/ as definitions layers, checked
like the directory's; one without them (built by an older cozypkg) skips K1 and K6.

--previous compares the values schemas with the catalog's previous version (a
directory or an artifact) and reports removed and renamed keys. --live also installs
the catalog's ApplicationDefinitions on the cluster of --kubeconfig (where cozystack-api
serves) and creates, reads and deletes one object of each kind. --ads checks
ApplicationDefinition files or directories of them on their own (K1, K6).

The report is a table, or JSON or YAML with -o. The exit status is non-zero when any
finding is an error; warnings do not fail. Rules: contracts/conformance (Rules).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			if platformVersion == "" {
				return fmt.Errorf("--platform-version is required: the platform release to check against (this build knows %s)", knownPlatforms())
			}
			if !ads && len(args) != 1 {
				return errors.New("give one catalog: a directory, an OCI layout or host/repository:tag")
			}
			ctx := cmd.Context()
			opts := conformance.Options{PlatformVersion: platformVersion}
			var src *conformance.Source
			var err error
			if ads {
				if live || previous != "" {
					return errors.New("--ads checks ApplicationDefinition files alone: --live and --previous need a catalog")
				}
				src, err = loadADs(args)
			} else {
				src, err = loadCatalog(ctx, args[0], tag, plainHTTP)
			}
			if err != nil {
				return err
			}
			if previous != "" {
				if opts.Previous, err = loadCatalog(ctx, previous, "", plainHTTP); err != nil {
					return fmt.Errorf("--previous: %w", err)
				}
			}
			report, err := conformance.Check(src, opts)
			if err != nil {
				return err
			}
			if live {
				cfg, err := kubeConfig(kubeconfig)
				if err != nil {
					return err
				}
				findings, err := conformance.Live(ctx, cfg, src, conformance.LiveOptions{Timeout: timeout, Keep: keep})
				if err != nil {
					return fmt.Errorf("live checks: %w", err)
				}
				report.Merge(findings)
			} else {
				report.Skipped = append(report.Skipped, "LIVE-*: run with --live --kubeconfig to check against a cluster")
			}
			if err := printReport(cmd.OutOrStdout(), report, format); err != nil {
				return err
			}
			if n := len(report.Errors()); n > 0 {
				return fmt.Errorf("%s does not conform to the contracts of platform %s: %d error(s)", report.Source, platformVersion, n)
			}
			return nil
		},
	}
	c.Flags().StringVar(&platformVersion, "platform-version", "", "platform release to check against, e.g. 0.1.0 (required)")
	c.Flags().StringVar(&previous, "previous", "", "the catalog's previous version (directory, OCI layout or reference), for the K4 cross-version rules")
	c.Flags().BoolVar(&live, "live", false, "also run the live checks on the cluster of --kubeconfig")
	c.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster for --live (default $KUBECONFIG)")
	c.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long --live waits for a kind to be served or an object to go")
	c.Flags().BoolVar(&keep, "keep", false, "with --live, leave the ApplicationDefinitions and the test namespace in place")
	c.Flags().BoolVar(&ads, "ads", false, "the arguments are ApplicationDefinition files or directories of them, checked alone (K1, K6)")
	c.Flags().StringVar(&tag, "tag", "", "tag to check in an OCI layout (default: its only tag)")
	c.Flags().BoolVar(&plainHTTP, "plain-http", false, "use HTTP instead of HTTPS for a registry reference")
	c.Flags().StringVarP(&format, "output", "o", "", "print the report as json or yaml instead of a table")
	return c
}

func knownPlatforms() string {
	var l []string
	for _, v := range schemas.Versions {
		l = append(l, v.Platform+".x")
	}
	return strings.Join(l, ", ")
}

// loadCatalog reads a catalog directory, an OCI layout directory or a
// registry reference.
func loadCatalog(ctx context.Context, arg, tag string, plainHTTP bool) (*conformance.Source, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		if _, err := os.Stat(filepath.Join(arg, artifact.CatalogFile)); err == nil {
			return conformance.LoadDir(arg)
		}
		if _, err := os.Stat(filepath.Join(arg, "oci-layout")); err != nil {
			return nil, fmt.Errorf("%s is neither a catalog directory (no %s) nor an OCI image layout (no oci-layout)", arg, artifact.CatalogFile)
		}
		store, err := oci.NewFromFS(ctx, os.DirFS(arg))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arg, err)
		}
		if tag == "" {
			var tags []string
			if err := store.Tags(ctx, "", func(page []string) error { tags = append(tags, page...); return nil }); err != nil {
				return nil, err
			}
			if len(tags) != 1 {
				return nil, fmt.Errorf("%s has the tags %v: choose one with --tag", arg, tags)
			}
			tag = tags[0]
		}
		return conformance.LoadArtifact(ctx, store, tag, arg+":"+tag)
	}
	repo, ref, err := artifact.NewRepository(arg, artifact.RemoteOptions{PlainHTTP: plainHTTP})
	if err != nil {
		return nil, fmt.Errorf("%s is not a directory, and not a registry reference: %w", arg, err)
	}
	if ref == "" {
		return nil, fmt.Errorf("%s names no tag or digest: add :<tag>", arg)
	}
	return conformance.LoadArtifact(ctx, repo, ref, arg)
}

// loadADs collects ApplicationDefinition files: the .yaml files of each
// directory argument, and each file argument.
func loadADs(args []string) (*conformance.Source, error) {
	var files []string
	root := args[0]
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, a)
			root = filepath.Dir(a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s has no .yaml files", a)
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	return conformance.LoadADFiles(root, files)
}

func kubeConfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return cfg, nil
}

func printReport(w io.Writer, r *conformance.Report, format string) error {
	switch format {
	case "json":
		return r.WriteJSON(w)
	case "yaml":
		data, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	default:
		return r.WriteTable(w)
	}
}
