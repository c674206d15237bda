package operator_test

// End-to-end tests of catalog delivery (docs/operator/catalogs.md, "Catalog delivery"), on
// the real local control
// plane: kube-apiserver, kube-controller-manager, the real helm-controller
// (with ExternalArtifact enabled) and the real CNCF Distribution registry.
// The operator runs in this process; helm-controller downloads the charts
// from its artifact server.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/operator/rbac"
)

const (
	True  = metav1.ConditionTrue
	False = metav1.ConditionFalse
)

// configMapRule is the rule the test catalogs declare for their charts.
const configMapRule = `
        rules:
          - apiGroups: [""]
            resources: [configmaps]
            verbs: [get, list, watch, create, update, patch, delete]`

// simpleCatalog is a catalog with one component "web" in namespace whose
// chart renders a ConfigMap of its values.
func simpleCatalog(t *testing.T, name, version, namespace, greeting string) string {
	t.Helper()
	return componentCatalog(t, name, version, namespace, greeting, "")
}

// privilegedCatalog is simpleCatalog with the component privileged, so a
// Package allowed privileges installs it into any namespace (docs/operator/catalogs.md,
// "Catalog delivery", "What a third-party catalog gets").
func privilegedCatalog(t *testing.T, name, version, namespace, greeting string) string {
	t.Helper()
	return componentCatalog(t, name, version, namespace, greeting, "\n        privileged: true")
}

