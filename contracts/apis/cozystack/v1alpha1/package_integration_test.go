package v1alpha1_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/crds"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

// packageClient installs the PackageSource and Package CRDs (idempotent)
// and returns a client knowing the group's types.
func packageClient(t *testing.T) client.Client {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for _, name := range []string{crds.PackageSourceFile, crds.PackageFile} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, crds.Files()[name], 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	if err := localcp.ApplyCRDFiles(testContext(t), env.Config, files...); err != nil {
		t.Fatalf("install the PackageSource and Package CRDs: %v", err)
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The status the operator writes survives the CRD's structural schema
// unchanged: RBAC rules, free-form values, the artifact's charts.
func TestPackageSourceStatusRoundTrip(t *testing.T) {
	testenv.Need(t, env)
	c := packageClient(t)
	ctx := testContext(t)
	src := &v1alpha1.PackageSource{
		ObjectMeta: metav1.ObjectMeta{Name: "roundtrip"},
		Spec: v1alpha1.PackageSourceSpec{OCI: &v1alpha1.OCISource{
			Repository:    "127.0.0.1:5000/catalogs/demo",
			Tag:           "0.1.0",
			PullSecretRef: &v1alpha1.LocalSecretReference{Name: "registry"},
			PlainHTTP:     true,
		}},
	}
	if err := c.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), src) })

	status := v1alpha1.PackageSourceStatus{
		ObservedGeneration: src.Generation,
		Conditions: []metav1.Condition{{
			Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonArtifactReady,
			Message: "serving 0.1.0@sha256:…", LastTransitionTime: metav1.Now().Rfc3339Copy(), ObservedGeneration: src.Generation,
		}},
		Artifact: &v1alpha1.ArtifactStatus{
			Reference: "127.0.0.1:5000/catalogs/demo:0.1.0",
			Digest:    "sha256:2c8a322ba1b8625b8ba5d4c455598f5e29816c035f1d2b5ebe901196c7bfc054",
			Revision:  "0.1.0@sha256:2c8a322ba1b8625b8ba5d4c455598f5e29816c035f1d2b5ebe901196c7bfc054",
			Charts: []v1alpha1.ChartArtifact{{
				Path: "charts/echo", Name: "echo", Version: "0.2.0", Size: 1234,
				Digest: "sha256:0b1f6c5e3fd0b6b8cf0d0b94c1e0c8e8b5b5f3d8c3b9d7a5e4f3c2b1a0987654",
			}},
			LastUpdateTime: metav1.Now().Rfc3339Copy(),
		},
		Catalog: &v1alpha1.CatalogInfo{
			Name: "demo", Version: "0.1.0", MinPlatformVersion: "0.1.0", Description: "Echo.",
			RequiredProperties: []string{"network.stableVMAddress"},
			Provides:           v1alpha1.CatalogProvides{ApplicationKinds: []string{"Echo"}, BackupStrategyKinds: []string{"EchoDump"}},
		},
		Libraries: []v1alpha1.PackageLibrary{{Name: "demo-lib", Version: "0.1.0", Path: "lib/demo-lib"}},
		Variants: []v1alpha1.PackageVariant{{
			Name: "default", DependsOn: []string{"base"},
			Components: []v1alpha1.PackageComponent{{
				Name: "echo-operator", Chart: "charts/echo-operator", Namespace: "cozy-echo-operator", Privileged: true,
				ClusterRules: []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"*"}}},
				Rules:        []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
				Values:       &apiextensionsv1.JSON{Raw: []byte(`{"nested":{"list":[1,"two",{"three":3}]},"replicas":1}`)},
			}, {
				Name: "echo", Chart: "charts/echo", Namespace: "cozy-echo", DependsOn: []string{"echo-operator"},
			}},
		}},
		Applications: []v1alpha1.PackageApplication{
			{Name: "echo-tenant", Chart: "charts/echo-tenant", Kind: "Echo"},
			{Name: "echo-bare", Chart: "charts/echo-bare"},
		},
	}
	src.Status = status
	if err := c.Status().Update(ctx, src); err != nil {
		t.Fatalf("update status: %v", err)
	}
	got := &v1alpha1.PackageSource{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(src), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(status, got.Status); diff != "" {
		t.Errorf("status changed on the way through the API server (-written +read):\n%s", diff)
	}
}

func TestPackageSourceValidation(t *testing.T) {
	testenv.Need(t, env)
	c := packageClient(t)
	oci := func(change func(o *v1alpha1.OCISource)) v1alpha1.PackageSourceSpec {
		o := &v1alpha1.OCISource{Repository: "ghcr.io/acme/catalogs/services", Tag: "1.4.0"}
		change(o)
		return v1alpha1.PackageSourceSpec{OCI: o}
	}
	layout := &v1alpha1.LayoutSource{Path: "/var/lib/cozystack/catalogs/services", Tag: "1.4.0"}
	for _, tc := range []struct {
		name string
		spec v1alpha1.PackageSourceSpec
		want string // "" for accepted
	}{
		{"registry with a tag", oci(func(o *v1alpha1.OCISource) {}), ""},
		{"loopback registry with a digest", oci(func(o *v1alpha1.OCISource) {
			o.Repository, o.Tag, o.Digest = "127.0.0.1:5000/catalogs/demo", "", "sha256:"+strings.Repeat("a", 64)
		}), ""},
		{"layout", v1alpha1.PackageSourceSpec{Layout: layout}, ""},
		{"both oci and layout", v1alpha1.PackageSourceSpec{OCI: oci(func(o *v1alpha1.OCISource) {}).OCI, Layout: layout}, "set exactly one of spec.oci and spec.layout"},
		{"neither", v1alpha1.PackageSourceSpec{}, "set exactly one of spec.oci and spec.layout"},
		{"tag and digest", oci(func(o *v1alpha1.OCISource) { o.Digest = "sha256:" + strings.Repeat("a", 64) }), "set exactly one of tag and digest"},
		{"no tag or digest", oci(func(o *v1alpha1.OCISource) { o.Tag = "" }), "set exactly one of tag and digest"},
		{"repository with a scheme", oci(func(o *v1alpha1.OCISource) { o.Repository = "https://ghcr.io/acme/x" }), "spec.oci.repository"},
		{"repository with a tag", oci(func(o *v1alpha1.OCISource) { o.Repository = "ghcr.io/acme/x:1.0" }), "spec.oci.repository"},
		{"short digest", oci(func(o *v1alpha1.OCISource) { o.Tag, o.Digest = "", "sha256:abc" }), "spec.oci.digest"},
		{"relative layout path", v1alpha1.PackageSourceSpec{Layout: &v1alpha1.LayoutSource{Path: "catalogs/x", Tag: "1"}}, "spec.layout.path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: "validation"}, Spec: tc.spec}
			err := c.Create(testContext(t), obj, client.DryRunAll)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want 422 Invalid naming %q", err, tc.want)
			}
		})
	}
}

