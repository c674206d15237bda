package apiserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/adfixtures"
	"cozystack.io/platform/internal/apiserver"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

// serverProcess runs the cozystack-api binary (not in-process, so its RSS
// is its own) against the test control plane, registered through the
// aggregation layer. It returns the pid.
func serverProcess(b *testing.B) int {
	return serverProcessOf(b, "cozystack.io/platform/cmd/cozystack-api")
}

// serverProcessOf is serverProcess for the command in package pkg, which
// takes cozystack-api's flags.
func serverProcessOf(b *testing.B, pkg string) int {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "cozystack-api")
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := env.PKI().IssueServing(cert, key, "cozystack-api", "cozystack-api.cozy-system.svc", "localhost"); err != nil {
		b.Fatal(err)
	}
	port, err := localcp.FreePort()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "--kubeconfig", env.Kubeconfig, "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--tls-cert-file", cert, "--tls-private-key-file", key, "--install-crds", "--apiservice", apiserver.APIServiceName,
		"--register-local", "cozy-system/cozystack-api", "--register-ca-file", env.PKI().CACert(), "-v=0")
	logFile, _ := os.Create(filepath.Join(dir, "server.log"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: controllermanager.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, _, _ := apiserver.APIServiceAvailable(ctx, c)
		return ok, nil
	})
	if err != nil {
		data, _ := os.ReadFile(logFile.Name())
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		b.Fatalf("cozystack-api never Available; last lines of its log:\n%s", strings.Join(lines[max(0, len(lines)-20):], "\n"))
	}
	backend = c
	serverPort = port
	return cmd.Process.Pid
}

// serverPort is the port of the benchmarked cozystack-api process.
var serverPort int

// profile collects a pprof profile ("profile?seconds=N" for CPU, "heap")
// from the benchmarked server into $COZYSTACK_BENCH_PPROF/<file> when that
// variable names a directory; run it in a goroutine for CPU profiles. The
// server's /debug/pprof is authorized by kube-apiserver like any request,
// so the admin client certificate is used.
func profile(b *testing.B, path, file string) {
	dir := os.Getenv("COZYSTACK_BENCH_PPROF")
	if dir == "" {
		return
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", serverPort)
	cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = nil, ""
	cfg.TLSClientConfig.Insecure = true
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Error(err)
		return
	}
	resp, err := hc.Get(cfg.Host + "/debug/pprof/" + path)
	if err != nil {
		b.Error(err)
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		b.Errorf("pprof %s: %s: %s", path, resp.Status, data)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
		b.Error(err)
	}
}

