package clustervalues_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/sdk/localcp"
)

// benchNamespaces is the scale of the K2 benchmark
// (contracts/schemas/v1alpha1/k2-cluster-values.md, "Scale"): tenant
// namespaces projected into.
const benchNamespaces = 1000

// BenchmarkProjection1000 measures, with the cozystack-controller binary
// (a process of its own, so its memory is its own) and 1,000 tenant
// namespaces, the time from a change of ClusterValues to Projected=True
// (target: 10 s on 2 cores), the writes per namespace per change (at most
// one) and the controller's peak resident memory.
func BenchmarkProjection1000(b *testing.B) {
	need(b)
	pid, metricsAddr := controllerProcess(b)
	ctl := &instance{metrics: metricsAddr}
	ctx := context.Background()

	// The CRD is installed by the process; retry until it is served.
	cv := &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterValuesName}, Spec: spec()}
	eventually(b, 60*time.Second, "ClusterValues created", func() error { return c.Create(ctx, cv.DeepCopy()) })
	b.Cleanup(func() { _ = c.Delete(context.Background(), cv) })

	start := time.Now()
	names := createTenantsParallel(b, "bench", benchNamespaces)
	b.Logf("created %d tenant namespaces in %s", len(names), time.Since(start).Round(time.Millisecond))
	first := getClusterValues(b)
	start = time.Now()
	eventually(b, 5*time.Minute, "initial projection", func() error {
		return statusIs(ctx, first.Generation, benchNamespaces, benchNamespaces, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})
	b.Logf("initial projection into %d namespaces: %s", benchNamespaces, time.Since(start).Round(time.Millisecond))

	var total time.Duration
	var writes float64
	ratio := 2
	for b.Loop() {
		before := ctl.writes(b, "ConfigMap")
		ratio++
		cur := getClusterValues(b)
		cur.Spec.Resources.CPUAllocationRatio = v1alpha1.AllocationRatio(strconv.Itoa(ratio))
		if err := c.Update(ctx, cur); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		eventually(b, 5*time.Minute, "Projected=True", func() error {
			return statusIs(ctx, cur.Generation, benchNamespaces, benchNamespaces, metav1.ConditionTrue, v1alpha1.ReasonProjected)
		})
		total += time.Since(t0)
		writes += ctl.writes(b, "ConfigMap") - before
	}
	n := float64(b.N)
	b.ReportMetric(total.Seconds()/n, "s-to-projected")
	b.ReportMetric(writes/n/benchNamespaces, "writes/ns/change")
	b.ReportMetric(float64(peakRSS(b, pid))/(1<<20), "peak-rss-MiB")
	b.ReportMetric(0, "ns/op") // wall time per op is s-to-projected plus polling
}

// controllerProcess builds and runs cozystack-controller against the test
// control plane; it returns its pid and metrics address.
func controllerProcess(b *testing.B) (int, string) {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "cozystack-controller")
	if out, err := exec.Command("go", "build", "-o", bin, "cozystack.io/platform/cmd/cozystack-controller").CombinedOutput(); err != nil {
		b.Fatalf("go build cozystack-controller: %v\n%s", err, out)
	}
	metrics := freeAddr(b)
	cmd := exec.Command(bin, "--kubeconfig", env.Kubeconfig, "--install-crds", "--leader-elect=false",
		"--metrics-bind-address", metrics, "--health-probe-bind-address", "0", "-v=0")
	logFile, err := os.Create(filepath.Join(dir, "controller.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid, metrics
}

// createTenantsParallel creates n tenant namespaces (16 at a time) and
// deletes them at the end.
func createTenantsParallel(b *testing.B, prefix string, n int) []string {
	b.Helper()
	names := make([]string, n)
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			name := fmt.Sprintf("%s-%04d", prefix, i)
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				v1alpha1.LabelTenant: name, v1alpha1.LabelHost: name + ".example.org", v1alpha1.LabelIngress: "tenant-root",
			}}}
			if err := c.Create(context.Background(), ns); err != nil {
				return err
			}
			names[i] = name
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatalf("create namespace: %v", err)
	}
	b.Cleanup(func() {
		for _, name := range names {
			_ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}
	})
	return names
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(b *testing.B, pid int) int64 {
	b.Helper()
	n, err := localcp.PeakRSS(pid)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