// componentCatalog is simpleCatalog with extra appended to the
// component's namespace line (more of its fields).
func componentCatalog(t *testing.T, name, version, namespace, greeting, extra string) string {
	t.Helper()
	return writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %s
version: %s
minPlatformVersion: 0.1.0
variants:
  - name: default
    components:
      - name: web
        chart: charts/web
        namespace: %s%s`+configMapRule+`
`, name, version, namespace, extra), chart{dir: "charts/web", values: "greeting: " + greeting + "\n"})
}

// packageNamespace is namespace name as the operator creates it for
// Package pkg (marked as the Package's), made ahead by a test that puts
// objects in the way there.
func packageNamespace(name, pkg string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{names.AnnotationPackage: pkg}}}
}

func getConfigMap(t *testing.T, namespace, name string) (*corev1.ConfigMap, error) {
	t.Helper()
	var cm corev1.ConfigMap
	err := k(t).Get(ctxT(t), client.ObjectKey{Namespace: namespace, Name: name}, &cm)
	return &cm, err
}

// TestAcceptance: push a catalog, create a PackageSource and a Package:
// the HelmReleases become Ready through helm-controller with charts
// downloaded from the operator's artifact server, through least-privilege
// identities; disabling a component removes its release; deleting the
// Package removes everything.
func TestAcceptance(t *testing.T) {
	op := start(t)
	c := k(t)
	ctx := ctxT(t)
	res := push(t, demoCatalog, "e2e/demo", "0.1.0")
	create(t, ociSource("demo", "e2e/demo", "0.1.0"))
	ps := waitSource(t, "demo", "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	if ps.Status.Artifact.Digest != res.Manifest.Digest.String() || ps.Status.Artifact.Revision != "0.1.0@"+res.Manifest.Digest.String() {
		t.Errorf("status.artifact = %+v, want digest %s", ps.Status.Artifact, res.Manifest.Digest)
	}
	if ps.Status.Catalog.Name != "demo" || len(ps.Status.Variants) != 2 || len(ps.Status.Libraries) != 1 {
		t.Errorf("catalog metadata not copied into status: %+v %d variants %d libraries", ps.Status.Catalog, len(ps.Status.Variants), len(ps.Status.Libraries))
	}
	if want := []v1alpha1.PackageApplication{{Name: "echo-tenant", Chart: "charts/echo-tenant", Kind: "Echo"}}; !reflect.DeepEqual(ps.Status.Applications, want) {
		t.Errorf("status.applications = %+v, want %+v", ps.Status.Applications, want)
	}

	// Before any Package, the application's chart only: a component's is
	// published once a Package enables it (docs/operator/catalogs.md, "Catalog
	// delivery", "What a third-party catalog gets").
	eventually(t, "the application's chart published alone", func() error {
		eas := artifactsOf(t, "demo")
		if len(eas) != 1 || eas[0].Name != v1alpha1.ComponentArtifactName("demo", "echo-tenant") {
			return fmt.Errorf("%d ExternalArtifacts before any Package, want only the application echo-tenant's", len(eas))
		}
		return nil
	})

	p := newPackage("demo", "demo", "default", true)
	p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{
		"echo": {Values: &apiextensionsv1.JSON{Raw: []byte(`{"message":"hello from the package"}`)}},
	}
	create(t, p)
	got := waitPackage(t, "demo", "Installed", packageReady(True, v1alpha1.ReasonInstalled))

	// One ExternalArtifact per enabled component and per application,
	// named ComponentArtifactName(source, name), served by our server,
	// bytes matching the digest of the chart layer the build pushed.
	builtDigest := map[string]string{}
	for _, ch := range res.Charts {
		builtDigest[ch.Path] = ch.Descriptor.Digest.String()
	}
	wantEAs := map[string]string{
		v1alpha1.ComponentArtifactName("demo", "echo-operator"): "charts/echo-operator",
		v1alpha1.ComponentArtifactName("demo", "echo"):          "charts/echo",
		v1alpha1.ComponentArtifactName("demo", "echo-tenant"):   "charts/echo-tenant",
	}
	eas := artifactsOf(t, "demo")
	if len(eas) != len(wantEAs) {
		t.Fatalf("%d ExternalArtifacts, want 3 (echo-operator, echo, and the application echo-tenant)", len(eas))
	}
	for _, ea := range eas {
		chartPath, ok := wantEAs[ea.Name]
		if !ok {
			t.Errorf("unexpected ExternalArtifact %s", ea.Name)
		} else if ea.Status.Artifact == nil || ea.Status.Artifact.Digest != builtDigest[chartPath] {
			t.Errorf("ExternalArtifact %s: artifact %+v, want the digest of %s, %s", ea.Name, ea.Status.Artifact, chartPath, builtDigest[chartPath])
		}
		a := ea.Status.Artifact
		if a == nil || !strings.HasPrefix(a.URL, "http://"+op.Server.Addr().String()+"/demo/") {
			t.Fatalf("ExternalArtifact %s: artifact %+v not on the operator's server %s", ea.Name, a, op.Server.Addr())
		}
		if len(ea.OwnerReferences) != 1 || ea.OwnerReferences[0].Kind != "PackageSource" || ea.OwnerReferences[0].Name != "demo" {
			t.Errorf("ExternalArtifact %s owner references %+v, want the PackageSource", ea.Name, ea.OwnerReferences)
		}
		resp, err := http.Get(a.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sum := sha256.Sum256(body)
		if resp.StatusCode != 200 || "sha256:"+hex.EncodeToString(sum[:]) != a.Digest || int64(len(body)) != *a.Size {
			t.Errorf("GET %s: %d, %d bytes, digest %x; want 200 and %s", a.URL, resp.StatusCode, len(body), sum, a.Digest)
		}
	}

	if got.Status.InstalledRevision != ps.Status.Artifact.Revision || got.Status.InstalledVersion != "0.1.0" {
		t.Errorf("installed %q %q, want %s", got.Status.InstalledRevision, got.Status.InstalledVersion, ps.Status.Artifact.Revision)
	}
	if len(got.Status.Components) != 2 || !got.Status.Components[0].Ready || !got.Status.Components[1].Ready {
		t.Errorf("status.components = %+v, want both ready", got.Status.Components)
	}
	// The application is published, never installed by the Package.
	var hrs helmv2.HelmReleaseList
	if err := c.List(ctx, &hrs, client.MatchingLabels{names.LabelPackage: names.LabelValue("demo")}); err != nil {
		t.Fatal(err)
	}
	var installed []string
	for _, hr := range hrs.Items {
		installed = append(installed, hr.Name)
		if hr.Spec.ChartRef != nil && hr.Spec.ChartRef.Name == v1alpha1.ComponentArtifactName("demo", "echo-tenant") {
			t.Errorf("HelmRelease %s/%s installs the application echo-tenant", hr.Namespace, hr.Name)
		}
	}
	slices.Sort(installed)
	if want := []string{names.HelmRelease("demo", "echo"), names.HelmRelease("demo", "echo-operator")}; !slices.Equal(installed, slices.Sorted(slices.Values(want))) {
		t.Errorf("the Package's HelmReleases are %v, want only the components' %v", installed, want)
	}

	echo := names.HelmRelease("demo", "echo")
	operatorRel := names.HelmRelease("demo", "echo-operator")
	// The charts' objects exist, with values layered catalog < Package.
	cm, err := getConfigMap(t, "cozy-echo", echo)
	if err != nil || cm.Data["message"] != "hello from the package" {
		t.Errorf("ConfigMap cozy-echo/%s: %v %v, want message from the Package", echo, cm.Data, err)
	}
	cm, err = getConfigMap(t, "cozy-echo-operator", operatorRel+"-settings")
	if err != nil || cm.Data["replicas"] != "1" {
		t.Errorf("ConfigMap cozy-echo-operator/%s-settings: %v %v, want replicas from the catalog", operatorRel, cm.Data, err)
	}

	hr, err := helmRelease(t, "demo", "echo", "cozy-echo")
	if err != nil {
		t.Fatal(err)
	}
	if hr.Spec.ChartRef.Kind != "ExternalArtifact" || hr.Spec.ChartRef.Namespace != v1alpha1.SystemNamespace ||
		hr.Spec.ChartRef.Name != v1alpha1.ComponentArtifactName("demo", "echo") {
		t.Errorf("chartRef %+v", hr.Spec.ChartRef)
	}
	if hr.Spec.ServiceAccountName != echo+names.InstallerSuffix {
		t.Errorf("serviceAccountName %q, want %q", hr.Spec.ServiceAccountName, echo+names.InstallerSuffix)
	}
	if !slices.Contains(hr.Spec.DependsOn, helmv2.DependencyReference{Name: operatorRel, Namespace: "cozy-echo-operator"}) {
		t.Errorf("dependsOn %+v, want the echo-operator release", hr.Spec.DependsOn)
	}
	if hr.Spec.Install == nil || !hr.Spec.Install.DisableTakeOwnership || hr.Spec.Upgrade == nil || !hr.Spec.Upgrade.DisableTakeOwnership {
		t.Errorf("install/upgrade %+v %+v: want disableTakeOwnership", hr.Spec.Install, hr.Spec.Upgrade)
	}
	if n := len(hr.Spec.ValuesFrom); n != 2 || hr.Spec.ValuesFrom[0].Name != names.CatalogValues("demo", "echo") ||
		hr.Spec.ValuesFrom[1].Name != v1alpha1.ValuesName || !hr.Spec.ValuesFrom[1].Optional {
		t.Errorf("valuesFrom %+v: want catalog values, then the (optional, not a tenant namespace) K2 ConfigMap", hr.Spec.ValuesFrom)
	}
	var echoChart string
	for _, ch := range ps.Status.Artifact.Charts {
		if ch.Path == "charts/echo" {
			echoChart = ch.Digest
		}
	}
	if hr.Status.LastAttemptedRevisionDigest != echoChart {
		t.Errorf("helm-controller installed %q, want the chart %s served by the operator", hr.Status.LastAttemptedRevisionDigest, echoChart)
	}

	// Least privilege: exactly the declared rules; cluster rules only for
	// the privileged component.
	var role rbacv1.Role
	if err := c.Get(ctx, client.ObjectKey{Namespace: "cozy-echo", Name: echo + names.InstallerSuffix}, &role); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}
	if !equalRules(role.Rules, want) {
		t.Errorf("Role cozy-echo/%s rules %+v, want %+v", echo, role.Rules, want)
	}
	// Helm's records are kept in the Package's release storage namespace,
	// the only place the installer may touch Secrets (docs/operator/catalogs.md, "Catalog
	// delivery", "RBAC").
	storage := names.StorageNamespace("demo")
	if hr.Spec.StorageNamespace != storage {
		t.Errorf("HelmRelease %s: storageNamespace %q, want %q", echo, hr.Spec.StorageNamespace, storage)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: storage, Name: echo + names.InstallerSuffix}, &role); err != nil || !equalRules(role.Rules, []rbacv1.PolicyRule{rbac.HelmStorageRule()}) {
		t.Errorf("storage Role %s/%s: %+v %v, want Helm's storage rule", storage, echo, role.Rules, err)
	}
	var cr rbacv1.ClusterRole
	if err := c.Get(ctx, client.ObjectKey{Name: names.ClusterRBAC("demo", "echo")}, &cr); !apierrors.IsNotFound(err) {
		t.Errorf("the unprivileged component echo has a ClusterRole (err %v)", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: names.ClusterRBAC("demo", "echo-operator")}, &cr); err != nil ||
		len(cr.Rules) != 1 || cr.Rules[0].Resources[0] != "customresourcedefinitions" {
		t.Errorf("ClusterRole of echo-operator: %+v %v, want its clusterRules only", cr.Rules, err)
	}
	for _, tc := range []struct {
		sa, ns, verb, resource, group, in string
		allowed                           bool
	}{
		{echo, "cozy-echo", "create", "configmaps", "", "cozy-echo", true},
		{echo, "cozy-echo", "create", "secrets", "", "cozy-echo", false},
		{echo, "cozy-echo", "list", "secrets", "", "cozy-echo", false},
		{echo, "cozy-echo", "list", "secrets", "", names.StorageNamespace("demo"), true},
		{echo, "cozy-echo", "create", "configmaps", "", "default", false},
		{echo, "cozy-echo", "create", "deployments", "apps", "cozy-echo", false},
		{echo, "cozy-echo", "create", "customresourcedefinitions", "apiextensions.k8s.io", "", false},
		{operatorRel, "cozy-echo-operator", "create", "customresourcedefinitions", "apiextensions.k8s.io", "", true},
		{operatorRel, "cozy-echo-operator", "create", "clusterrolebindings", "rbac.authorization.k8s.io", "", false},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "system:serviceaccount:" + tc.ns + ":" + tc.sa + names.InstallerSuffix,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + tc.ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: tc.in, Verb: tc.verb, Group: tc.group, Resource: tc.resource},
		}}
		if err := c.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed != tc.allowed {
			t.Errorf("%s may %s %s in %q: %v, want %v", tc.sa, tc.verb, tc.resource, tc.in, sar.Status.Allowed, tc.allowed)
		}
	}

	// Disabling a component removes its HelmRelease (and Helm uninstalls
	// its objects) and then its identity.
	if err := c.Get(ctx, client.ObjectKey{Name: "demo"}, p); err != nil {
		t.Fatal(err)
	}
	p.Spec.Components["echo"] = v1alpha1.PackageComponentSettings{Enabled: ptr.To(false)}
	if err := c.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	waitGone(t, &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "cozy-echo", Name: echo}})
	waitGone(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cozy-echo", Name: echo}})
	waitGone(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "cozy-echo", Name: echo + names.InstallerSuffix}})
	waitPackage(t, "demo", "Installed with one component", func(p *v1alpha1.Package) bool {
		return packageReady(True, v1alpha1.ReasonInstalled)(p) && len(p.Status.Components) == 1
	})
	if _, err := helmRelease(t, "demo", "echo-operator", "cozy-echo-operator"); err != nil {
		t.Errorf("the still enabled echo-operator lost its HelmRelease: %v", err)
	}

	// Deleting the Package uninstalls everything it installed.
	if err := c.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	waitGone(t, p)
	if objs := ownedObjects(t, "demo"); len(objs) > 0 {
		t.Errorf("after deleting the Package these remain: %v", objs)
	}
	if _, err := getConfigMap(t, "cozy-echo-operator", operatorRel+"-settings"); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's ConfigMap survived the uninstall: %v", err)
	}
}

func equalRules(a, b []rbacv1.PolicyRule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i].APIGroups, b[i].APIGroups) || !slices.Equal(a[i].Resources, b[i].Resources) || !slices.Equal(a[i].Verbs, b[i].Verbs) {
			return false
		}
	}
	return true
}

// TestValuesLayering: chart defaults < catalog < cluster values (K2) <
// Package. Outside a tenant namespace (no component installs into one,
// privileged or not) the K2 reference is optional: the release renders
// without it, and again with it once it is written. (TestBuildValuesLayers, in
// packagereconciler, checks it is required in a tenant namespace.)
func TestValuesLayering(t *testing.T) {
	start(t)
	const ns = "e2e-layers"
	dir := writeCatalog(t, `apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: layers
version: 1.0.0
minPlatformVersion: 0.1.0
variants:
  - name: default
    components:
      - name: app
        chart: charts/app
        namespace: `+ns+configMapRule+`
        values: {b: catalog, c: catalog, d: catalog}
`, chart{dir: "charts/app", values: "a: chart\nb: chart\nc: chart\nd: chart\n"})
	push(t, dir, "e2e/layers", "1.0.0")
	create(t, ociSource("layers", "e2e/layers", "1.0.0"))
	p := newPackage("layers", "layers", "", false)
	p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{
		"app": {Values: &apiextensionsv1.JSON{Raw: []byte(`{"d":"package"}`)}},
	}
	create(t, p)

	// No K2 ConfigMap: the release renders without it.
	waitPackage(t, "layers", "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	release := names.HelmRelease("layers", "app")
	hr, err := helmRelease(t, "layers", "app", ns)
	if err != nil {
		t.Fatal(err)
	}
	if k2 := hr.Spec.ValuesFrom[len(hr.Spec.ValuesFrom)-1]; k2.Name != v1alpha1.ValuesName || !k2.Optional {
		t.Errorf("K2 valuesFrom %+v: want optional outside tenant namespaces", k2)
	}
	layered := func(want map[string]string) func() error {
		return func() error {
			cm, err := getConfigMap(t, ns, release)
			if err != nil {
				return err
			}
			for key, v := range want {
				if cm.Data[key] != v {
					return fmt.Errorf("value %s = %q, want %q (layers: chart < catalog < K2 < Package); all: %v", key, cm.Data[key], v, cm.Data)
				}
			}
			return nil
		}
	}
	eventually(t, "values without K2", layered(map[string]string{"a": "chart", "b": "catalog", "c": "catalog", "d": "package"}))

	// What the projection (cozystack-controller) would write.
	create(t, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ValuesName, Namespace: ns, Labels: map[string]string{v1alpha1.LabelFluxWatch: v1alpha1.FluxWatchEnabled}},
		Data:       map[string]string{v1alpha1.ValuesKey: "_cluster: {root-host: example.org}\n_namespace: {host: layers.example.org}\nc: k2\nd: k2\n"},
	})
	eventually(t, "values with K2", layered(map[string]string{"a": "chart", "b": "catalog", "c": "k2", "d": "package"}))
}

// TestDeletePackageSourceKeepsReleases: deleting a PackageSource never
// cascades to installed Packages; they report SourceMissing.
func TestDeletePackageSourceKeepsReleases(t *testing.T) {
	start(t)
	c := k(t)
	dir := simpleCatalog(t, "keep", "1.0.0", "e2e-keep", "kept")
	push(t, dir, "e2e/keep", "1.0.0")
	ps := ociSource("keep", "e2e/keep", "1.0.0")
	create(t, ps)
	create(t, newPackage("keep", "keep", "", false))
	waitPackage(t, "keep", "Installed", packageReady(True, v1alpha1.ReasonInstalled))

	if err := c.Delete(ctxT(t), ps); err != nil {
		t.Fatal(err)
	}
	p := waitPackage(t, "keep", "SourceMissing", packageReady(False, v1alpha1.ReasonSourceMissing))
	mustContain(t, "message", ready(p.Status.Conditions).Message, `PackageSource "keep" does not exist`)
	if _, err := helmRelease(t, "keep", "web", "e2e-keep"); err != nil {
		t.Errorf("the HelmRelease went with the PackageSource: %v", err)
	}
	if cm, err := getConfigMap(t, "e2e-keep", names.HelmRelease("keep", "web")); err != nil || cm.Data["greeting"] != "kept" {
		t.Errorf("the installed chart's ConfigMap: %v %v", cm.Data, err)
	}
}

// TestLastGoodRevisionAfterDigestMismatch: a registry that returns other
// bytes than the digest asked for: DigestMismatch with both digests,
// nothing cached under the requested digest, the last good revision still
// served.
func TestLastGoodRevisionAfterDigestMismatch(t *testing.T) {
	start(t)
	c := k(t)
	good := push(t, simpleCatalog(t, "lastgood", "1.0.0", "e2e-lastgood", "one"), "e2e/lastgood", "1.0.0")
	bad := push(t, simpleCatalog(t, "lastgood", "2.0.0", "e2e-lastgood", "two"), "e2e/lastgood", "2.0.0")
	tampered := bad.Charts[0].Descriptor.Digest
	if tampered == good.Charts[0].Descriptor.Digest {
		t.Fatal("test setup: the two revisions share their chart")
	}

	// A proxy in front of the registry that corrupts one blob, keeping its
	// length, so only the digest check can notice.
	registry, _ := url.Parse("http://" + env.RegistryHost())
	proxy := httputil.NewSingleHostReverseProxy(registry)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodGet || !strings.HasSuffix(resp.Request.URL.Path, "/blobs/"+tampered.String()) {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		for i := range body {
			body[i] ^= 0xff
		}
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	ps := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: "lastgood"}, Spec: v1alpha1.PackageSourceSpec{
		OCI: &v1alpha1.OCISource{Repository: host + "/e2e/lastgood", Tag: "1.0.0", PlainHTTP: true}}}
	create(t, ps)
	first := waitSource(t, "lastgood", "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	// A Package asks for the component, so its chart is published.
	create(t, newPackage("lastgood", "lastgood", "", false))
	waitPackage(t, "lastgood", "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	eas := artifactsOf(t, "lastgood")
	if len(eas) != 1 {
		t.Fatalf("%d ExternalArtifacts, want 1", len(eas))
	}
	goodURL := eas[0].Status.Artifact.URL

	if err := c.Get(ctxT(t), client.ObjectKey{Name: "lastgood"}, ps); err != nil {
		t.Fatal(err)
	}
	ps.Spec.OCI.Tag = "2.0.0"
	if err := c.Update(ctxT(t), ps); err != nil {
		t.Fatal(err)
	}
	got := waitSource(t, "lastgood", "DigestMismatch", sourceReady(False, v1alpha1.ReasonDigestMismatch))
	msg := ready(got.Status.Conditions).Message
	mustContain(t, "message", msg, "expected "+tampered.String(), "got sha256:", "still serving the last good revision 1.0.0@"+good.Manifest.Digest.String())
	if got.Status.Artifact.Digest != first.Status.Artifact.Digest || got.Status.Catalog.Version != "1.0.0" {
		t.Errorf("status.artifact moved to %s (%s), want the last good %s", got.Status.Artifact.Digest, got.Status.Catalog.Version, first.Status.Artifact.Digest)
	}
	if !meta(got.Status.Conditions, v1alpha1.ConditionStalled) {
		t.Errorf("Stalled not set: %+v", got.Status.Conditions)
	}
	eas = artifactsOf(t, "lastgood")
	if len(eas) != 1 || eas[0].Status.Artifact.URL != goodURL {
		t.Errorf("ExternalArtifacts changed after the failed pull: %+v", eas)
	}
	if resp, err := http.Get(goodURL); err != nil || resp.StatusCode != 200 {
		t.Errorf("the last good chart is no longer served: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	for _, d := range []string{tampered.Encoded(), bad.Manifest.Digest.Encoded()} {
		if _, err := os.Stat(filepath.Join(storeDir, "blobs", "sha256", d)); !os.IsNotExist(err) {
			t.Errorf("the store holds %s after the mismatch (stat: %v)", d, err)
		}
	}
}

func meta(conds []metav1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == True
		}
	}
	return false
}