func TestPackageDefaultsAndValidation(t *testing.T) {
	testenv.Need(t, env)
	c := packageClient(t)
	ctx := testContext(t)
	pkg := &v1alpha1.Package{
		ObjectMeta: metav1.ObjectMeta{Name: "demo"},
		Spec: v1alpha1.PackageSpec{
			SourceRef: v1alpha1.PackageSourceReference{Name: "demo"},
			Components: map[string]v1alpha1.PackageComponentSettings{
				"echo":          {Values: &apiextensionsv1.JSON{Raw: []byte(`{"message":"hi"}`)}},
				"echo-operator": {Enabled: ptr.To(false)},
			},
			AllowPrivileged:  true,
			SharedNamespaces: []v1alpha1.SharedNamespace{{Namespace: "cozy-echo", Packages: []string{"other"}}},
		},
	}
	if err := c.Create(ctx, pkg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pkg) })
	if pkg.Spec.Variant != "default" {
		t.Errorf("spec.variant = %q, want the default \"default\"", pkg.Spec.Variant)
	}
	if !pkg.Spec.SharesWith("cozy-echo", "other") || pkg.Spec.SharesWith("cozy-echo", "demo") || pkg.Spec.SharesWith("cozy-other", "other") {
		t.Errorf("sharedNamespaces = %+v", pkg.Spec.SharedNamespaces)
	}
	if string(pkg.Spec.Components["echo"].Values.Raw) != `{"message":"hi"}` || pkg.Spec.Components["echo-operator"].IsEnabled() || !pkg.Spec.Components["echo"].IsEnabled() {
		t.Errorf("components = %+v", pkg.Spec.Components)
	}

	pkg.Status = v1alpha1.PackageStatus{
		ObservedGeneration: pkg.Generation, InstalledRevision: "0.1.0@sha256:" + strings.Repeat("b", 64), InstalledVersion: "0.1.0",
		Components: []v1alpha1.PackageComponentStatus{{Name: "echo", Ready: true, HelmRelease: &v1alpha1.NamespacedObjectReference{Name: "demo-echo", Namespace: "cozy-echo"}}},
	}
	want := pkg.Status
	if err := c.Status().Update(ctx, pkg); err != nil {
		t.Fatalf("update status: %v", err)
	}
	if diff := cmp.Diff(want, pkg.Status); diff != "" {
		t.Errorf("status changed (-written +read):\n%s", diff)
	}

	for _, tc := range []struct {
		name   string
		change func(s *v1alpha1.PackageSpec)
		want   string
	}{
		{"component name not a DNS label", func(s *v1alpha1.PackageSpec) {
			s.Components = map[string]v1alpha1.PackageComponentSettings{"Echo_Op": {}}
		}, "component names are DNS labels"},
		{"v-prefixed version", func(s *v1alpha1.PackageSpec) { s.Version = "v0.1.0" }, "spec.version"},
		{"variant not a DNS label", func(s *v1alpha1.PackageSpec) { s.Variant = "Default" }, "spec.variant"},
		{"no source", func(s *v1alpha1.PackageSpec) { s.SourceRef.Name = "" }, "spec.sourceRef.name"},
		{"shared namespace not a DNS label", func(s *v1alpha1.PackageSpec) {
			s.SharedNamespaces = []v1alpha1.SharedNamespace{{Namespace: "Cozy_Echo", Packages: []string{"other"}}}
		}, "spec.sharedNamespaces[0].namespace"},
		{"shared with nobody", func(s *v1alpha1.PackageSpec) {
			s.SharedNamespaces = []v1alpha1.SharedNamespace{{Namespace: "cozy-echo"}}
		}, "spec.sharedNamespaces[0].packages"},
		{"one namespace twice", func(s *v1alpha1.PackageSpec) {
			s.SharedNamespaces = []v1alpha1.SharedNamespace{{Namespace: "cozy-echo", Packages: []string{"a"}}, {Namespace: "cozy-echo", Packages: []string{"b"}}}
		}, "spec.sharedNamespaces[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: "invalid"}, Spec: v1alpha1.PackageSpec{SourceRef: v1alpha1.PackageSourceReference{Name: "demo"}}}
			tc.change(&obj.Spec)
			err := c.Create(testContext(t), obj, client.DryRunAll)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want 422 Invalid naming %q", err, tc.want)
			}
		})
	}
}
