package operator_test

// The operator's catalog-pull benchmark (`make bench`, docs/contributor/development.md "Make
// targets"): pull, verify, unpack and serve a catalog of 30
// charts from the local registry, against `oras pull` of the same artifact
// in the same run (the oras CLI pinned in sdk/localcp/versions.yaml, built
// by `make bench`). Target: p50 ratio ≤ 1.5.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/platform/internal/operator/artifactserver"
	"cozystack.io/platform/internal/operator/store"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

const (
	benchCharts = 30
	// benchRounds is how many times each side runs, interleaved, after
	// one untimed warm-up round each ($COZYSTACK_BENCH_ROUNDS overrides).
	benchRounds = 7
	benchRepo   = "bench/catalog30"
	benchTag    = "1.0.0"
)

// BenchmarkCatalogPull times, per round and each from an empty local
// directory against the same registry:
//
//	A, the operator's path: resolve the tag, store.Pull (fetch every blob,
//	  verify every size and digest, check every chart archive with
//	  safetar, store them in a fresh OCI layout store), store.Serve, publish
//	  the charts on the artifact server, and GET every chart URL, reading
//	  the bytes;
//	B, `oras pull --plain-http -o <dir> <ref>` of the same artifact.
//
// It reports the p50 of each in ms and their ratio A/B
// ("pull-serve-p50-ratio"). COZYSTACK_BENCH_PPROF=<dir> writes a CPU
// profile of this process over the timed rounds (the operator's path: oras
// runs in its own process) to <dir>/catalog-pull.cpu.pprof.
func BenchmarkCatalogPull(b *testing.B) {
	testenv.Need(b, env)
	oras := localcp.DefaultLayout().Binary("oras")
	if _, err := os.Stat(oras); err != nil {
		b.Skipf("the oras CLI is not built (%s): run `make bench`, or `.cache/bin/cozystack-local build oras`", oras)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	catalogDir := benchCatalog(b, b.TempDir(), benchCharts)
	target, _, err := artifact.NewRepository(env.RegistryHost()+"/"+benchRepo+":"+benchTag, artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		b.Fatal(err)
	}
	res, err := build.Build(ctx, catalogDir, target, build.Options{Tag: benchTag})
	if err != nil {
		b.Fatalf("build and push the catalog: %v", err)
	}
	var total int64
	var sizes []int64
	for _, c := range res.Charts {
		total += c.Descriptor.Size
		sizes = append(sizes, c.Descriptor.Size)
	}
	slices.Sort(sizes)
	fmt.Printf("catalog: %d charts, %d KiB of chart archives (each %d–%d KiB), manifest %s\n",
		len(res.Charts), total>>10, sizes[0]>>10, sizes[len(sizes)-1]>>10, res.Manifest.Digest)

	blobs := &currentStore{}
	srv, err := artifactserver.New("127.0.0.1:0", "", blobs)
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Start(ctx) }()
	hc := &http.Client{Timeout: 30 * time.Second}
	ref := env.RegistryHost() + "/" + benchRepo + ":" + benchTag
	work := b.TempDir()

	var n int
	operatorPath := func() time.Duration {
		n++
		dir := filepath.Join(work, fmt.Sprintf("store-%d", n))
		start := time.Now()
		bodies := operatorPull(ctx, b, dir, ref, srv, blobs, hc)
		d := time.Since(start)
		// Outside the timing: the served bytes are the pushed charts.
		if len(bodies) != len(res.Charts) {
			b.Fatalf("operator path served %d charts, want %d", len(bodies), len(res.Charts))
		}
		for _, c := range res.Charts {
			if got := digest.FromBytes(bodies[c.Descriptor.Digest]); got != c.Descriptor.Digest {
				b.Fatalf("chart %s served with digest %s, want %s", c.Path, got, c.Descriptor.Digest)
			}
		}
		blobs.set(nil)
		_ = os.RemoveAll(dir)
		return d
	}
	orasPull := func() time.Duration {
		n++
		dir := filepath.Join(work, fmt.Sprintf("oras-%d", n))
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, oras, "pull", "--plain-http", "-o", dir, ref)
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Env = append(os.Environ(), "HOME="+work) // no user config or credentials
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("oras pull: %v\n%s", err, out.String())
		}
		for _, c := range res.Charts {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(c.Path)))
			if err != nil {
				b.Fatalf("oras pull did not write chart %s: %v\n%s", c.Path, err, out.String())
			}
			if got := digest.FromBytes(data); got != c.Descriptor.Digest {
				b.Fatalf("oras pulled chart %s with digest %s, want %s", c.Path, got, c.Descriptor.Digest)
			}
		}
		_ = os.RemoveAll(dir)
		return d
	}

	// Warm-up (untimed): page cache for the oras binary, the registry's
	// blob cache, connection setup in this process.
	operatorPath()
	orasPull()

	stopProfile := cpuProfile(b, "catalog-pull.cpu.pprof")
	var as, bs []time.Duration
	for i := range rounds() {
		// Alternating order (AB, BA, …), so neither side always runs on
		// the other's heels.
		if i%2 == 0 {
			as = append(as, operatorPath())
			bs = append(bs, orasPull())
		} else {
			bs = append(bs, orasPull())
			as = append(as, operatorPath())
		}
	}
	if stopProfile != nil {
		stopProfile()
	}
	b.StopTimer()

	pa, pb := median(as), median(bs)
	ratio := float64(pa) / float64(pb)
	b.ReportMetric(ratio, "pull-serve-p50-ratio")
	b.ReportMetric(ms(pa), "operator-p50-ms")
	b.ReportMetric(ms(pb), "oras-p50-ms")
	fmt.Printf("catalog pull of %d charts, %d rounds: operator (pull+verify+check+store+serve+GET) p50 %.1f ms %v; oras pull p50 %.1f ms %v; ratio %.2f (target ≤ 1.5)\n",
		benchCharts, len(as), ms(pa), msList(as), ms(pb), msList(bs), ratio)
}

