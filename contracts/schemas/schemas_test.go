package schemas_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/schemas"
)

// TestSchemasCompile compiles every embedded schema and checks each has
// its document beside it.
func TestSchemasCompile(t *testing.T) {
	paths, err := fs.Glob(schemas.FS(), "*/*.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(paths, schemas.K2ClusterValues) {
		t.Fatalf("embedded schemas %v lack %s", paths, schemas.K2ClusterValues)
	}
	for _, p := range paths {
		if _, err := schemas.Compile(p); err != nil {
			t.Errorf("%v", err)
		}
		doc := strings.TrimSuffix(p, ".schema.json") + ".md"
		if _, err := fs.Stat(schemas.FS(), doc); err != nil {
			t.Errorf("%s has no document %s beside it", p, doc)
		}
	}
	if _, err := schemas.Compile("v1alpha1/missing.schema.json"); err == nil {
		t.Error("Compile of a missing file succeeded")
	}
	// A subschema by JSON pointer.
	sub, err := schemas.Compile(schemas.K2ClusterValues + "#/properties/_namespace")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Validate(map[string]any{"host": "example.org"}); err != nil {
		t.Errorf("the _namespace subschema refuses a valid object: %v", err)
	}
	if err := sub.Validate(map[string]any{}); err == nil {
		t.Error("the _namespace subschema accepts an object without host")
	}
	if _, err := schemas.Compile(schemas.K2ClusterValues + "#/properties/missing"); err == nil {
		t.Error("Compile of a missing subschema succeeded")
	}
}

// fullSpec sets every field of ClusterValuesSpec.
func fullSpec() v1alpha1.ClusterValuesSpec {
	return v1alpha1.ClusterValuesSpec{
		RootHost:          "example.org",
		APIServerEndpoint: "https://api.example.org:6443",
		Networking: v1alpha1.ClusterValuesNetworking{
			ClusterDomain: "cozy.local", PodCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/16", JoinCIDR: "100.64.0.0/16",
		},
		Publishing: v1alpha1.ClusterValuesPublishing{
			ExposedServices: []string{"dashboard", "api"}, IngressName: "tenant-root",
			ExternalIPs: []v1alpha1.IPAddress{"192.0.2.10", "2001:db8::1"}, LoadBalancerClass: "metallb",
		},
		Certificates: v1alpha1.ClusterValuesCertificates{IssuerName: "letsencrypt-prod", Solver: "dns01"},
		OIDC: v1alpha1.ClusterValuesOIDC{
			Enabled: true, IssuerURL: "https://keycloak.example.org/realms/cozy", ClientID: "kubernetes",
			RealmName: "cozy", DashboardExtraRedirectURI: "https://dash.example.org/cb",
		},
		Gateway:     v1alpha1.ClusterValuesGateway{Enabled: true, ClassName: "cilium"},
		Resources:   v1alpha1.ClusterValuesResources{CPUAllocationRatio: "10", MemoryAllocationRatio: "1", EphemeralStorageAllocationRatio: "40"},
		Images:      v1alpha1.ClusterValuesImages{Registry: "registry.example.org/cozystack"},
		PodSecurity: v1alpha1.ClusterValuesPodSecurity{TenantLevel: "baseline"},
		Scheduling:  v1alpha1.ClusterValuesScheduling{DefaultSchedulingClass: "default"},
		Branding: v1alpha1.ClusterValuesBranding{
			TitleText: "Cloud", FooterText: "(c) Example", TenantText: "Tenant", LogoText: "Example",
			LogoSVG: "PHN2Zy8+", IconSVG: "PHN2Zy8+",
		},
	}
}

// defaultedSpec is the smallest spec the API server admits, with the
// defaults it applies.
func defaultedSpec() v1alpha1.ClusterValuesSpec {
	return v1alpha1.ClusterValuesSpec{
		RootHost:          "example.org",
		APIServerEndpoint: "https://192.0.2.1:6443",
		Networking:        v1alpha1.ClusterValuesNetworking{ClusterDomain: "cozy.local"},
		Publishing:        v1alpha1.ClusterValuesPublishing{IngressName: "tenant-root"},
		Certificates:      v1alpha1.ClusterValuesCertificates{IssuerName: "letsencrypt-prod", Solver: "http01"},
		Gateway:           v1alpha1.ClusterValuesGateway{ClassName: "cilium"},
		Resources:         v1alpha1.ClusterValuesResources{CPUAllocationRatio: "10", MemoryAllocationRatio: "1", EphemeralStorageAllocationRatio: "40"},
	}
}

var tenantLabels = map[string]string{
	v1alpha1.LabelTenant: "root", v1alpha1.LabelHost: "example.org", v1alpha1.LabelIngress: "tenant-root",
	v1alpha1.LabelMonitoring: "tenant-root", v1alpha1.LabelEtcd: "tenant-root", v1alpha1.LabelSeaweedFS: "tenant-root",
	v1alpha1.LabelGateway: "tenant-root", v1alpha1.LabelSchedulingClass: "default",
}

