// Command sync-crds writes the CRDs of the catalog's operator charts from
// the sources pinned in crds.yaml (package crdsync): Go modules at the
// versions go.mod requires, and files of a mirror directory the user names.
//
//	go run ./cmd/sync-crds [--catalog DIR] [--mirror DIR] [--check]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"cozystack.io/catalogs/services/internal/crdsync"
)

func main() {
	catalog := flag.String("catalog", ".", "the catalog directory (holding crds.yaml)")
	mirror := flag.String("mirror", "", "directory holding the mirror files crds.yaml names; without it, mirror sources are skipped")
	check := flag.Bool("check", false, "write nothing; fail when a chart's crds/ differ from the sources")
	flag.Parse()
	if err := run(*catalog, *mirror, *check); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(catalog, mirror string, check bool) error {
	s, err := crdsync.Load(catalog)
	if err != nil {
		return err
	}
	files, skipped, err := crdsync.Resolve(context.Background(), catalog, s, crdsync.Options{Mirror: mirror})
	if err != nil {
		return err
	}
	for _, src := range skipped {
		fmt.Fprintf(os.Stderr, "skipped %s for %s: no --mirror directory\n", src.Mirror, src.Chart)
	}
	if check {
		return crdsync.Check(catalog, files)
	}
	if err := crdsync.Write(catalog, files); err != nil {
		return err
	}
	for _, f := range files {
		fmt.Println(f.Path)
	}
	return nil
}
