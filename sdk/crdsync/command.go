package crdsync

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Usage is the command line of a catalog's cmd/sync-crds.
const Usage = "go run ./cmd/sync-crds [--catalog DIR] [--mirror DIR] [--check]"

// ErrUsage wraps the errors of a bad command line, which Run has already
// reported on stderr with the usage.
var ErrUsage = errors.New("usage")

// Run is the sync-crds command: it reads crds.yaml in the catalog
// directory (--catalog, default "."), resolves its sources (mirror sources
// from --mirror, skipped with a note on stderr without it) and writes the
// files, listing their paths on stdout, or with --check writes nothing and
// returns Check's error. -h returns flag.ErrHelp and a bad command line an
// error wrapping ErrUsage, both after printing the usage on stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sync-crds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Write the CRDs of the catalog's operator charts from the sources pinned in %s.\n\n  %s\n\n", SourcesFile, Usage)
		fs.PrintDefaults()
	}
	catalog := fs.String("catalog", ".", "the catalog directory (holding "+SourcesFile+")")
	mirror := fs.String("mirror", "", "directory holding the mirror files "+SourcesFile+" names; without it, mirror sources are skipped")
	check := fs.Bool("check", false, "write nothing; fail when a chart's crds/ differ from the sources")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("%w: unexpected arguments %q", ErrUsage, fs.Args())
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return err
	}
	s, err := Load(*catalog)
	if err != nil {
		return err
	}
	files, skipped, err := Resolve(ctx, *catalog, s, Options{Mirror: *mirror})
	if err != nil {
		return err
	}
	for _, src := range skipped {
		fmt.Fprintf(stderr, "skipped %s for %s: no --mirror directory\n", src.Mirror, src.Chart)
	}
	if *check {
		return Check(*catalog, files)
	}
	if err := Write(*catalog, files); err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f.Path)
	}
	return nil
}

// Main runs Run with the process's arguments and exits: 0 on success and
// for -h, 2 for a bad command line, 1 with "error: ..." on stderr for any
// other failure.
func Main() {
	err := Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, ErrUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