// decoded turns a Go value into what the validator expects, through JSON.
func decoded(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compileK2(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := schemas.Compile(schemas.K2ClusterValues)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestK2ValuesFromSpec validates the documents v1alpha1.Values renders
// (the function the controller uses) and checks that schema and code name
// the same keys.
func TestK2ValuesFromSpec(t *testing.T) {
	s := compileK2(t)
	for name, spec := range map[string]v1alpha1.ClusterValuesSpec{"full": fullSpec(), "defaulted": defaultedSpec()} {
		values, err := v1alpha1.Values(&spec, tenantLabels, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(decoded(t, values)); err != nil {
			t.Errorf("%s spec: %v", name, err)
		}
	}

	// Every property of the schema is rendered from a full spec, and
	// nothing else.
	full := fullSpec()
	values, err := v1alpha1.Values(&full, tenantLabels, nil)
	if err != nil {
		t.Fatal(err)
	}
	props := schemaProperties(t)
	for _, obj := range []string{"_cluster", "_namespace"} {
		got := slices.Sorted(maps.Keys(values[obj].(map[string]any)))
		want := slices.Sorted(maps.Keys(props[obj]))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the full spec renders %v; the schema declares %v", obj, got, want)
		}
	}
}

// schemaProperties reads the property names of _cluster and _namespace
// from the schema file.
func schemaProperties(t *testing.T) map[string]map[string]any {
	t.Helper()
	data, err := fs.ReadFile(schemas.FS(), schemas.K2ClusterValues)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return map[string]map[string]any{
		"_cluster": doc.Properties["_cluster"].Properties, "_namespace": doc.Properties["_namespace"].Properties,
	}
}

// TestK2InvalidValues checks that the schema refuses what charts must
// never see.
func TestK2InvalidValues(t *testing.T) {
	s := compileK2(t)
	spec := defaultedSpec()
	base := func() map[string]any {
		v, err := v1alpha1.Values(&spec, tenantLabels, nil)
		if err != nil {
			t.Fatal(err)
		}
		return decoded(t, v).(map[string]any)
	}
	cluster := func(v map[string]any) map[string]any { return v["_cluster"].(map[string]any) }
	namespace := func(v map[string]any) map[string]any { return v["_namespace"].(map[string]any) }
	for _, tc := range []struct {
		name   string
		mutate func(map[string]any)
		want   string // a fragment of the error: the offending location
	}{
		{"empty root-host", func(v map[string]any) { cluster(v)["root-host"] = "" }, "/_cluster/root-host"},
		{"missing root-host", func(v map[string]any) { delete(cluster(v), "root-host") }, "root-host"},
		{"empty optional key", func(v map[string]any) { cluster(v)["images-registry"] = "" }, "/_cluster/images-registry"},
		{"boolean instead of string", func(v map[string]any) { cluster(v)["oidc-enabled"] = true }, "/_cluster/oidc-enabled"},
		{"unknown cluster key", func(v map[string]any) { cluster(v)["bundle-name"] = "paas-full" }, "bundle-name"},
		{"zero ratio", func(v map[string]any) { cluster(v)["cpu-allocation-ratio"] = "0" }, "/_cluster/cpu-allocation-ratio"},
		{"http endpoint", func(v map[string]any) { cluster(v)["api-server-endpoint"] = "http://x:6443" }, "/_cluster/api-server-endpoint"},
		{"missing host", func(v map[string]any) { delete(namespace(v), "host") }, "host"},
		{"empty etcd", func(v map[string]any) { namespace(v)["etcd"] = "" }, "/_namespace/etcd"},
		{"unknown top-level object", func(v map[string]any) { v["_tenant"] = map[string]any{} }, "_tenant"},
		{"missing _cluster", func(v map[string]any) { delete(v, "_cluster") }, "_cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := base()
			tc.mutate(v)
			err := s.Validate(v)
			if err == nil {
				t.Fatal("the schema accepted it")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not name %q:\n%v", tc.want, err)
			}
		})
	}
}

// TestK2DocumentListsEveryKey checks that the Markdown table documents
// every key of the schema.
func TestK2DocumentListsEveryKey(t *testing.T) {
	data, err := fs.ReadFile(schemas.FS(), strings.TrimSuffix(schemas.K2ClusterValues, ".schema.json")+".md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	props := schemaProperties(t)
	for obj, keys := range props {
		for key, p := range keys {
			if !strings.Contains(doc, "| `"+key+"` |") {
				t.Errorf("k2-cluster-values.md has no table row for %s.%s", obj, key)
			}
			sub, _ := p.(map[string]any)["properties"].(map[string]any)
			for subkey := range sub {
				if !strings.Contains(doc, "| `"+key+"."+subkey+"` |") {
					t.Errorf("k2-cluster-values.md has no table row for %s.%s.%s", obj, key, subkey)
				}
			}
		}
	}
}
