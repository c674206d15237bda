package operator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/tenantaccess"
)

// appCatalog is a catalog of one application kind per entry of kinds
// (name -> Kind), each with its chart and its ApplicationDefinition in
// applicationdefinitions/<name>.yaml; the first also ships a
// ValidatingAdmissionPolicy and its binding.
func appCatalog(t *testing.T, catalog, version string, kinds map[string]string) string {
	t.Helper()
	var provides, apps string
	var charts []chart
	for name, kind := range kinds {
		provides += kind + ", "
		// Each kind is readable at view and writable at admin, and its
		// chart may write ConfigMaps (contract K5, "Tenant roles").
		apps += fmt.Sprintf(`  - name: %[1]s
    chart: charts/%[1]s
    kind: %[2]s
    rules:
      - {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch, create, update, patch, delete]}
    tenantRoles:
      view:
        - {apiGroups: [apps.cozystack.io], resources: [%[1]ss], verbs: [get, list, watch]}
      admin:
        - {apiGroups: [apps.cozystack.io], resources: [%[1]ss], verbs: [create, update, patch, delete]}
`, name, kind)
		charts = append(charts, chart{dir: "charts/" + name})
	}
	dir := writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %s
version: %s
minPlatformVersion: 0.1.0
provides:
  applicationKinds: [%s]
applications:
%s`, catalog, version, provides[:len(provides)-2], apps), charts...)
	first := true
	for name, kind := range kinds {
		doc := definitionYAML(name, kind, catalog)
		if first {
			first = false
			doc += "---\n" + namesPolicyYAML(name)
		}
		p := filepath.Join(dir, "applicationdefinitions", name+".yaml")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDefinitionsFromTheArtifact: a PackageSource installs the
// ApplicationDefinitions its artifact carries (and the policy shipped with
// one), labelled as its own; a new revision without a kind removes it;
// an AD of the same name that someone else applied is never overwritten
// (Conflict, nothing of the revision installed); deleting the source
// keeps its kinds.
func TestDefinitionsFromTheArtifact(t *testing.T) {
	start(t)
	c := k(t)
	t.Cleanup(func() {
		// Kept by design when their source goes: remove them for the
		// tests after this one.
		for _, name := range []string{"gadget", "widget", "sprocket"} {
			_ = c.Delete(context.Background(), &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}
	})
	push(t, appCatalog(t, "defs", "1.0.0", map[string]string{"gadget": "Gadget"}), "e2e/defs", "1.0.0")
	ps := ociSource("defs", "e2e/defs", "1.0.0")
	create(t, ps)
	got := waitSource(t, "defs", "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	mustContain(t, "Ready message", ready(got.Status.Conditions).Message, "ApplicationDefinition gadget", "ValidatingAdmissionPolicyBinding gadget-names.example.org")

	ad := &v1alpha1.ApplicationDefinition{}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "gadget"}, ad); err != nil {
		t.Fatalf("ApplicationDefinition gadget: %v", err)
	}
	if ad.Annotations[names.AnnotationPackageSource] != "defs" || ad.Spec.Application.Kind != "Gadget" {
		t.Errorf("ApplicationDefinition gadget: annotations %v, kind %q", ad.Annotations, ad.Spec.Application.Kind)
	}

	// Someone deletes it by hand: the operator puts it back.
	if err := c.Delete(ctxT(t), ad); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted ApplicationDefinition restored", func() error {
		return c.Get(ctxT(t), client.ObjectKey{Name: "gadget"}, &v1alpha1.ApplicationDefinition{})
	})

	// Version 2 adds a kind and drops gadget (and its policy).
	push(t, appCatalog(t, "defs", "2.0.0", map[string]string{"widget": "Widget"}), "e2e/defs", "2.0.0")
	patchTag(t, "defs", "2.0.0")
	waitSource(t, "defs", "serving 2.0.0", func(ps *v1alpha1.PackageSource) bool {
		return ps.Status.Catalog != nil && ps.Status.Catalog.Version == "2.0.0" && ready(ps.Status.Conditions) != nil && ready(ps.Status.Conditions).Status == True
	})
	eventually(t, "gadget removed, widget installed", func() error {
		if err := c.Get(ctxT(t), client.ObjectKey{Name: "gadget"}, &v1alpha1.ApplicationDefinition{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ApplicationDefinition gadget: %v, want NotFound", err)
		}
		return c.Get(ctxT(t), client.ObjectKey{Name: "widget"}, &v1alpha1.ApplicationDefinition{})
	})

	// Another source shipping an AD of the same name: Conflict, naming
	// the owner, and its other kinds are not installed.
	push(t, appCatalog(t, "rival", "1.0.0", map[string]string{"widget": "Widget", "sprocket": "Sprocket"}), "e2e/rival", "1.0.0")
	create(t, ociSource("rival", "e2e/rival", "1.0.0"))
	rival := waitSource(t, "rival", "Conflict", sourceReady(False, v1alpha1.ReasonConflict))
	mustContain(t, "Conflict message", ready(rival.Status.Conditions).Message, "ApplicationDefinition widget (PackageSource defs)")
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "sprocket"}, &v1alpha1.ApplicationDefinition{}); !apierrors.IsNotFound(err) {
		t.Errorf("ApplicationDefinition sprocket of the conflicting source: %v, want NotFound", err)
	}

	// Deleting the source keeps its kinds.
	if err := c.Delete(ctxT(t), ps); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ps)
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "widget"}, &v1alpha1.ApplicationDefinition{}); err != nil {
		t.Errorf("ApplicationDefinition widget after its PackageSource was deleted: %v, want it kept", err)
	}
}

// eventually polls check until it returns nil, failing with its last error.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctxT(t), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("never %s: %v", what, last)
	}
}

// patchTag points PackageSource name at another tag.
func patchTag(t *testing.T, name, tag string) {
	t.Helper()
	c := k(t)
	ps := &v1alpha1.PackageSource{}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: name}, ps); err != nil {
		t.Fatal(err)
	}
	orig := ps.DeepCopy()
	ps.Spec.OCI.Tag = tag
	if err := c.Patch(ctxT(t), ps, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// TestCatalogExtendsTenantRoles (K5 "Tenant roles",
// contracts/schemas/v1alpha1/k5-cozy-lib.md, "What a catalog declares"):
// installing a catalog adds its
// kinds to the platform's tenant roles, with no change to the platform: the
// operator writes the ClusterRoles of the catalog's applications[].
// tenantRoles and .rules, labelled for aggregation, and kube-controller-
// manager folds them into cozy:tenant:<level> (and every level above) and
// the catalog's installer role (cozy:catalog:<source>:installer, labelled
// for cozystack-controller to bind in every tenant namespace). A revision
// that drops the kind takes it out again.
func TestCatalogExtendsTenantRoles(t *testing.T) {
	start(t)
	c := k(t)
	if err := tenantaccess.Apply(ctxT(t), c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Later tests of this control plane serve the same kinds
		// (TestKindInUse: Doohickey): wait until the definitions and their
		// policies are gone, instead of leaving them to another test.
		for _, name := range []string{"gizmo", "doohickey"} {
			for _, o := range []client.Object{
				&v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}},
				&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-names.example.org"}},
				&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name + "-names.example.org"}},
			} {
				if err := c.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
					t.Error(err)
				}
				waitGone(t, o)
			}
		}
	})
	// hasRule says whether ClusterRole name grants verb on resource.
	hasRule := func(name, group, resource, verb string) (bool, error) {
		role := &rbacv1.ClusterRole{}
		if err := c.Get(ctxT(t), client.ObjectKey{Name: name}, role); err != nil {
			return false, err
		}
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true, nil
			}
		}
		return false, nil
	}
	want := func(what string, cases map[[4]string]bool) {
		t.Helper()
		eventually(t, what, func() error {
			for k, v := range cases {
				got, err := hasRule(k[0], k[1], k[2], k[3])
				if err != nil {
					return err
				}
				if got != v {
					return fmt.Errorf("ClusterRole %s grants %s on %s/%s: %v, want %v", k[0], k[3], k[1], k[2], got, v)
				}
			}
			return nil
		})
	}

	push(t, appCatalog(t, "roles", "1.0.0", map[string]string{"gizmo": "Gizmo"}), "e2e/roles", "1.0.0")
	ps := ociSource("roles", "e2e/roles", "1.0.0")
	create(t, ps)
	waitSource(t, "roles", "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	role := &rbacv1.ClusterRole{}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "cozy:catalog:roles:tenant-view"}, role); err != nil {
		t.Fatal(err)
	}
	if role.Labels[v1alpha1.TenantRoleAggregationLabel("view")] != "true" || role.Annotations[names.AnnotationPackageSource] != "roles" {
		t.Errorf("ClusterRole %s: labels %v, annotations %v", role.Name, role.Labels, role.Annotations)
	}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "cozy:catalog:roles:installer"}, role); err != nil {
		t.Fatal(err)
	}
	if role.Labels[v1alpha1.InstallerRoleLabel] != "true" || role.Annotations[v1alpha1.AnnotationPackageSource] != "roles" {
		t.Errorf("ClusterRole %s: labels %v, annotations %v", role.Name, role.Labels, role.Annotations)
	}
	want("the catalog's kind in the tenant roles", map[[4]string]bool{
		{"cozy:tenant:view", "apps.cozystack.io", "gizmos", "get"}:            true,
		{"cozy:tenant:view", "apps.cozystack.io", "gizmos", "create"}:         false,
		{"cozy:tenant:use", "apps.cozystack.io", "gizmos", "list"}:            true,
		{"cozy:tenant:admin", "apps.cozystack.io", "gizmos", "create"}:        true,
		{"cozy:tenant:super-admin", "apps.cozystack.io", "gizmos", "delete"}:  true,
		{"cozy:tenant:super-admin", "apps.cozystack.io", "tenants", "create"}: true,
		{"cozy:tenant:admin", "apps.cozystack.io", "tenants", "create"}:       false,
		{"cozy:catalog:roles:installer", "", "configmaps", "create"}:          true,
		// Helm's storage is granted in the release storage namespaces, not here.
		{"cozy:catalog:roles:installer", "", "secrets", "create"}: false,
	})

	// Version 2 ships another kind instead: gizmos leave the roles.
	push(t, appCatalog(t, "roles", "2.0.0", map[string]string{"doohickey": "Doohickey"}), "e2e/roles", "2.0.0")
	patchTag(t, "roles", "2.0.0")
	want("the dropped kind out of the tenant roles", map[[4]string]bool{
		{"cozy:tenant:view", "apps.cozystack.io", "gizmos", "get"}:        false,
		{"cozy:tenant:admin", "apps.cozystack.io", "gizmos", "create"}:    false,
		{"cozy:tenant:view", "apps.cozystack.io", "doohickeys", "get"}:    true,
		{"cozy:tenant:admin", "apps.cozystack.io", "doohickeys", "patch"}: true,
	})
	if err := c.Delete(ctxT(t), ps); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ps)
}

// rewrite replaces old with new in file rel of catalog directory dir.
func rewrite(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s holds no %q", rel, old)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(data), old, new)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// claimingCatalog is appCatalog (version 1.0.0) of the one kind def
// (kind) whose definition, policy and tenant roles name plural instead of
// def's own: a definition claiming another catalog's plural.
func claimingCatalog(t *testing.T, catalog, def, kind, plural string) string {
	t.Helper()
	dir := appCatalog(t, catalog, "1.0.0", map[string]string{def: kind})
	file := "applicationdefinitions/" + def + ".yaml"
	rewrite(t, dir, file, "plural: "+def+"s", "plural: "+plural)
	rewrite(t, dir, file, `resources: ["`+def+`s"]`, `resources: ["`+plural+`"]`)
	rewrite(t, dir, "catalog.yaml", "resources: ["+def+"s]", "resources: ["+plural+"]")
	return dir
}

// TestDecoyPluralPolicyRefused (K1 "Who serves a kind",
// contracts/schemas/v1alpha1/k1-application.md): a catalog shipping a
// decoy ApplicationDefinition with another catalog's plural, and a policy
// on it, gets Conflict naming the policy and the owner of the plural; the
// policy is not installed (creates of the other catalog's kind are not
// denied), and, all or nothing, the decoy's charts are not published and
// its Package installs nothing.
func TestDecoyPluralPolicyRefused(t *testing.T) {
	start(t)
	c := k(t)
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: "vgizmo"}})
	})
	push(t, appCatalog(t, "victim", "1.0.0", map[string]string{"vgizmo": "Vgizmo"}), "e2e/victim", "1.0.0")
	create(t, ociSource("victim", "e2e/victim", "1.0.0"))
	waitSource(t, "victim", "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))

	push(t, claimingCatalog(t, "decoy", "decoyx", "Decoyx", "vgizmos"), "e2e/decoy", "1.0.0")
	ps := ociSource("decoy", "e2e/decoy", "1.0.0")
	create(t, ps)
	got := waitSource(t, "decoy", "Conflict", sourceReady(False, v1alpha1.ReasonConflict))
	mustContain(t, "Conflict message", ready(got.Status.Conditions).Message,
		"ValidatingAdmissionPolicy decoyx-names.example.org (it matches vgizmos, the kind of ApplicationDefinition vgizmo of PackageSource victim)",
		"none of its charts was published")
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "decoyx-names.example.org"}, &admissionregistrationv1.ValidatingAdmissionPolicy{}); !apierrors.IsNotFound(err) {
		t.Errorf("the decoy's policy: %v, want NotFound", err)
	}
	if eas := artifactsOf(t, "decoy"); len(eas) > 0 {
		t.Errorf("the refused PackageSource published %d ExternalArtifacts", len(eas))
	}
	create(t, newPackage("decoy", "decoy", "", false))
	waitPackage(t, "decoy", "SourceNotReady", packageReady(False, v1alpha1.ReasonSourceNotReady))
	expectNothingInstalled(t, "decoy")
}

// definitionYAML is the ApplicationDefinition of kind, named name, of a
// test catalog: one integer setting, size.
func definitionYAML(name, kind, catalog string) string {
	return fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: %[1]s
spec:
  application:
    kind: %[2]s
    singular: %[1]s
    plural: %[1]ss
    openAPISchema: '{"type":"object","additionalProperties":false,"properties":{"size":{"type":"integer","default":1}}}'
  release:
    prefix: %[1]s-
    source: %[3]s
    component: %[1]s
`, name, kind, catalog)
}

// namesPolicyYAML is a catalog's admission policy (and its binding) that
// bounds the names of plural name+"s" to 20 characters.
func namesPolicyYAML(name string) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: %[1]s-names.example.org
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: ["apps.cozystack.io"]
        apiVersions: ["v1alpha1"]
        operations: ["CREATE"]
        resources: ["%[1]ss"]
  validations:
    - expression: "size(object.metadata.name) <= 20"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: %[1]s-names.example.org
spec:
  policyName: %[1]s-names.example.org
  validationActions: [Deny]
`, name)
}
