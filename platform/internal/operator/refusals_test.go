package operator_test

// Each refusal of docs/operator/catalogs.md, "Catalog delivery" ("Refusals leave nothing
// behind"): a clear condition and nothing half created.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/platform/internal/operator/names"
)

// layoutSource returns a PackageSource reading tag from the layout dir.
func layoutSource(name, dir, tag string) *v1alpha1.PackageSource {
	return &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.PackageSourceSpec{Layout: &v1alpha1.LayoutSource{Path: dir, Tag: tag}}}
}

// expectNothingPublished fails if source has ExternalArtifacts or a served
// artifact.
func expectNothingPublished(t *testing.T, ps *v1alpha1.PackageSource) {
	t.Helper()
	if eas := artifactsOf(t, ps.Name); len(eas) > 0 {
		t.Errorf("PackageSource %s was refused but published %d ExternalArtifacts", ps.Name, len(eas))
	}
	if ps.Status.Artifact != nil {
		t.Errorf("PackageSource %s was refused but reports artifact %+v", ps.Name, ps.Status.Artifact)
	}
}

func TestDigestMismatchInLayout(t *testing.T) {
	start(t)
	dir := t.TempDir()
	store, err := oci.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(ctxT(t), simpleCatalog(t, "tampered", "1.0.0", "e2e-tampered", "x"), store, build.Options{Tag: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	// Flip the chart's bytes on disk, keeping its size.
	blob := filepath.Join(dir, "blobs", "sha256", res.Charts[0].Descriptor.Digest.Encoded())
	data, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] ^= 0x55
	}
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	create(t, layoutSource("tampered", dir, "1.0.0"))
	ps := waitSource(t, "tampered", "DigestMismatch", sourceReady(False, v1alpha1.ReasonDigestMismatch))
	mustContain(t, "message", ready(ps.Status.Conditions).Message,
		"chart charts/web", "expected "+res.Charts[0].Descriptor.Digest.String(), "got sha256:", "nothing is served yet")
	expectNothingPublished(t, ps)
}