// operatorPull is one round of the operator's path into the fresh store
// directory dir, as packagesource's reconciler does it (open, Resolve,
// Store.Pull by digest, Store.Serve, artifact server Publish), followed by
// a GET of every chart URL. It returns the bodies by chart digest.
func operatorPull(ctx context.Context, b *testing.B, dir, ref string, srv *artifactserver.Server, blobs *currentStore, hc *http.Client) map[digest.Digest][]byte {
	const source = "bench"
	st, err := store.Open(dir, artifact.PullOptions{})
	if err != nil {
		b.Fatal(err)
	}
	repo, reference, err := artifact.NewRepository(ref, artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		b.Fatal(err)
	}
	desc, err := repo.Resolve(ctx, reference)
	if err != nil {
		b.Fatalf("resolve %s: %v", ref, err)
	}
	a, err := st.Pull(ctx, source, repo, desc.Digest.String())
	if err != nil {
		b.Fatalf("pull %s: %v", ref, err)
	}
	if err := st.Serve(ctx, source, a.Manifest); err != nil {
		b.Fatal(err)
	}
	blobs.set(st)
	srv.Publish(source, a.Charts)
	bodies := make(map[digest.Digest][]byte, len(a.Charts))
	for _, c := range a.Charts {
		resp, err := hc.Get(srv.URL(source, c))
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET chart %s: %s %v", c.Path, resp.Status, err)
		}
		bodies[c.Descriptor.Digest] = data
	}
	return bodies
}

// currentStore lets the one artifact server read from each round's fresh
// store.
type currentStore struct {
	mu sync.RWMutex
	st *store.Store
}

func (c *currentStore) set(st *store.Store) {
	c.mu.Lock()
	c.st = st
	c.mu.Unlock()
}

func (c *currentStore) Open(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	c.mu.RLock()
	st := c.st
	c.mu.RUnlock()
	if st == nil {
		return nil, fmt.Errorf("no store")
	}
	return st.Open(ctx, desc)
}

