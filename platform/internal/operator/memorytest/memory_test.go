package memorytest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/artifacttest"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

// The control plane with the registry; nil under -short. No operator runs
// in this process: the test runs the binary.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Registry: true}, &env))
}

const (
	// chartData is the random data in each chart, in bytes: charts of
	// 95 MiB (`make bench-memory`, docs/contributor/development.md "Make targets"), under the 100 MiB limits of a chart archive
	// (artifact.PullOptions.MaxChartSize) and of its content (safetar).
	chartData = 95 << 20
	// defaultCharts is the number of charts without COZY_MEMORY_CHARTS.
	defaultCharts = 6
	// maxRSS is the most the operator's peak resident set may be, in
	// bytes.
	maxRSS = 100 << 20
	// waitTimeout bounds each wait for the operator.
	waitTimeout = 10 * time.Minute
)

// TestOperatorPeakRSS runs the real cozystack-operator binary, has it pull
// (fetch, verify, check and store) a catalog artifact of
// COZY_MEMORY_CHARTS charts of 95 MiB of random data each, and checks that
// its peak resident set (VmHWM) stays under 100 MiB: the operator streams
// charts and never holds one in memory. It then restarts the operator on
// the same --storage-dir, which verifies the stored artifact once more
// (store.Load after a restart), and checks the new process the same way.
func TestOperatorPeakRSS(t *testing.T) {
	testenv.Need(t, env)
	n := defaultCharts
	if v := os.Getenv("COZY_MEMORY_CHARTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("COZY_MEMORY_CHARTS=%q: want a positive number of charts", v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	bin := buildOperator(t)

	start := time.Now()
	manifest, size := pushArtifact(ctx, t, "memory/catalog", "1.0.0", n)
	t.Logf("pushed %d charts, %d MiB, manifest %s, in %s", n, size>>20, manifest.Digest, time.Since(start).Round(time.Millisecond))

	storage := t.TempDir()
	op := startOperator(t, bin, storage)
	start = time.Now()
	ps := &v1alpha1.PackageSource{
		ObjectMeta: metav1.ObjectMeta{Name: "memory"},
		Spec: v1alpha1.PackageSourceSpec{OCI: &v1alpha1.OCISource{
			Repository: env.RegistryHost() + "/memory/catalog", Tag: "1.0.0", PlainHTTP: true,
		}},
	}
	c := createSource(ctx, t, op, ps)
	waitReady(ctx, t, c, op, manifest.Digest, ps.Generation)
	pulled := time.Since(start)
	hwm := op.peakRSS(t)
	t.Logf("operator peak RSS: %d MiB for a %d MiB artifact (%d charts; Ready in %s)", hwm>>20, size>>20, n, pulled.Round(time.Millisecond))
	op.stop(t)

	// A restart: the served revision is verified again from the store.
	op = startOperator(t, bin, storage)
	start = time.Now()
	if err := c.Get(ctx, client.ObjectKeyFromObject(ps), ps); err != nil {
		t.Fatal(err)
	}
	// A spec change, to know when the new process has reconciled.
	ps.Spec.Interval = &metav1.Duration{Duration: 7 * time.Minute}
	if err := c.Update(ctx, ps); err != nil {
		t.Fatal(err)
	}
	waitReady(ctx, t, c, op, manifest.Digest, ps.Generation)
	hwmRestart := op.peakRSS(t)
	t.Logf("operator peak RSS after a restart (verifying the stored artifact): %d MiB for a %d MiB artifact (Ready in %s)", hwmRestart>>20, size>>20, time.Since(start).Round(time.Millisecond))

	for what, v := range map[string]int64{"pulling": hwm, "after a restart": hwmRestart} {
		if v > maxRSS {
			t.Errorf("operator peak RSS %s: %d MiB for a %d MiB artifact, want at most %d MiB", what, v>>20, size>>20, maxRSS>>20)
		}
	}
}

// buildOperator builds cozystack-operator into a temporary directory, or
// returns $COZY_MEMORY_OPERATOR, a binary built elsewhere (another
// revision, to compare).
func buildOperator(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("COZY_MEMORY_OPERATOR"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "cozystack-operator")
	cmd := exec.Command("go", "build", "-o", bin, "cozystack.io/platform/cmd/cozystack-operator")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build cozystack-operator: %v\n%s", err, out)
	}
	return bin
}

