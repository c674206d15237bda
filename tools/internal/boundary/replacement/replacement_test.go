package replacement

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"cozystack.io/sdk/localcp"
	"cozystack.io/tools/internal/boundary/edge"
)

func TestFor(t *testing.T) {
	table := New([]Entry{
		{Group: "acid.zalan.do", K3: []string{"storage.replicated"}},
		// Overrides the default for the same group, version, kind and rule.
		{Group: "cert-manager.io", K2: []string{"_cluster.issuer-name"}, Note: "ours"},
		{Group: "*.example.io", Note: "nothing yet"},
		{Group: "*.db.example.io", K2: []string{"_namespace.etcd"}},
	})
	for _, tc := range []struct {
		rule   edge.Rule
		target string
		offer  string
	}{
		{edge.HelmCapabilities, "snapshot.storage.k8s.io/v1", "K3 storage.snapshots"},
		{edge.HelmLookup, "snapshot.storage.k8s.io/v1 VolumeSnapshotClass", "K3 storage.snapshots"},
		{edge.HelmCapabilities, "linstor.linbit.com/v1", "K3 storage.replicated"},
		{edge.HelmCapabilities, "linbit.com/v1", "none yet"}, // "*.x" is subdomains only
		{edge.HelmLookup, "kubeovn.io/v1 Subnet", "K2 _cluster.ipv4-cluster-cidr, _cluster.ipv4-join-cidr"},
		{edge.HelmCapabilities, "kubeovn.io/v1/Subnet", "K3 network.stableVMAddress"}, // the Subnet entry is lookups only
		{edge.HelmLookup, "kubeovn.io/v1 IP", "K3 network.stableVMAddress"},
		{edge.HelmLookup, "kubevirt.io/v1 KubeVirt", "K3 gpu.passthrough"},
		{edge.HelmCapabilities, "kubevirt.io/v1/VirtualMachine", "none yet"},
		{edge.HelmCapabilities, "kubevirt.io/v1", "none yet"},
		{edge.HelmLookup, "cilium.io/v2alpha1 CiliumLoadBalancerIPPool", "K3 network.loadBalancer"},
		{edge.HelmLookup, "cilium.io/v2 CiliumNetworkPolicy", "none yet"},
		{edge.HelmLookup, "cozystack.io/v1alpha1 ClusterValues", "K2 _cluster"},
		{edge.HelmLookup, "postgresql.cnpg.io/v1 Cluster", "none yet"},
		{edge.HelmLookup, "acid.zalan.do/v1 postgresql", "K3 storage.replicated"},
		{edge.HelmLookup, "cert-manager.io/v1 ClusterIssuer", "K2 _cluster.issuer-name"},
		{edge.HelmLookup, "backups.example.io/v1", "none yet"},
		{edge.HelmLookup, "x.db.example.io/v1", "K2 _namespace.etcd"}, // the longer pattern
		{edge.HelmLookup, "v1 Secret", "none yet"},
	} {
		got := table.For(tc.rule, tc.target)
		if got.Offer != tc.offer {
			t.Errorf("%s %q: offer %q, want %q", tc.rule, tc.target, got.Offer, tc.offer)
		}
	}
	if r := table.For(edge.HelmLookup, "cert-manager.io/v1 ClusterIssuer"); r.Note != "ours" || len(r.K2) != 1 {
		t.Errorf("the configuration's entry must override the default: %+v", r)
	}
}

