package apiserver

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultMemoryLimit keeps the server's resident memory under the
// 170 MiB BenchmarkApplicationAPI holds it to after a 5,000-object list (BenchmarkApplicationAPI): a list
// allocates far more than the server keeps, and without a limit the Go
// runtime holds on to the peak. It bounds the runtime's memory only; the
// mapped binary adds about 50 MiB to the resident set, and the live heap
// after such a list (informer cache, conversion memo) is about 40 MiB.
const DefaultMemoryLimit = "80Mi"

// ApplyMemoryLimit sets the Go runtime's soft memory limit
// (runtime/debug.SetMemoryLimit) from o.MemoryLimit, a quantity such as
// "100Mi"; "0" removes it. It is process-wide, so the server's command
// calls it, not New. GOMEMLIMIT, when set, takes precedence (the runtime
// has read it already). The limit is soft: the heap may exceed it when the
// live data does, at the cost of more frequent garbage collection.
func (o *Options) ApplyMemoryLimit() error {
	if os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	q, err := resource.ParseQuantity(o.MemoryLimit)
	if err != nil {
		return fmt.Errorf("--memory-limit %q: %v (use a quantity such as 100Mi, or 0 for none)", o.MemoryLimit, err)
	}
	if q.Sign() <= 0 {
		debug.SetMemoryLimit(math.MaxInt64) // the runtime's "no limit"
		return nil
	}
	debug.SetMemoryLimit(q.Value())
	return nil
}
