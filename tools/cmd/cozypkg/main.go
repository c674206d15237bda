// Command cozypkg makes and publishes catalog artifacts (format:
// cozystack.io/contracts/artifact, README.md).
//
//	cozypkg build <catalog-dir> [--oci-layout DIR] [--tag TAG] [-o json|yaml]
//	cozypkg push <catalog-dir|oci-layout-dir> <host/repository[:tag]> [--plain-http] [-o json|yaml]
//	cozypkg package <library-chart-dir> [-d DIR]
//	cozypkg vendor-lib <library.tgz> <chart-or-dir>... [--check]
//	cozypkg push-lib <library.tgz> <host/repository> [--plain-http]
//	cozypkg conformance <catalog-dir|oci-layout-dir|host/repository:tag> --platform-version X [--previous DIR|REF] [--live --kubeconfig K] [-o json|yaml]
//	cozypkg conformance --ads <ad-file-or-dir>... --platform-version X
//
// Progress goes to stderr, one line per blob (uploading, exists, done); the
// result (reference and manifest digest, or with -o a summary) to stdout.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "cozypkg",
		Short:         "Build and publish cozystack catalogs as OCI artifacts",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newBuild(), newPush(), newPackage(), newVendorLib(), newPushLib(), newConformance())
	return root
}