func rssMiB(b *testing.B, pid int) float64 {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 2 && fields[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(fields[1], 64)
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// directHelmRelease returns a constructor of the "native" side of the
// create benchmark: the very HelmRelease the API stored for application
// name (labels, annotations, chartRef, valuesFrom, values, install and
// upgrade blocks), renamed, without system fields and status, and with its
// application.kind label set to a value of the same length that no kind
// serves, so that the list benchmark's two sides still list the same 5,000
// objects. Creating it is what a user who wrote HelmReleases instead of
// applications would pay for the same release.
func directHelmRelease(b *testing.B, hrs dynamic.ResourceInterface, name string) func(string) *unstructured.Unstructured {
	b.Helper()
	list, err := hrs.List(context.Background(), metav1.ListOptions{LabelSelector: "apps.cozystack.io/application.name=" + name})
	if err != nil || len(list.Items) != 1 {
		b.Fatalf("the HelmRelease of application %s: %v (%d found)", name, err, len(list.Items))
	}
	stored := list.Items[0]
	unstructured.RemoveNestedField(stored.Object, "status")
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"} {
		unstructured.RemoveNestedField(stored.Object, "metadata", f)
	}
	labels := stored.GetLabels()
	labels["apps.cozystack.io/application.kind"] = strings.Repeat("x", len(labels["apps.cozystack.io/application.kind"]))
	stored.SetLabels(labels)
	return func(newName string) *unstructured.Unstructured {
		hr := stored.DeepCopy()
		hr.SetName(newName)
		return hr
	}
}

// postgresApp is the application the create and list benchmarks create.
func postgresApp(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": int64(2)}}}
}

// createSide is one side of an interleaved create benchmark: the resource
// it creates in, the object of round i, and the time of each create.
type createSide struct {
	resource dynamic.ResourceInterface
	object   func(i int) *unstructured.Unstructured
	opts     metav1.CreateOptions
	times    []time.Duration
}

// interleavedCreates runs n rounds; in each, every side creates its object
// once, in order, timed.
func interleavedCreates(b *testing.B, n int, sides ...*createSide) {
	b.Helper()
	for i := 0; i < n; i++ {
		for _, s := range sides {
			t0 := time.Now()
			if _, err := s.resource.Create(context.Background(), s.object(i), s.opts); err != nil {
				b.Fatal(err)
			}
			s.times = append(s.times, time.Since(t0))
		}
	}
}

// listRounds is how many times each list is timed per side (interleaved);
// the machine is shared, so the p50 needs more than a handful.
const listRounds = 11

// ratio is the ratio of the p50s of a and h.
func ratio(a, h []time.Duration) float64 { return float64(p50(a)) / float64(p50(h)) }

func p50(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkApplicationAPI measures the application API against the
// HelmReleases it stores, side by side in one run, A/B interleaved
// (targets in parentheses): sequential creates against creates of the same
// HelmRelease written directly (see directHelmRelease; p50 ratio <= 1.5;
// creates through the aggregation floor, see aggregationFloor, are timed
// alongside as the lowest ratio an aggregated API reaches), lists of
// 5,000 objects in 50 namespaces with resourceVersion "0" and "" (<= 1.2
// each), the time from an AD's creation to the first successful create of
// its kind (<= 1 s), and the server's RSS idle and after listing (<= 170
// MiB). The scenario runs once (it takes minutes, so the framework does not
// repeat it). Run: make bench, or go test -run '^$' -bench ApplicationAPI.
func BenchmarkApplicationAPI(b *testing.B) {
	testenv.Need(b, env)
	ctx := context.Background()
	pid := serverProcess(b)
	idle := rssMiB(b, pid)

	// AD created -> first successful create of its kind, timed from the
	// moment kube-apiserver has accepted the AD.
	dyn := dynamic.NewForConfigOrDie(env.Config)
	pg := dyn.Resource(postgreses)
	ensureNamespace(b, "bench-0")
	ad := adfixtures.Named(b, "postgres")
	if err := backend.Create(ctx, ad); err != nil {
		b.Fatal(err)
	}
	adStart := time.Now()
	first := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
		"metadata": map[string]any{"name": "first"}, "spec": map[string]any{}}}
	for {
		if _, err := pg.Namespace("bench-0").Create(ctx, first, metav1.CreateOptions{}); err == nil {
			break
		}
		if time.Since(adStart) > 30*time.Second {
			b.Fatal("kind never became usable")
		}
		time.Sleep(10 * time.Millisecond)
	}
	adToCreate := time.Since(adStart)

	hrs := dyn.Resource(schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"})
	hrObj := directHelmRelease(b, hrs.Namespace("bench-0"), first.GetName())

	floor := aggregationFloor(b, "bench-0", hrObj)

	// Sequential creates, interleaved: one application, one HelmRelease,
	// one through the aggregation floor.
	const creates = 500
	createProfiled := make(chan struct{})
	go func() { defer close(createProfiled); profile(b, "profile?seconds=5", "create.cpu.pprof") }()
	app := &createSide{resource: pg.Namespace("bench-0"), object: func(i int) *unstructured.Unstructured { return postgresApp(fmt.Sprintf("c%d", i)) }}
	direct := &createSide{resource: hrs.Namespace("bench-0"), object: func(i int) *unstructured.Unstructured { return hrObj(fmt.Sprintf("direct-c%d", i)) },
		opts: metav1.CreateOptions{FieldManager: "direct"}}
	aggregation := &createSide{resource: floor, object: func(i int) *unstructured.Unstructured { return floorRelease(fmt.Sprintf("f%d", i)) }}
	interleavedCreates(b, creates, app, direct, aggregation)

	<-createProfiled

	// 5,000 applications in 50 namespaces (their HelmReleases are the
	// "direct" side: the same objects listed through the two APIs).
	const namespaces, perNS = 50, 100
	for n := 1; n <= namespaces; n++ {
		ns := fmt.Sprintf("bench-%d", n)
		ensureNamespace(b, ns)
		for i := 0; i < perNS; i++ {
			if _, err := pg.Namespace(ns).Create(ctx, postgresApp(fmt.Sprintf("l%d", i)), metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	sel := "apps.cozystack.io/application.kind=Postgres"
	list := func(rv string, apps bool) time.Duration {
		t0 := time.Now()
		var err error
		var n int
		if apps {
			var l *unstructured.UnstructuredList
			l, err = pg.List(ctx, metav1.ListOptions{ResourceVersion: rv})
			if l != nil {
				n = len(l.Items)
			}
		} else {
			var l *unstructured.UnstructuredList
			l, err = hrs.List(ctx, metav1.ListOptions{ResourceVersion: rv, LabelSelector: sel})
			if l != nil {
				n = len(l.Items)
			}
		}
		if err != nil || n < namespaces*perNS {
			b.Fatalf("list (rv=%q apps=%v): %v, %d items", rv, apps, err, n)
		}
		return time.Since(t0)
	}
	results := map[string][2][]time.Duration{}
	profiled := make(chan struct{})
	go func() { defer close(profiled); profile(b, "profile?seconds=15", "list.cpu.pprof") }()
	for _, rv := range []string{"0", ""} {
		var a, h []time.Duration
		for i := 0; i < listRounds; i++ {
			a = append(a, list(rv, true))
			h = append(h, list(rv, false))
		}
		results[rv] = [2][]time.Duration{a, h}
	}
	afterList := rssMiB(b, pid)
	<-profiled
	profile(b, "heap", "heap.pprof")

	b.ReportMetric(ratio(app.times, direct.times), "create-p50-ratio")
	b.ReportMetric(ratio(aggregation.times, direct.times), "create-floor-p50-ratio")
	b.ReportMetric(ratio(results["0"][0], results["0"][1]), "list5000-rv0-p50-ratio")
	b.ReportMetric(ratio(results[""][0], results[""][1]), "list5000-rvEmpty-p50-ratio")
	b.ReportMetric(adToCreate.Seconds(), "ad-to-first-create-s")
	b.ReportMetric(idle, "rss-idle-MiB")
	b.ReportMetric(afterList, "rss-after-list-MiB")
	fmt.Printf("create p50: application %s, HelmRelease %s, aggregation floor %s\n", p50(app.times), p50(direct.times), p50(aggregation.times))
	fmt.Printf("list 5000 rv=0: application %s, HelmRelease %s; rv=\"\": application %s, HelmRelease %s\n",
		p50(results["0"][0]), p50(results["0"][1]), p50(results[""][0]), p50(results[""][1]))
}
