package main

import (
	"context"
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

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/conformance"
	"cozystack.io/contracts/schemas"
)

func newConformance() *cobra.Command {
	var platformVersion, previous, kubeconfig, tag string
	var live, plainHTTP, ads, keep bool
	var timeout time.Duration
	var format *output
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
ApplicationDefinition files, or the *.yaml and *.yml files directly in directories
(not their subdirectories), on their own (K1, K6); an input holding no
ApplicationDefinition fails ("0 ApplicationDefinitions found in <input>").

The report is a table, or JSON or YAML with -o; it says what was checked: the
charts and ApplicationDefinitions of the catalog, or the ApplicationDefinitions of
each --ads input ("checked" in JSON and YAML). The exit status is 1 when any finding
is an error (warnings do not fail), 2 on a usage error (cozypkg --help lists them).
Rules: contracts/conformance (Rules).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if platformVersion == "" {
				return usagef("--platform-version is required: the platform release to check against (this build knows %s)", knownPlatforms())
			}
			if _, err := schemas.Versions.ForPlatform(platformVersion); err != nil {
				return usagef("--platform-version: %w", err)
			}
			if ads && (live || previous != "") {
				return usagef("--ads checks ApplicationDefinition files alone: --live and --previous need a catalog")
			}
			if !ads && len(args) != 1 {
				return usagef("give one catalog: a directory, an OCI layout or host/repository:tag (--ads takes several ApplicationDefinition files or directories)")
			}
			ctx := cmd.Context()
			opts := conformance.Options{PlatformVersion: platformVersion}
			var src *conformance.Source
			var inputs []checked
			var err error
			if ads {
				src, inputs, err = loadADs(args)
			} else if src, err = loadCatalog(ctx, args[0], tag, plainHTTP); err == nil {
				inputs = []checked{catalogChecked(src)}
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
			switch {
			case ads:
				report.Skipped = append(report.Skipped, "catalog, K2, K4, K5 and LIVE-* rules: --ads checks ApplicationDefinitions alone (K1, K6)")
			case live:
				cfg, err := kubeConfig(kubeconfig)
				if err != nil {
					return err
				}
				findings, err := conformance.Live(ctx, cfg, src, conformance.LiveOptions{Timeout: timeout, Keep: keep})
				if err != nil {
					return fmt.Errorf("live checks: %w", err)
				}
				report.Merge(findings)
			default:
				report.Skipped = append(report.Skipped, "LIVE-*: run with --live --kubeconfig to check against a cluster")
			}
			out := conformanceReport{Report: report, Checked: inputs}
			if err := format.write(cmd.OutOrStdout(), out, out.writeTable); err != nil {
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
	format = addOutput(c, "the report: a table, or json or yaml")
	return c
}

// conformanceReport is what conformance prints: the suite's Report and
// what each input held, "checked" beside the Report's fields in JSON and
// YAML (marshal it: the promoted Report.WriteJSON would leave it out).
type conformanceReport struct {
	*conformance.Report
	Checked []checked `json:"checked"`
}

// checked is what one input of a run held, so that a run that checked
// nothing cannot pass unnoticed.
type checked struct {
	// Input is the argument: the catalog directory, layout or reference,
	// or an --ads file or directory.
	Input string `json:"input"`
	// Charts are the catalog's charts that loaded (the K2, K4 and K5
	// rules read them); absent for --ads.
	Charts *int `json:"charts,omitempty"`
	// ApplicationDefinitions are the documents checked as
	// ApplicationDefinitions (K1, K6): those of API group cozystack.io
	// or of none.
	ApplicationDefinitions int `json:"applicationDefinitions"`
}

func catalogChecked(src *conformance.Source) checked {
	n := len(src.Charts)
	return checked{Input: src.Name, Charts: &n, ApplicationDefinitions: len(src.ADs)}
}

func (c checked) String() string {
	s := count(c.ApplicationDefinitions, "ApplicationDefinition")
	if c.Charts != nil {
		s = count(*c.Charts, "chart") + ", " + s
	}
	return s + " in " + c.Input
}

// count is "1 chart", "2 charts".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// writeTable writes Report.WriteTable with a "Checked:" line per input
// added to its header (which ends at the first blank line), before any
// "Skipped:" lines.
func (r conformanceReport) writeTable(w io.Writer) error {
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		return err
	}
	head, rest, _ := strings.Cut(b.String(), "\n\n")
	lines := strings.Split(head, "\n")
	at := len(lines)
	for i, l := range lines {
		if strings.HasPrefix(l, "Skipped:") {
			at = i
			break
		}
	}
	var add []string
	for i, c := range r.Checked {
		label := "Checked:  "
		if i > 0 {
			label = strings.Repeat(" ", len(label))
		}
		add = append(add, label+c.String())
	}
	lines = slices.Insert(lines, at, add...)
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n\n"+rest)
	return err
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
	if err := checkLinks(arg); err != nil {
		return nil, err
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		if exists(filepath.Join(arg, artifact.CatalogFile)) {
			if err := checkCatalogLinks(arg); err != nil {
				return nil, err
			}
			return conformance.LoadDir(arg)
		}
		if !exists(filepath.Join(arg, "oci-layout")) {
			return nil, fmt.Errorf("%s is neither a catalog directory (no %s) nor an OCI image layout (no oci-layout)", arg, artifact.CatalogFile)
		}
		if err := checkLinks(arg, arg); err != nil {
			return nil, err
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

// loadADs reads the inputs of --ads: each file argument, and the *.yaml
// and *.yml files directly in each directory argument. Findings name the
// files as given. An input holding no ApplicationDefinition is an error,
// so that a run cannot pass having checked nothing.
func loadADs(args []string) (*conformance.Source, []checked, error) {
	src := &conformance.Source{Name: strings.Join(args, ", "), HasADs: true}
	var inputs []checked
	for _, a := range args {
		files, err := adFiles(a)
		if err != nil {
			return nil, nil, err
		}
		s, err := conformance.LoadADFiles(".", files)
		if err != nil {
			return nil, nil, err
		}
		if len(s.ADs) == 0 {
			return nil, nil, fmt.Errorf("0 ApplicationDefinitions found in %s: %s", a, noADs(files))
		}
		src.ADs = append(src.ADs, s.ADs...)
		inputs = append(inputs, checked{Input: a, ApplicationDefinitions: len(s.ADs)})
	}
	return src, inputs, nil
}

// adFiles is a itself, or for a directory its *.yaml and *.yml files,
// sorted; a dangling symbolic link among them is an error naming it.
func adFiles(a string) ([]string, error) {
	if err := checkLinks(a); err != nil {
		return nil, err
	}
	st, err := os.Stat(a)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{a}, nil
	}
	entries, err := os.ReadDir(a)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !artifact.IsDefinitionFileName(e.Name()) {
			continue
		}
		p := filepath.Join(a, e.Name())
		if err := checkLinks(p); err != nil {
			return nil, err
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			continue
		}
		files = append(files, p)
	}
	return files, nil
}

// noADs says why files hold no ApplicationDefinition.
func noADs(files []string) string {
	if len(files) == 0 {
		return "no .yaml or .yml file in it (subdirectories are not read)"
	}
	docs := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			docs += len(artifact.SplitDocuments(data))
		}
	}
	if docs == 0 {
		return count(len(files), "file") + " without a YAML document"
	}
	return count(len(files), "file") + " with " + count(docs, "YAML document") + ", none of API group cozystack.io"
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
