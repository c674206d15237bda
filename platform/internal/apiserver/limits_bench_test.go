package apiserver_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"cozystack.io/sdk/testenv"
)

// cpuTime is the CPU time (user + system) process pid has used, from
// /proc/<pid>/stat, at the kernel's clock-tick resolution (10 ms).
func cpuTime(b *testing.B, pid int) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in ")".
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func kubeAPIServerPID(b *testing.B) int {
	b.Helper()
	for _, p := range env.Processes {
		if p.Name == "kube-apiserver" {
			return p.PID
		}
	}
	b.Fatal("no kube-apiserver process in the test control plane")
	return 0
}

// BenchmarkDeepBody: the CPU cozystack-api spends on a Postgres whose spec
// nests 1,000 and 5,000 levels deep (refused before decoding, package
// bodydepth) against the CPU kube-apiserver spends on the same nesting
// sent to it directly as a HelmRelease's values (a dry-run create), side by
// side in one run; target ratio ≤ 2 (the limit is K1's "Request limits",
// contracts/schemas/v1alpha1/k1-application.md). Before the limit,
// cozystack-api spent 20-35 s of CPU on one body of depth 10,000. Also the
// time a GET at a future resourceVersion takes through cozystack-api
// against kube-apiserver's own answer (target: ratio about 1).
func BenchmarkDeepBody(b *testing.B) {
	testenv.Need(b, env)
	ctx := context.Background()
	apiPID, kubePID := serverProcess(b), kubeAPIServerPID(b)
	applyFixtureAD(b, "postgres")
	ensureNamespace(b, "deep")
	c := rawClient(b)
	const requests = 20
	for _, depth := range []int{1000, 5000} {
		apiBefore := cpuTime(b, apiPID)
		for i := 0; i < requests; i++ {
			_ = c.Post().AbsPath("/apis/apps.cozystack.io/v1alpha1/namespaces/deep/postgreses").Body(postgresBody(fmt.Sprintf("d%d", i), depth)).
				SetHeader("Content-Type", "application/json").MaxRetries(0).Do(ctx).Error()
		}
		api := cpuTime(b, apiPID) - apiBefore
		kubeBefore := cpuTime(b, kubePID)
		for i := 0; i < requests; i++ {
			if err := c.Post().AbsPath("/apis/helm.toolkit.fluxcd.io/v2/namespaces/deep/helmreleases").Param("dryRun", "All").
				Body(helmReleaseBody(fmt.Sprintf("d%d", i), depth)).SetHeader("Content-Type", "application/json").MaxRetries(0).Do(ctx).Error(); err != nil {
				b.Fatalf("HelmRelease at depth %d: %v", depth, err)
			}
		}
		kube := cpuTime(b, kubePID) - kubeBefore
		b.ReportMetric(float64(api)/float64(requests)/float64(time.Millisecond), fmt.Sprintf("api-cpu-ms/depth-%d", depth))
		b.ReportMetric(float64(kube)/float64(requests)/float64(time.Millisecond), fmt.Sprintf("kube-cpu-ms/depth-%d", depth))
		b.ReportMetric(float64(api)/float64(max(kube, 10*time.Millisecond)), fmt.Sprintf("cpu-ratio/depth-%d", depth))
	}

	// Below the depth limit, cost grows with the size of the body: a spec
	// with n users (a schema-checked map), n and 2n, at cozystack-api and
	// as HelmRelease values at kube-apiserver (dry runs: nothing stored).
	wide := func(kind string, n int) []byte {
		var users strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				users.WriteByte(',')
			}
			fmt.Fprintf(&users, `"user%d":{"password":"p%d","replication":false}`, i, i)
		}
		if kind == "Postgres" {
			return []byte(`{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"Postgres","metadata":{"name":"wide"},"spec":{"users":{` + users.String() + `}}}`)
		}
		return []byte(`{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"wide"},"spec":{"interval":"5m","chartRef":{"kind":"OCIRepository","name":"x"},"values":{"users":{` + users.String() + `}}}}`)
	}
	const wideRequests = 5
	cpuOf := func(pid int, path string, body []byte) time.Duration {
		before := cpuTime(b, pid)
		for i := 0; i < wideRequests; i++ {
			if err := c.Post().AbsPath(path).Param("dryRun", "All").Body(body).SetHeader("Content-Type", "application/json").MaxRetries(0).Do(ctx).Error(); err != nil {
				b.Fatalf("wide body: %v", err)
			}
		}
		return (cpuTime(b, pid) - before) / wideRequests
	}
	// Managed fields of a map of n users take about 50n bytes of the
	// 256 KiB annotation budget (K1), so 2n stays at 2,000.
	const n = 1000
	api1 := cpuOf(apiPID, "/apis/apps.cozystack.io/v1alpha1/namespaces/deep/postgreses", wide("Postgres", n))
	api2 := cpuOf(apiPID, "/apis/apps.cozystack.io/v1alpha1/namespaces/deep/postgreses", wide("Postgres", 2*n))
	kube1 := cpuOf(kubePID, "/apis/helm.toolkit.fluxcd.io/v2/namespaces/deep/helmreleases", wide("HelmRelease", n))
	kube2 := cpuOf(kubePID, "/apis/helm.toolkit.fluxcd.io/v2/namespaces/deep/helmreleases", wide("HelmRelease", 2*n))
	b.ReportMetric(float64(api1)/float64(time.Millisecond), "api-cpu-ms/users-1000")
	b.ReportMetric(float64(api2)/float64(api1), "api-cpu-growth/2x-size")
	b.ReportMetric(float64(kube2)/float64(kube1), "kube-cpu-growth/2x-size")
	b.ReportMetric(float64(api2)/float64(kube2), "cpu-ratio/users-2000")

	if err := c.Post().AbsPath("/apis/apps.cozystack.io/v1alpha1/namespaces/deep/postgreses").Body(postgresBody("db", 2)).
		SetHeader("Content-Type", "application/json").Do(ctx).Error(); err != nil {
		b.Fatal(err)
	}
	timed := func(path string) time.Duration {
		start := time.Now()
		_ = c.Get().AbsPath(path).Param("resourceVersion", "999999999").MaxRetries(0).Do(ctx).Error()
		return time.Since(start)
	}
	var api, kube time.Duration
	for i := 0; i < 3; i++ {
		api += timed("/apis/apps.cozystack.io/v1alpha1/namespaces/deep/postgreses/db")
		kube += timed("/apis/helm.toolkit.fluxcd.io/v2/namespaces/deep/helmreleases/postgres-db")
	}
	b.ReportMetric(api.Seconds()/3, "future-rv-api-s")
	b.ReportMetric(kube.Seconds()/3, "future-rv-kube-s")
	b.ReportMetric(float64(api)/float64(kube), "future-rv-ratio")
}
