package backup_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
)

// apiRequests reads kube-apiserver's apiserver_request_total from its
// /metrics: the requests served so far, by "VERB resource[/subresource]"
// (every client: the core, kube-controller-manager, the benchmark).
func apiRequests(b *testing.B) map[string]float64 {
	b.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatalf("read kube-apiserver /metrics: %v", err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		l := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				l[k] = strings.Trim(v, `"`)
			}
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += n
	}
	return out
}

// requestsBetween is after minus before, per key, leaving out the
// benchmark's own polling (LIST backupjobs) and watches; writes counts
// the verbs that change an object.
func requestsBetween(before, after map[string]float64) (delta map[string]float64, total, writes float64) {
	delta = map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 && k != "LIST backupjobs" && !strings.HasPrefix(k, "WATCH ") {
			delta[k] = d
			total += d
			switch strings.SplitN(k, " ", 2)[0] {
			case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION":
				writes += d
			}
		}
	}
	return delta, total, writes
}

// formatRequests lists delta's keys by count, the largest first.
func formatRequests(delta map[string]float64) string {
	keys := slices.SortedFunc(maps.Keys(delta), func(a, b string) int {
		if delta[a] != delta[b] {
			if delta[a] > delta[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var s []string
	for _, k := range keys {
		s = append(s, fmt.Sprintf("%s %.0f", k, delta[k]))
	}
	return strings.Join(s, ", ")
}