// benchCatalog writes a catalog of n components, one chart each, into dir.
// Each chart is what a real one looks like: Chart.yaml, a commented
// values.yaml, a values schema, _helpers.tpl, a Deployment, a Service, a
// ConfigMap, NOTES.txt and a CRD with a generated schema, packaged to
// roughly 20–50 KiB. The content is seeded, so every run pushes the same
// artifact.
func benchCatalog(b *testing.B, dir string, n int) string {
	b.Helper()
	var cat strings.Builder
	cat.WriteString("apiVersion: cozystack.io/v1alpha1\nkind: Catalog\nname: bench\nversion: " + benchTag +
		"\nminPlatformVersion: 0.1.0\nprovides:\n  apiGroups: [bench.example.org]\nvariants:\n  - name: default\n    components:\n")
	for i := range n {
		name := fmt.Sprintf("svc%02d", i)
		fmt.Fprintf(&cat, "      - name: %s\n        chart: charts/%s\n        namespace: cozy-%s\n", name, name, name)
		r := rand.New(rand.NewPCG(uint64(i), 42))
		files := map[string]string{
			"Chart.yaml":                fmt.Sprintf("apiVersion: v2\nname: %s\ndescription: Benchmark chart %d.\ntype: application\nversion: 1.%d.0\nappVersion: \"2.%d\"\n", name, i, i, i),
			"values.yaml":               benchValues(r, 60+i%40),
			"values.schema.json":        benchSchema(r, 30+i%15),
			"templates/_helpers.tpl":    benchHelpers,
			"templates/deployment.yaml": benchDeployment,
			"templates/service.yaml":    benchService,
			"templates/configmap.yaml":  valuesConfigMap,
			"templates/NOTES.txt":       "Installed {{ .Chart.Name }} {{ .Chart.Version }} as {{ .Release.Name }}.\n",
			"crds/" + name + ".yaml":    benchCRD(r, name, 500+(i*317)%900),
		}
		for f, body := range files {
			p := filepath.Join(dir, "charts", name, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.CatalogFile), []byte(cat.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

var benchWords = strings.Fields(`replica storage volume network policy backup restore snapshot
endpoint service account secret config tls certificate issuer ingress gateway route port
protocol timeout retry interval threshold limit request memory cpu disk node zone region
cluster tenant database user password schema table index shard leader follower quorum
metrics logging tracing exporter scrape label annotation selector affinity toleration`)

func word(r *rand.Rand) string { return benchWords[r.IntN(len(benchWords))] }

func camel(r *rand.Rand, parts int) string {
	s := word(r)
	for range parts - 1 {
		w := word(r)
		s += strings.ToUpper(w[:1]) + w[1:]
	}
	return s
}

func sentence(r *rand.Rand, words int) string {
	ws := make([]string, words)
	for i := range ws {
		ws[i] = word(r)
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func benchValues(r *rand.Rand, keys int) string {
	var s strings.Builder
	s.WriteString("replicas: 1\nimage:\n  repository: registry.example/app\n  tag: \"1.0\"\n")
	for range keys {
		fmt.Fprintf(&s, "# %s\n%s:\n  enabled: %v\n  %s: %d\n  %s: %q\n", sentence(r, 8+r.IntN(10)), camel(r, 3),
			r.IntN(2) == 0, camel(r, 2), r.IntN(10000), camel(r, 2), camel(r, 2))
	}
	return s.String()
}

func benchSchema(r *rand.Rand, props int) string {
	var s strings.Builder
	s.WriteString(`{"$schema": "https://json-schema.org/draft-07/schema#", "type": "object", "properties": {`)
	for i := range props {
		if i > 0 {
			s.WriteString(",")
		}
		fmt.Fprintf(&s, "\n  %q: {\"type\": \"object\", \"description\": %q}", camel(r, 3), sentence(r, 10+r.IntN(10)))
	}
	s.WriteString("\n}}\n")
	return s.String()
}

func benchCRD(r *rand.Rand, name string, fields int) string {
	var s strings.Builder
	fmt.Fprintf(&s, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %ss.bench.example.org
spec:
  group: bench.example.org
  names: {kind: %s, plural: %ss, singular: %s}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
`, name, strings.ToUpper(name[:1])+name[1:], name, name)
	types := []string{"string", "integer", "boolean"}
	for range fields {
		fmt.Fprintf(&s, "                %s:\n                  description: %s\n                  type: %s\n",
			camel(r, 2+r.IntN(2)), sentence(r, 6+r.IntN(14)), types[r.IntN(len(types))])
	}
	return s.String()
}

const benchHelpers = `{{- define "bench.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "bench.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
`

const benchDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "bench.fullname" . }}
  labels:
    {{- include "bench.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ .Release.Name }}
  template:
    metadata:
      labels:
        {{- include "bench.labels" . | nindent 8 }}
    spec:
      containers:
        - name: app
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          ports:
            - containerPort: 8080
`

const benchService = `apiVersion: v1
kind: Service
metadata:
  name: {{ include "bench.fullname" . }}
spec:
  selector:
    app.kubernetes.io/instance: {{ .Release.Name }}
  ports:
    - port: 80
      targetPort: 8080
`

// cpuProfile starts a CPU profile into $COZYSTACK_BENCH_PPROF/file when
// that variable names a directory, and returns the function that stops
// it (nil when not profiling).
func cpuProfile(b *testing.B, file string) func() {
	dir := os.Getenv("COZYSTACK_BENCH_PPROF")
	if dir == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, file))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func msList(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%.0f", ms(d))
	}
	return out
}

// rounds is benchRounds, or $COZYSTACK_BENCH_ROUNDS.
func rounds() int {
	if n, _ := strconv.Atoi(os.Getenv("COZYSTACK_BENCH_ROUNDS")); n > 0 {
		return n
	}
	return benchRounds
}