// pushArtifact pushes to the test registry, as repo:tag, a catalog
// artifact of n components, each with its own chart of chartData bytes of
// random data, and returns its manifest and the size of its config and
// layers. The catalog is built (build.Build) with small charts, whose
// layers are then replaced by the big ones, written straight to a file
// each (and removed once pushed), so the test itself holds no chart in
// memory either.
func pushArtifact(ctx context.Context, t *testing.T, repo, tag string, n int) (ocispec.Descriptor, int64) {
	t.Helper()
	dir := t.TempDir()
	var catalog strings.Builder
	catalog.WriteString("apiVersion: cozystack.io/v1alpha1\nkind: Catalog\nname: memory\nversion: 1.0.0\nminPlatformVersion: 0.1.0\nvariants:\n  - name: default\n    components:\n")
	for i := range n {
		name := fmt.Sprintf("c%02d", i)
		fmt.Fprintf(&catalog, "      - name: %s\n        chart: charts/%s\n        namespace: memory-%s\n", name, name, name)
		writeFile(t, filepath.Join(dir, "charts", name, "Chart.yaml"), fmt.Sprintf("apiVersion: v2\nname: %s\nversion: 0.1.0\n", name))
	}
	writeFile(t, filepath.Join(dir, artifact.CatalogFile), catalog.String())
	local := memory.New()
	res, err := build.Build(ctx, dir, local, build.Options{Tag: tag})
	if err != nil {
		t.Fatalf("build the catalog: %v", err)
	}
	data, err := content.FetchAll(ctx, local, res.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}

	target, _, err := artifact.NewRepository(env.RegistryHost()+"/"+repo, artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	size := m.Config.Size
	for i, l := range m.Layers {
		if l.MediaType != artifact.ChartMediaType {
			size += l.Size
			continue
		}
		file, desc := randomChart(t, tmp, l.Annotations[artifact.AnnotationChartName], chartData, uint64(i))
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		err = target.Push(ctx, desc, f)
		f.Close()
		os.Remove(file)
		if err != nil {
			t.Fatalf("push chart %s: %v", l.Annotations[artifact.AnnotationTitle], err)
		}
		desc.Annotations = l.Annotations
		m.Layers[i] = desc
		size += desc.Size
	}
	for _, l := range append([]ocispec.Descriptor{m.Config}, m.Layers...) {
		if l.MediaType == artifact.ChartMediaType {
			continue
		}
		blob, err := content.FetchAll(ctx, local, l)
		if err == nil {
			err = target.Push(ctx, l, bytes.NewReader(blob))
		}
		if err != nil {
			t.Fatalf("push %s: %v", l.Digest, err)
		}
	}
	data, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, data)
	if err := target.PushReference(ctx, desc, bytes.NewReader(data), tag); err != nil {
		t.Fatalf("push the manifest: %v", err)
	}
	return desc, size
}

// randomChart is artifacttest.RandomChart, failing t on an error.
func randomChart(t *testing.T, dir, name string, size int64, seed uint64) (string, ocispec.Descriptor) {
	t.Helper()
	file, desc, err := artifacttest.RandomChart(dir, name, size, seed)
	if err != nil {
		t.Fatal(err)
	}
	return file, desc
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// process is a running cozystack-operator.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startOperator starts bin as the demo runs it (Makefile, target demo),
// without leader election and metrics or health endpoints, on storage; it
// stops it at cleanup.
func startOperator(t *testing.T, bin, storage string) *process {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "operator.log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--kubeconfig", env.Kubeconfig, "--install-crds", "--disable-wait",
		"--storage-dir", storage, "--artifact-bind-address", "127.0.0.1:0",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--leader-elect=false")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start %s: %v", bin, err)
	}
	p := &process{cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop stops the operator (SIGTERM, then SIGKILL after 30 s) and waits
// for it to exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// exited fails the test with the operator's log when it is no longer
// running.
func (p *process) exited(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		t.Fatalf("the operator exited (%v); its log ends:\n%s", p.cmd.ProcessState, p.logTail())
	default:
	}
}

func (p *process) logTail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 8<<10 {
		data = data[len(data)-8<<10:]
	}
	return string(data)
}

// peakRSS returns the operator's peak resident set size in bytes (VmHWM).
func (p *process) peakRSS(t *testing.T) int64 {
	t.Helper()
	p.exited(t)
	n, err := localcp.PeakRSS(p.cmd.Process.Pid)
	if err != nil {
		t.Fatalf("the operator's peak resident set: %v", err)
	}
	return n
}

// createSource creates ps once the operator has installed the CRDs, and
// deletes it at cleanup. It returns the client it used.
func createSource(ctx context.Context, t *testing.T, op *process, ps *v1alpha1.PackageSource) client.Client {
	t.Helper()
	var c client.Client
	var last error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		op.exited(t)
		// A new client each time: the kind appears when the CRD does.
		var err error
		if c, err = client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()}); err != nil {
			return false, err
		}
		last = c.Create(ctx, ps)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("create PackageSource %s: %v (last: %v)", ps.Name, err, last)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Delete(ctx, ps)
	})
	return c
}

// waitReady waits until the PackageSource of ps, at generation (or
// later), is Ready=True serving manifest.
func waitReady(ctx context.Context, t *testing.T, c client.Client, op *process, manifest digest.Digest, generation int64) {
	t.Helper()
	var ps v1alpha1.PackageSource
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		op.exited(t)
		if err := c.Get(ctx, client.ObjectKey{Name: "memory"}, &ps); err != nil {
			return false, nil
		}
		ready := apimeta.FindStatusCondition(ps.Status.Conditions, v1alpha1.ConditionReady)
		return ps.Status.ObservedGeneration >= generation && ready != nil && ready.Status == metav1.ConditionTrue &&
			ps.Status.Artifact != nil && ps.Status.Artifact.Digest == manifest.String(), nil
	})
	if err != nil {
		t.Fatalf("PackageSource memory: never Ready serving %s: %v; status: %+v; the operator's log ends:\n%s", manifest, err, ps.Status.Conditions, op.logTail())
	}
}