func TestUnsafeArchive(t *testing.T) {
	start(t)
	ctx := ctxT(t)
	dir := t.TempDir()
	store, err := oci.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A chart archive with a "../" entry, in an otherwise valid artifact
	// (the build refuses to make one, so it is assembled by hand).
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct{ name, body string }{
		{"evil/Chart.yaml", "apiVersion: v2\nname: evil\nversion: 0.1.0\n"},
		{"evil/../../escape.txt", "outside\n"},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	layer := content.NewDescriptorFromBytes(artifact.ChartMediaType, buf.Bytes())
	layer.Annotations = map[string]string{artifact.AnnotationTitle: "charts/evil", artifact.AnnotationChartName: "evil", artifact.AnnotationChartVersion: "0.1.0"}
	cat := artifact.Catalog{APIVersion: artifact.CatalogAPIVersion, Kind: artifact.CatalogKind,
		CatalogInfo: v1alpha1.CatalogInfo{Name: "evil", Version: "1.0.0", MinPlatformVersion: "0.1.0"},
		Variants: []v1alpha1.PackageVariant{{Name: "default", Components: []v1alpha1.PackageComponent{
			{Name: "evil", Chart: "charts/evil", Namespace: "e2e-evil"}}}}}
	cfgData, err := json.Marshal(cat)
	if err != nil {
		t.Fatal(err)
	}
	cfg := content.NewDescriptorFromBytes(artifact.ConfigMediaType, cfgData)
	for _, b := range []struct {
		d    ocispec.Descriptor
		data []byte
	}{{layer, buf.Bytes()}, {cfg, cfgData}} {
		if err := store.Push(ctx, b.d, bytes.NewReader(b.data)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, artifact.ArtifactType,
		oras.PackManifestOptions{ConfigDescriptor: &cfg, Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Tag(ctx, m, "1.0.0"); err != nil {
		t.Fatal(err)
	}

	create(t, layoutSource("evil", dir, "1.0.0"))
	ps := waitSource(t, "evil", "UnsafeArchive", sourceReady(False, v1alpha1.ReasonUnsafeArchive))
	mustContain(t, "message", ready(ps.Status.Conditions).Message, "evil/../../escape.txt", "path traversal", "charts/evil",
		m.Digest.String()+" is not pulled again until the tag moves", "attempt 1 failed, the next in 10s")
	expectNothingPublished(t, ps)
	if _, err := os.Stat(filepath.Join(storeDir, "blobs", "sha256", m.Digest.Encoded())); !os.IsNotExist(err) {
		t.Errorf("the unsafe artifact was stored (stat: %v)", err)
	}

	// The refused revision is not pulled again (docs/operator/catalogs.md, "Catalog
	// delivery", "Refusals leave nothing behind"), and the
	// retries back off visibly. With the chart gone from the layout, a
	// second pull would fail otherwise (PullFailed).
	if err := os.Remove(filepath.Join(dir, "blobs", "sha256", layer.Digest.Encoded())); err != nil {
		t.Fatal(err)
	}
	ps = waitSource(t, "evil", "a second attempt", func(ps *v1alpha1.PackageSource) bool {
		c := ready(ps.Status.Conditions)
		return c != nil && strings.Contains(c.Message, "attempt 2 failed")
	})
	c := ready(ps.Status.Conditions)
	if c.Reason != v1alpha1.ReasonUnsafeArchive {
		t.Errorf("second attempt: %s: %s, want the refusal kept without a pull", c.Reason, c.Message)
	}
	mustContain(t, "message", c.Message, "path traversal", "the next in 20s")
}

// TestRequirementsNotMet: an unmet platform version and an unmet property
// are refused before anything is published; a Package of such a source
// waits and installs nothing.
func TestRequirementsNotMet(t *testing.T) {
	start(t)
	for _, tc := range []struct {
		name, requirements string
		want               []string
	}{
		{"req-version", "minPlatformVersion: 99.0.0", []string{"needs platform version 99.0.0 or newer, this platform is 0.1.0"}},
		{"req-property", "minPlatformVersion: 0.1.0\nrequiredProperties: [gpu.nvidia]", []string{"needs the K3 properties gpu.nvidia", "it advertises: network.stableVMAddress"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %s
version: 1.0.0
%s
variants:
  - name: default
    components:
      - name: web
        chart: charts/web
        namespace: e2e-%s`+configMapRule+`
`, tc.name, tc.requirements, tc.name), chart{dir: "charts/web", values: "greeting: x\n"})
			push(t, dir, "e2e/"+tc.name, "1.0.0")
			create(t, ociSource(tc.name, "e2e/"+tc.name, "1.0.0"))
			create(t, newPackage(tc.name, tc.name, "", false))
			ps := waitSource(t, tc.name, "RequirementsNotMet", sourceReady(False, v1alpha1.ReasonRequirementsNotMet))
			mustContain(t, "message", ready(ps.Status.Conditions).Message, append(tc.want, "catalog "+tc.name+" 1.0.0")...)
			expectNothingPublished(t, ps)
			waitPackage(t, tc.name, "SourceNotReady", packageReady(False, v1alpha1.ReasonSourceNotReady))
			expectNothingInstalled(t, tc.name)
		})
	}
}

func TestMissingVariant(t *testing.T) {
	start(t)
	push(t, simpleCatalog(t, "variants", "1.0.0", "e2e-variants", "x"), "e2e/variants", "1.0.0")
	create(t, ociSource("variants", "e2e/variants", "1.0.0"))
	create(t, newPackage("variants", "variants", "large", false))
	p := waitPackage(t, "variants", "VariantMissing", packageReady(False, v1alpha1.ReasonVariantMissing))
	mustContain(t, "message", ready(p.Status.Conditions).Message, `spec.variant "large"`, "available: default")
	expectNothingInstalled(t, "variants")
}

// TestDependencyCycle: catalogs that depend on each other; their Packages
// report the cycle and install nothing.
func TestDependencyCycle(t *testing.T) {
	start(t)
	for _, pair := range [][2]string{{"cyc-a", "cyc-b"}, {"cyc-b", "cyc-a"}} {
		dir := writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %s
version: 1.0.0
minPlatformVersion: 0.1.0
variants:
  - name: default
    dependsOn: [%s]
    components:
      - name: web
        chart: charts/web
        namespace: e2e-%s`+configMapRule+`
`, pair[0], pair[1], pair[0]), chart{dir: "charts/web", values: "greeting: x\n"})
		push(t, dir, "e2e/"+pair[0], "1.0.0")
		create(t, ociSource(pair[0], "e2e/"+pair[0], "1.0.0"))
		waitSource(t, pair[0], "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	}
	create(t, newPackage("cyc-a", "cyc-a", "", false))
	create(t, newPackage("cyc-b", "cyc-b", "", false))
	for _, name := range []string{"cyc-a", "cyc-b"} {
		p := waitPackage(t, name, "DependencyCycle", packageReady(False, v1alpha1.ReasonDependencyCycle))
		mustContain(t, "message", ready(p.Status.Conditions).Message, "cyc-a/web", "cyc-b/web", " → ")
		expectNothingInstalled(t, name)
	}
}

func TestPrivilegeNotAllowed(t *testing.T) {
	start(t)
	push(t, demoCatalog, "e2e/priv", "0.1.0")
	create(t, ociSource("priv", "e2e/priv", "0.1.0"))
	create(t, newPackage("priv", "priv", "default", false))
	p := waitPackage(t, "priv", "PrivilegeNotAllowed", packageReady(False, v1alpha1.ReasonPrivilegeNotAllowed))
	mustContain(t, "message", ready(p.Status.Conditions).Message, "echo-operator", "spec.allowPrivileged: true",
		"component echo-operator: ", "cluster-wide, apiextensions.k8s.io/customresourcedefinitions: create")
	expectNothingInstalled(t, "priv")
}

// TestConflictWithForeignHelmRelease: a HelmRelease with the name the
// Package needs, annotated as another Package's but without a controller
// reference, is never overwritten.
func TestConflictWithForeignHelmRelease(t *testing.T) {
	start(t)
	c := k(t)
	push(t, simpleCatalog(t, "guarded", "1.0.0", "e2e-guarded", "x"), "e2e/guarded", "1.0.0")
	create(t, ociSource("guarded", "e2e/guarded", "1.0.0"))
	create(t, packageNamespace("e2e-guarded", "guarded"))
	foreign := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: names.HelmRelease("guarded", "web"), Namespace: "e2e-guarded",
			Annotations: map[string]string{names.AnnotationPackage: "someone-else"}},
		Spec: helmv2.HelmReleaseSpec{Suspend: true, Interval: metav1.Duration{Duration: time.Hour},
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.ExternalArtifactKind, Name: "not-ours"}},
	}
	create(t, foreign)
	create(t, newPackage("guarded", "guarded", "", false))
	p := waitPackage(t, "guarded", "Conflict", packageReady(False, v1alpha1.ReasonConflict))
	mustContain(t, "message", ready(p.Status.Conditions).Message,
		"HelmRelease e2e-guarded/"+foreign.Name, "belongs to no Package", `cozystack.io/package="someone-else" proves nothing`, "never overwritten")
	expectNothingInstalled(t, "guarded")
	var hr helmv2.HelmRelease
	if err := c.Get(ctxT(t), client.ObjectKeyFromObject(foreign), &hr); err != nil || hr.Spec.ChartRef.Name != "not-ours" ||
		hr.Annotations[names.AnnotationPackage] != "someone-else" || len(hr.OwnerReferences) != 0 {
		t.Errorf("the foreign HelmRelease was touched: %+v %v", hr.ObjectMeta, err)
	}
}

// TestTwoPackagesRenderTheSameObject: the second Package whose chart
// renders an object the first owns fails with Conflict naming the first,
// and uninstalling it never deletes the first's object.
func TestTwoPackagesRenderTheSameObject(t *testing.T) {
	start(t)
	c := k(t)
	const shared = "e2e-shared-object"
	dir := writeCatalog(t, `apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: shared
version: 1.0.0
minPlatformVersion: 0.1.0
variants:
  - name: default
    components:
      - name: ns
        chart: charts/ns
        namespace: e2e-shared
        privileged: true
        clusterRules:
          - apiGroups: [""]
            resources: [namespaces]
            verbs: [get, list, watch, create, update, patch, delete]`+configMapRule+`
`, chart{dir: "charts/ns", templates: map[string]string{"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + shared + "\n"}})
	push(t, dir, "e2e/shared", "1.0.0")
	create(t, ociSource("shared", "e2e/shared", "1.0.0"))
	// Both install into e2e-shared, which they share by mutual consent.
	first := newPackage("shared-one", "shared", "", true)
	first.Spec.SharedNamespaces = []v1alpha1.SharedNamespace{{Namespace: "e2e-shared", Packages: []string{"shared-two"}}}
	create(t, first)
	waitPackage(t, "shared-one", "Installed", packageReady(True, v1alpha1.ReasonInstalled))

	second := newPackage("shared-two", "shared", "", true)
	second.Spec.SharedNamespaces = []v1alpha1.SharedNamespace{{Namespace: "e2e-shared", Packages: []string{"shared-one"}}}
	create(t, second)
	p := waitPackage(t, "shared-two", "Conflict", packageReady(False, v1alpha1.ReasonConflict))
	mustContain(t, "message", ready(p.Status.Conditions).Message,
		`Helm release "`+names.HelmRelease("shared-one", "ns")+`" of Package "shared-one" owns`, "Namespace")

	if err := c.Delete(ctxT(t), second); err != nil {
		t.Fatal(err)
	}
	waitGone(t, second)
	var ns corev1.Namespace
	if err := c.Get(ctxT(t), client.ObjectKey{Name: shared}, &ns); err != nil || !ns.DeletionTimestamp.IsZero() {
		t.Fatalf("uninstalling the second Package deleted the first's Namespace: %v %v", err, ns.DeletionTimestamp)
	}
	if got := ns.Annotations["meta.helm.sh/release-name"]; got != names.HelmRelease("shared-one", "ns") {
		t.Errorf("Namespace %s is owned by release %q now, want the first Package's", shared, got)
	}
}

// TestNoOptInCannotCreateClusterRoleBinding: a component that is not
// privileged cannot create cluster-wide objects through its chart; the
// install fails with Kubernetes' forbidden error, shown in the Package.
func TestNoOptInCannotCreateClusterRoleBinding(t *testing.T) {
	start(t)
	dir := writeCatalog(t, `apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: sneaky
version: 1.0.0
minPlatformVersion: 0.1.0
variants:
  - name: default
    components:
      - name: web
        chart: charts/web
        namespace: e2e-sneaky`+configMapRule+`
`, chart{dir: "charts/web", templates: map[string]string{"crb.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: e2e-sneaky-admin
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: default
    namespace: e2e-sneaky
`}})
	push(t, dir, "e2e/sneaky", "1.0.0")
	create(t, ociSource("sneaky", "e2e/sneaky", "1.0.0"))
	create(t, newPackage("sneaky", "sneaky", "", false))
	p := waitPackage(t, "sneaky", "InstallFailed", packageReady(False, v1alpha1.ReasonInstallFailed))
	mustContain(t, "message", ready(p.Status.Conditions).Message, "component web", "forbidden", "clusterrolebindings")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := env.Clientset.RbacV1().ClusterRoleBindings().Get(ctx, "e2e-sneaky-admin", metav1.GetOptions{}); err == nil {
		t.Error("the ClusterRoleBinding was created")
	}
}

// TestNamespaceEscape (docs/operator/catalogs.md, "Catalog delivery", "What a
// third-party catalog gets"): a component installs only into a namespace
// of its own Package, one the operator creates for it. Into a tenant's,
// another Package's or one made by hand it is refused before anything is
// written, the message naming the namespace and its owner. (The system's
// and other reserved names are refused when the catalog is built or
// pulled: TestNamespacesOwnedBeforeTheyExist.)
func TestNamespaceEscape(t *testing.T) {
	start(t)
	c := k(t)
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-escape-tenant", Labels: map[string]string{v1alpha1.LabelTenant: "victim"}}})
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-escape-byhand"}})
	// The owner: a Package whose component made its namespace.
	push(t, simpleCatalog(t, "escowner", "1.0.0", "e2e-escape-owned", "x"), "e2e/escowner", "1.0.0")
	create(t, ociSource("escowner", "e2e/escowner", "1.0.0"))
	create(t, newPackage("escowner", "escowner", "", false))
	waitPackage(t, "escowner", "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	before := &corev1.Namespace{}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "e2e-escape-owned"}, before); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ name, namespace, owner string }{
		{"esctenant", "e2e-escape-tenant", `the tenant "victim"`},
		{"escother", "e2e-escape-owned", "Package escowner"},
		{"eschand", "e2e-escape-byhand", "nobody through the platform"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			push(t, simpleCatalog(t, tc.name, "1.0.0", tc.namespace, "x"), "e2e/"+tc.name, "1.0.0")
			create(t, ociSource(tc.name, "e2e/"+tc.name, "1.0.0"))
			create(t, newPackage(tc.name, tc.name, "", false))
			p := waitPackage(t, tc.name, "NamespaceNotAllowed", packageReady(False, v1alpha1.ReasonNamespaceNotAllowed))
			mustContain(t, "message", ready(p.Status.Conditions).Message,
				"component web: namespace "+tc.namespace+" belongs to "+tc.owner, "nothing was written")
			expectNothingInstalled(t, tc.name)
		})
	}
	after := &corev1.Namespace{}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "e2e-escape-owned"}, after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("namespace e2e-escape-owned of Package escowner changed: %v -> %v", before.Annotations, after.Annotations)
	}
}

// widenCatalog is a catalog name whose one privileged component "op" (a
// ConfigMap chart, in namespace e2e-<name>) asks cluster-wide for rule (a
// YAML flow mapping of a PolicyRule).
func widenCatalog(t *testing.T, name, version, rule string) string {
	t.Helper()
	return writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %[1]s
version: %[2]s
minPlatformVersion: 0.1.0
variants:
  - name: default
    components:
      - name: op
        chart: charts/op
        namespace: e2e-%[1]s
        privileged: true
        clusterRules:
          - %[3]s`+configMapRule+`
`, name, version, rule), chart{dir: "charts/op", values: "greeting: " + version + "\n"})
}

// configMapVerbs is a widenCatalog rule: verbs on ConfigMaps.
func configMapVerbs(verbs string) string {
	return `{apiGroups: [""], resources: [configmaps], verbs: [` + verbs + `]}`
}

// TestPrivilegesNeedApproval (docs/operator/catalogs.md, "Catalog delivery", "What a
// third-party catalog gets"): allowPrivileged consents to
// what the Package is granted when it installs; a revision asking for more
// stops with PrivilegeChangeRequiresApproval, listing the new rights and
// the digest, keeps the installed revision (suspended) and widens nothing;
// approving that digest installs it; asking for less needs no approval.
func TestPrivilegesNeedApproval(t *testing.T) {
	start(t)
	c := k(t)
	role := &rbacv1.ClusterRole{}
	clusterVerbs := func() []string {
		t.Helper()
		if err := c.Get(ctxT(t), client.ObjectKey{Name: names.ClusterRBAC("widen", "op")}, role); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range role.Rules {
			out = append(out, r.Verbs...)
		}
		return out
	}
	push(t, widenCatalog(t, "widen", "1.0.0", configMapVerbs("get")), "e2e/widen", "1.0.0")
	create(t, ociSource("widen", "e2e/widen", "1.0.0"))
	create(t, newPackage("widen", "widen", "", true))
	p := waitPackage(t, "widen", "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	first := p.Status.GrantedPrivileges
	if first == nil || len(first.Components) != 1 || first.Components[0].Name != "op" {
		t.Fatalf("status.grantedPrivileges = %+v, want component op", first)
	}

	// 2.0.0 asks for everything on ConfigMaps cluster-wide.
	push(t, widenCatalog(t, "widen", "2.0.0", configMapVerbs("get, list, create, delete")), "e2e/widen", "2.0.0")
	patchTag(t, "widen", "2.0.0")
	p = waitPackage(t, "widen", "PrivilegeChangeRequiresApproval", packageReady(False, v1alpha1.ReasonPrivilegeChangeRequiresApproval))
	msg := ready(p.Status.Conditions).Message
	mustContain(t, "message", msg, "component op: cluster-wide, core/configmaps: list; cluster-wide, core/configmaps: create; cluster-wide, core/configmaps: delete", "spec.approvedPrivileges: \"sha256:")
	if strings.Contains(msg, "configmaps: get") {
		t.Errorf("message %q lists a right already granted", msg)
	}
	if got := clusterVerbs(); !slices.Equal(got, []string{"get"}) {
		t.Errorf("ClusterRole verbs %v before approval, want [get]: nothing is widened", got)
	}
	hr, err := helmRelease(t, "widen", "op", "e2e-widen")
	if err != nil || !hr.Spec.Suspend {
		t.Errorf("HelmRelease of op: suspended %v (%v), want the installed revision kept", hr.Spec.Suspend, err)
	}
	if p.Status.GrantedPrivileges.Digest != first.Digest {
		t.Errorf("grantedPrivileges changed before approval: %s", p.Status.GrantedPrivileges.Digest)
	}

	// The cluster operator approves exactly that digest.
	digest := msg[strings.Index(msg, "sha256:") : strings.Index(msg, "sha256:")+71]
	cur := &v1alpha1.Package{}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "widen"}, cur); err != nil {
		t.Fatal(err)
	}
	orig := cur.DeepCopy()
	cur.Spec.ApprovedPrivileges = digest
	if err := c.Patch(ctxT(t), cur, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	p = waitPackage(t, "widen", "Installed 2.0.0", func(p *v1alpha1.Package) bool {
		r := ready(p.Status.Conditions)
		return r != nil && r.Status == True && p.Status.InstalledVersion == "2.0.0"
	})
	if p.Status.GrantedPrivileges.Digest != digest {
		t.Errorf("grantedPrivileges.digest = %s, want the approved %s", p.Status.GrantedPrivileges.Digest, digest)
	}
	if got := clusterVerbs(); !slices.Equal(got, []string{"get", "list", "create", "delete"}) {
		t.Errorf("ClusterRole verbs %v after approval", got)
	}

	// 3.0.0 asks for less: no approval needed.
	push(t, widenCatalog(t, "widen", "3.0.0", configMapVerbs("get")), "e2e/widen", "3.0.0")
	patchTag(t, "widen", "3.0.0")
	waitPackage(t, "widen", "Installed 3.0.0", func(p *v1alpha1.Package) bool {
		r := ready(p.Status.Conditions)
		return r != nil && r.Status == True && p.Status.InstalledVersion == "3.0.0"
	})
}

// TestDuplicateCatalogName (docs/operator/catalogs.md, "Catalog delivery", "Refusals leave
// nothing behind"): a second PackageSource
// serving a catalog by the name of one already served is refused with
// Conflict naming the first, publishes nothing, and the first catalog's
// Package stays Installed.
func TestDuplicateCatalogName(t *testing.T) {
	start(t)
	push(t, simpleCatalog(t, "dupname", "1.0.0", "e2e-dupname", "x"), "e2e/dupname-a", "1.0.0")
	create(t, ociSource("dupa", "e2e/dupname-a", "1.0.0"))
	create(t, newPackage("dupa", "dupa", "", false))
	waitPackage(t, "dupa", "Installed", packageReady(True, v1alpha1.ReasonInstalled))

	push(t, simpleCatalog(t, "dupname", "2.0.0", "e2e-dupname-b", "y"), "e2e/dupname-b", "2.0.0")
	ps := ociSource("dupb", "e2e/dupname-b", "2.0.0")
	create(t, ps)
	got := waitSource(t, "dupb", "Conflict", sourceReady(False, v1alpha1.ReasonConflict))
	mustContain(t, "message", ready(got.Status.Conditions).Message, "catalog dupname (served by PackageSource dupa, created first", "none of its charts was published")
	if eas := artifactsOf(t, "dupb"); len(eas) > 0 {
		t.Errorf("the refused PackageSource published %d ExternalArtifacts", len(eas))
	}
	create(t, newPackage("dupb", "dupb", "", false))
	waitPackage(t, "dupb", "SourceNotReady", packageReady(False, v1alpha1.ReasonSourceNotReady))
	expectNothingInstalled(t, "dupb")
	// The first is untouched, also after another reconcile.
	time.Sleep(2 * time.Second)
	waitPackage(t, "dupa", "still Installed", packageReady(True, v1alpha1.ReasonInstalled))
	waitSource(t, "dupa", "still Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
}

// TestOversizedStatus (docs/operator/catalogs.md, "Catalog delivery", "What a
// third-party catalog gets"): a catalog whose declarations
// would not fit in the PackageSource's status (a component with 1600 KiB of
// values) is refused with a short condition naming the largest part, its
// status is written (no re-pull loop without a word), and nothing is
// published.
func TestOversizedStatus(t *testing.T) {
	start(t)
	big := strings.Repeat("x", 1600<<10) // over etcd's 1.5 MiB
	dir := componentCatalog(t, "oversized", "1.0.0", "e2e-oversized", "x", "\n        values: {blob: "+big+"}")
	push(t, dir, "e2e/oversized", "1.0.0")
	create(t, ociSource("oversized", "e2e/oversized", "1.0.0"))
	ps := waitSource(t, "oversized", "InvalidArtifact", sourceReady(False, v1alpha1.ReasonInvalidArtifact))
	msg := ready(ps.Status.Conditions).Message
	mustContain(t, "message", msg, "the catalog's declarations take", "the largest is variants[0].components[0] (web) at 1600 KiB", "none of its charts was published")
	if len(msg) > 1000 {
		t.Errorf("the condition's message is %d bytes, want a short one", len(msg))
	}
	if len(ps.Status.Variants) != 0 {
		t.Errorf("status.variants holds %d variants of the refused catalog", len(ps.Status.Variants))
	}
	if eas := artifactsOf(t, "oversized"); len(eas) > 0 {
		t.Errorf("the refused PackageSource published %d ExternalArtifacts", len(eas))
	}
}

// hookCatalog is a catalog name whose privileged component "web" (in
// namespace e2e-<name>, allowed to write ConfigMaps anywhere) renders a
// ConfigMap of its own and a pre-install hook ConfigMap named target,
// whose hook-delete-policy deletes whatever holds that name first.
func hookCatalog(t *testing.T, name string, target client.ObjectKey) string {
	t.Helper()
	hook := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation
data:
  stolen: "yes"
`, target.Name, target.Namespace)
	return writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %[1]s
version: 1.0.0
minPlatformVersion: 0.1.0
variants:
  - name: default
    components:
      - name: web
        chart: charts/web
        namespace: e2e-%[1]s
        privileged: true
        clusterRules:
          - apiGroups: [""]
            resources: [configmaps]
            verbs: [get, list, watch, create, update, patch, delete]`+configMapRule+`
`, name), chart{dir: "charts/web", templates: map[string]string{"hook.yaml": hook, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-own\n"}})
}

// TestHooksNeverRun (docs/operator/catalogs.md, "Catalog delivery", "What a third-party
// catalog gets"): Helm creates hook objects outside
// the release's ownership checks, and a before-hook-creation hook deletes
// whatever holds its name. A privileged Package's pre-install hook named
// after another Package's ConfigMap does not run: that ConfigMap keeps its
// UID and content, and both Packages install.
func TestHooksNeverRun(t *testing.T) {
	start(t)
	c := k(t)
	push(t, simpleCatalog(t, "hookowner", "1.0.0", "e2e-hook-owner", "mine"), "e2e/hookowner", "1.0.0")
	create(t, ociSource("hookowner", "e2e/hookowner", "1.0.0"))
	create(t, newPackage("hookowner", "hookowner", "", false))
	waitPackage(t, "hookowner", "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	var target corev1.ConfigMap
	var found bool
	var list corev1.ConfigMapList
	if err := c.List(ctxT(t), &list, client.InNamespace("e2e-hook-owner")); err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.Labels[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByOperator && cm.Annotations["meta.helm.sh/release-name"] != "" {
			target, found = cm, true
		}
	}
	if !found {
		t.Fatal("the owner's chart rendered no ConfigMap")
	}

	push(t, hookCatalog(t, "hooker", client.ObjectKeyFromObject(&target)), "e2e/hooker", "1.0.0")
	create(t, ociSource("hooker", "e2e/hooker", "1.0.0"))
	create(t, newPackage("hooker", "hooker", "", true))
	waitPackage(t, "hooker", "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	var after corev1.ConfigMap
	if err := c.Get(ctxT(t), client.ObjectKeyFromObject(&target), &after); err != nil {
		t.Fatalf("the owner's ConfigMap: %v", err)
	}
	if after.UID != target.UID || after.Data["stolen"] != "" {
		t.Errorf("the hook replaced the owner's ConfigMap %s: UID %s -> %s, data %v", target.Name, target.UID, after.UID, after.Data)
	}
	hr, err := helmRelease(t, "hooker", "web", "e2e-hooker")
	if err != nil {
		t.Fatal(err)
	}
	if !hr.Spec.Install.DisableHooks || !hr.Spec.Upgrade.DisableHooks || !hr.Spec.Uninstall.DisableHooks {
		t.Errorf("HelmRelease of hooker: hooks enabled: %+v %+v %+v", hr.Spec.Install, hr.Spec.Upgrade, hr.Spec.Uninstall)
	}
}
