package clustervalues

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func fullClusterValues() *v1alpha1.ClusterValues {
	return &v1alpha1.ClusterValues{
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterValuesName, Generation: 3},
		Spec: v1alpha1.ClusterValuesSpec{
			RootHost: "example.org", APIServerEndpoint: "https://api.example.org:6443",
			Networking: v1alpha1.ClusterValuesNetworking{ClusterDomain: "cozy.local", PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/16", JoinCIDR: "100.64.0.0/16"},
			Publishing: v1alpha1.ClusterValuesPublishing{ExposedServices: []string{"dashboard", "api"}, IngressName: "tenant-root",
				ExternalIPs: []v1alpha1.IPAddress{"192.0.2.10"}, LoadBalancerClass: "metallb"},
			Certificates: v1alpha1.ClusterValuesCertificates{IssuerName: "letsencrypt-prod", Solver: "http01"},
			OIDC:         v1alpha1.ClusterValuesOIDC{Enabled: true, RealmName: "cozy"},
			Gateway:      v1alpha1.ClusterValuesGateway{ClassName: "cilium"},
			Resources:    v1alpha1.ClusterValuesResources{CPUAllocationRatio: "10", MemoryAllocationRatio: "1", EphemeralStorageAllocationRatio: "40"},
			Images:       v1alpha1.ClusterValuesImages{Registry: "registry.example.org/cozystack"},
			Scheduling:   v1alpha1.ClusterValuesScheduling{DefaultSchedulingClass: "default"},
			Branding:     v1alpha1.ClusterValuesBranding{TitleText: "Example Cloud"},
		},
	}
}

func tenantNamespace(name string, labels map[string]string) *corev1.Namespace {
	l := map[string]string{v1alpha1.LabelTenant: name}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

// TestRenderGolden pins the bytes of the document: a change here changes
// what every release renders.
func TestRenderGolden(t *testing.T) {
	cluster, err := renderCluster(fullClusterValues())
	if err != nil {
		t.Fatal(err)
	}
	ns := tenantNamespace("tenant-foo", map[string]string{
		v1alpha1.LabelHost: "foo.example.org", v1alpha1.LabelIngress: "tenant-root", v1alpha1.LabelMonitoring: "tenant-root",
		v1alpha1.LabelEtcd: "tenant-foo", v1alpha1.LabelSeaweedFS: "", v1alpha1.LabelSchedulingClass: "gpu",
	})
	doc, err := renderNamespace(cluster, ns)
	if err != nil {
		t.Fatal(err)
	}
	for file, got := range map[string][]byte{"values.golden.yaml": doc.values} {
		path := filepath.Join("testdata", file)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s (-golden +rendered):\n%s", path, diff)
		}
	}
	// Rendering is deterministic: the controller compares bytes.
	again, err := renderNamespace(cluster, ns)
	if err != nil || string(again.values) != string(doc.values) {
		t.Errorf("a second render differs (err %v)", err)
	}
}

func TestRenderRefusesInvalid(t *testing.T) {
	bad := fullClusterValues()
	bad.Spec.RootHost = ""
	if _, err := renderCluster(bad); err == nil || !strings.Contains(err.Error(), "root-host") {
		t.Errorf("empty root host: err = %v, want one naming root-host", err)
	}
	bad = fullClusterValues()
	bad.Spec.Resources.CPUAllocationRatio = "0"
	if _, err := renderCluster(bad); err == nil || !strings.Contains(err.Error(), "/cpu-allocation-ratio") {
		t.Errorf("zero ratio: err = %v, want one naming /cpu-allocation-ratio", err)
	}

	cluster, err := renderCluster(fullClusterValues())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := renderNamespace(cluster, tenantNamespace("nohost", nil)); err == nil || !strings.Contains(err.Error(), v1alpha1.LabelHost) {
		t.Errorf("no host: err = %v, want one naming %s", err, v1alpha1.LabelHost)
	}
	badHost := tenantNamespace("badhost", map[string]string{v1alpha1.LabelHost: "Foo_Bar"})
	if _, err := renderNamespace(cluster, badHost); err == nil || !strings.Contains(err.Error(), "/host") {
		t.Errorf("malformed host: err = %v, want one naming /host", err)
	}
}
