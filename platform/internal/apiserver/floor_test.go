package apiserver_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"cozystack.io/platform/internal/adfixtures"
	"cozystack.io/sdk/testenv"
)

// floorGroupVersion is the API the aggregation floor serves.
var floorGroupVersion = schema.GroupVersion{Group: "floor.bench.cozystack.io", Version: "v1alpha1"}

// floorRelease is an object created through the aggregation floor (its
// content is dropped).
func floorRelease(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": floorGroupVersion.String(), "kind": "Release",
		"metadata": map[string]any{"name": name}}}
}

// aggregationFloor starts the cheapest aggregated API server that stores a
// HelmRelease, registers it through the aggregation layer and returns its
// resource "releases" in namespace ns. A create request's body is read and
// dropped; the server writes the HelmRelease newHR returns (the native
// side's) to kube-apiserver and answers with kube-apiserver's response. It
// authenticates, decodes and validates nothing. Creating through it
// measures what the aggregation layer alone costs: kube-apiserver's proxy,
// a second request through kube-apiserver's filters, TLS to and from
// another process. Any aggregated API that stores HelmReleases pays that
// much, so this is the lowest create ratio such an API can reach here.
func aggregationFloor(b *testing.B, ns string, newHR func(string) *unstructured.Unstructured) dynamic.ResourceInterface {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := env.PKI().IssueServing(cert, key, "floor", "floor.cozy-system.svc", "localhost"); err != nil {
		b.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		b.Fatal(err)
	}
	kube, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		b.Fatal(err)
	}
	prefix := "/apis/" + floorGroupVersion.String()
	hrURL := env.Config.Host + "/apis/helm.toolkit.fluxcd.io/v2/namespaces/" + ns + "/helmreleases?fieldManager=floor"
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":%q,"resources":[{"name":"releases","singularName":"release","namespaced":true,"kind":"Release","verbs":["create"]}]}`, floorGroupVersion.String())
	})
	mux.HandleFunc("POST "+prefix+"/namespaces/"+ns+"/releases", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		body, err := newHR(fmt.Sprintf("floor-%d", n.Add(1))).MarshalJSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, err := kube.Post(hrURL, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"h2", "http/1.1"}}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	port := int32(ln.Addr().(*net.TCPAddr).Port)

	// Registered as cozystack-api is on the local control plane: an
	// ExternalName Service pointing at localhost.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "floor", Namespace: "cozy-system"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
		Ports: []corev1.ServicePort{{Name: "https", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}},
	}}
	ca, err := os.ReadFile(env.PKI().CACert())
	if err != nil {
		b.Fatal(err)
	}
	apiService := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: floorGroupVersion.Version + "." + floorGroupVersion.Group},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: floorGroupVersion.Group, Version: floorGroupVersion.Version,
			Service:  &apiregistrationv1.ServiceReference{Namespace: svc.Namespace, Name: svc.Name, Port: ptr.To(port)},
			CABundle: ca, GroupPriorityMinimum: 1000, VersionPriority: 15,
		},
	}
	if err := backend.Create(ctx, svc); err != nil {
		b.Fatal(err)
	}
	if err := backend.Create(ctx, apiService); err != nil {
		b.Fatal(err)
	}
	// Unregistered first, so that discovery never lists an APIService
	// whose server is gone.
	b.Cleanup(func() {
		_ = backend.Delete(ctx, apiService)
		_ = backend.Delete(ctx, svc)
		_ = srv.Close()
	})

	releases := dynamic.NewForConfigOrDie(env.Config).Resource(floorGroupVersion.WithResource("releases")).Namespace(ns)
	probe := floorRelease("probe")
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := releases.Create(ctx, probe, metav1.CreateOptions{})
		if err == nil {
			return releases
		}
		if time.Now().After(deadline) {
			b.Fatalf("the aggregation floor never answered through kube-apiserver: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkGenericFloor measures the lowest create ratio that an
// application API built on k8s.io/apiserver reaches on this machine:
// creates through the benchfloor command (cozystack-api whose create only
// forwards a prebuilt HelmRelease; see its package documentation) against
// the same HelmRelease written directly, sequentially and interleaved, with
// creates through the aggregation floor (see aggregationFloor) alongside.
// With BenchmarkApplicationAPI's create ratio this splits cozystack-api's
// overhead into the aggregation layer's share, k8s.io/apiserver's share and
// its own. Run: go test -run '^$' -bench GenericFloor.
func BenchmarkGenericFloor(b *testing.B) {
	testenv.Need(b, env)
	ctx := context.Background()
	serverProcessOf(b, "cozystack.io/platform/internal/apiserver/benchfloor")
	const ns = "floor-0"
	ensureNamespace(b, ns)
	// BenchmarkApplicationAPI, run before in the same process, may have
	// created the kind already.
	if err := backend.Create(ctx, adfixtures.Named(b, "postgres")); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(env.Config)
	pg := dyn.Resource(postgreses).Namespace(ns)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := pg.Create(ctx, postgresApp("first"), metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("benchfloor never created an application: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	hrs := dyn.Resource(schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"})
	hrObj := directHelmRelease(b, hrs.Namespace(ns), "first")
	floor := aggregationFloor(b, ns, hrObj)

	const creates = 500
	generic := &createSide{resource: pg, object: func(i int) *unstructured.Unstructured { return postgresApp(fmt.Sprintf("c%d", i)) }}
	direct := &createSide{resource: hrs.Namespace(ns), object: func(i int) *unstructured.Unstructured { return hrObj(fmt.Sprintf("direct-c%d", i)) },
		opts: metav1.CreateOptions{FieldManager: "direct"}}
	aggregation := &createSide{resource: floor, object: func(i int) *unstructured.Unstructured { return floorRelease(fmt.Sprintf("f%d", i)) }}
	interleavedCreates(b, creates, generic, direct, aggregation)
	b.ReportMetric(ratio(generic.times, direct.times), "create-generic-floor-p50-ratio")
	b.ReportMetric(ratio(aggregation.times, direct.times), "create-floor-p50-ratio")
	fmt.Printf("create p50: k8s.io/apiserver floor %s, HelmRelease %s, aggregation floor %s\n", p50(generic.times), p50(direct.times), p50(aggregation.times))
}