func TestSplit(t *testing.T) {
	for in, want := range map[string][3]string{
		"v1":                        {"", "v1", ""},
		"v1 Secret":                 {"", "v1", "Secret"},
		"v1/Pod":                    {"", "v1", "Pod"},
		"apps/v1":                   {"apps", "v1", ""},
		"apps/v1/Deployment":        {"apps", "v1", "Deployment"},
		"kubevirt.io/v1 KubeVirt":   {"kubevirt.io", "v1", "KubeVirt"},
		"x.io/v1beta1/Thing":        {"x.io", "v1beta1", "Thing"},
		"monitoring.coreos.com/v1":  {"monitoring.coreos.com", "v1", ""},
		"metallb.io/v1beta1 IPPool": {"metallb.io", "v1beta1", "IPPool"},
	} {
		g, v, k := split(in)
		if [3]string{g, v, k} != want {
			t.Errorf("split(%q) = %q %q %q, want %q", in, g, v, k, want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		e    Entry
		want string
	}{
		{Entry{}, "group is required"},
		{Entry{Group: "a.*.io"}, "only a leading"},
		{Entry{Group: "a.io", Rule: edge.CRDKind}, "want helm-lookup, helm-capabilities or none"},
		{Entry{Group: "a.io", K2: []string{"root-host"}}, "want _cluster.<key>"},
		{Entry{Group: "a.io", K3: []string{""}}, "empty k3"},
	} {
		if err := Validate([]Entry{tc.e}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.e, err, tc.want)
		}
	}
	if err := Validate([]Entry{{Group: "*.a.io", Rule: edge.HelmLookup, K2: []string{"_namespace.host"}}}); err != nil {
		t.Error(err)
	}
}

// The built-in table names only K2 keys and K3 properties the contract
// documents of this repository define, so it cannot drift from them: K2
// keys are checked against the tables of k2-cluster-values.md and the
// properties of k2-cluster-values.schema.json, K3 properties against
// k3-properties.md and k3-properties.json.
func TestDefaultsNameContractEntries(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "contracts/schemas/v1alpha1")
	k2md := k2FromMarkdown(t, read(t, dir, "k2-cluster-values.md"))
	k2schema := k2FromSchema(t, read(t, dir, "k2-cluster-values.schema.json"))
	k3md := k3FromMarkdown(read(t, dir, "k3-properties.md"))
	var k3json struct {
		Properties []struct{ Name string } `json:"properties"`
	}
	if err := json.Unmarshal(read(t, dir, "k3-properties.json"), &k3json); err != nil {
		t.Fatal(err)
	}
	k3list := map[string]bool{}
	for _, p := range k3json.Properties {
		k3list[p.Name] = true
	}
	if len(k2md) < 10 || len(k3md) < 3 {
		t.Fatalf("the contract documents did not parse: K2 %v, K3 %v", k2md, k3md)
	}
	named := 0
	for _, e := range Defaults() {
		for _, k := range e.K2 {
			named++
			if !k2md[k] || !k2schema[k] {
				t.Errorf("defaults.yaml: %s: K2 key %s is not in k2-cluster-values.md (%v) and its schema (%v)", e.Group, k, k2md[k], k2schema[k])
			}
		}
		for _, p := range e.K3 {
			named++
			if !k3md[p] || !k3list[p] {
				t.Errorf("defaults.yaml: %s: K3 property %s is not in k3-properties.md (%v) and k3-properties.json (%v)", e.Group, p, k3md[p], k3list[p])
			}
		}
	}
	if named == 0 {
		t.Error("defaults.yaml names no contract entry")
	}
}

var (
	k2SectionRE = regexp.MustCompile("^### `(_cluster|_namespace)`")
	tableKeyRE  = regexp.MustCompile("^\\| `([^`]+)` \\|")
)

// k2FromMarkdown returns "_cluster", "_namespace" and "<object>.<key>" for
// every key row of the document's two key tables.
func k2FromMarkdown(t *testing.T, doc []byte) map[string]bool {
	keys := map[string]bool{}
	section := ""
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, "#") {
			section = ""
			if m := k2SectionRE.FindStringSubmatch(line); m != nil {
				section = m[1]
				keys[section] = true
			}
			continue
		}
		if m := tableKeyRE.FindStringSubmatch(line); m != nil && section != "" {
			keys[section+"."+m[1]] = true
		}
	}
	return keys
}

// k2FromSchema returns the same names from the JSON schema: every property
// path under _cluster and _namespace.
func k2FromSchema(t *testing.T, data []byte) map[string]bool {
	type node struct {
		Properties map[string]*node `json:"properties"`
	}
	var root node
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(prefix string, n *node)
	walk = func(prefix string, n *node) {
		keys[prefix] = true
		for k, sub := range n.Properties {
			walk(prefix+"."+k, sub)
		}
	}
	for k, sub := range root.Properties {
		walk(k, sub)
	}
	return keys
}

func k3FromMarkdown(doc []byte) map[string]bool {
	props := map[string]bool{}
	for line := range strings.Lines(string(doc)) {
		if m := tableKeyRE.FindStringSubmatch(line); m != nil {
			props[m[1]] = true
		}
	}
	return props
}

func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// repoRoot is this repository's root (localcp.RepoRoot: the go.work next
// to sdk/localcp).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, ok := localcp.RepoRoot()
	if !ok {
		t.Fatal("no repository root above the test directory")
	}
	return root
}
