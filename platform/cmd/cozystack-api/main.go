// Command cozystack-api is the aggregated API server of the application API
// (apps.cozystack.io/v1alpha1): one resource per ApplicationDefinition,
// stored as Flux HelmReleases. See package
// cozystack.io/platform/internal/apiserver.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	"cozystack.io/platform/internal/apiserver"
	"cozystack.io/platform/internal/apiserver/kinds"
	"cozystack.io/platform/internal/registry/application"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	o := apiserver.NewOptions()
	memoryLimit := defaultMemoryLimit
	cmd := &cobra.Command{
		Use:           "cozystack-api",
		Short:         "Serve apps.cozystack.io/v1alpha1: one kind per ApplicationDefinition, stored as HelmReleases",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if errs := o.Recommended.Validate(); len(errs) > 0 {
				return fmt.Errorf("invalid options: %v", errs)
			}
			if err := applyMemoryLimit(memoryLimit); err != nil {
				return err
			}
			srv, err := apiserver.New(o, func(k *kinds.Kind, b application.Backend) rest.Storage {
				return application.NewREST(k, b)
			})
			if err != nil {
				return err
			}
			return srv.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&memoryLimit, "memory-limit", memoryLimit, "soft limit of the Go runtime's memory (a quantity, e.g. 100Mi; 0 for none), so that the heap left behind by a large list is returned to the system; the GOMEMLIMIT environment variable, when set, wins")
	logFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(logFlags)
	cmd.Flags().AddGoFlagSet(logFlags)
	return cmd
}

// defaultMemoryLimit keeps the server's resident memory under the issue's
// 170 MiB after a 5,000-object list (BenchmarkApplicationAPI): a list
// allocates far more than the server keeps, and without a limit the Go
// runtime holds on to the peak. It bounds the runtime's memory only; the
// mapped binary adds about 50 MiB to the resident set, and the live heap
// after such a list (informer cache, conversion memo) is about 40 MiB.
const defaultMemoryLimit = "80Mi"

// applyMemoryLimit sets the Go runtime's soft memory limit
// (runtime/debug.SetMemoryLimit) from a quantity such as "100Mi"; "0"
// removes it. GOMEMLIMIT, when set, takes precedence (the runtime has read
// it already). The limit is soft: the heap may exceed it when the live data
// does, at the cost of more frequent garbage collection.
func applyMemoryLimit(limit string) error {
	if os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	q, err := resource.ParseQuantity(limit)
	if err != nil {
		return fmt.Errorf("--memory-limit %q: %v (use a quantity such as 100Mi, or 0 for none)", limit, err)
	}
	if q.Sign() <= 0 {
		debug.SetMemoryLimit(math.MaxInt64) // the runtime's "no limit"
		return nil
	}
	debug.SetMemoryLimit(q.Value())
	return nil
}
