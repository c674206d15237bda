package operator_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/sdk/localcp"

	"cozystack.io/contracts/doctest"
)

// The catalog TestRemoveCatalog installs and removes. Every object of it
// carries rmToken in its name, a label value or an annotation value
// (directly or through its namespace), which is how leftovers are found;
// the tenant namespace, which is the tenant's and stays, does not.
const (
	rmToken  = "rmcat"
	rmGroup  = "rmcat.example.org"
	rmDef    = "rmcatgizmo"
	rmTenant = "tenant-rmt"
)

// rmCatalog has a privileged component shipping a CRD of its own group
// in crds/ (which Helm never deletes) and an application kind with an
// admission policy shipped beside its definition.
func rmCatalog(t *testing.T) string {
	t.Helper()
	dir := writeCatalog(t, `apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: `+rmToken+`
version: 1.0.0
minPlatformVersion: 0.1.0
provides:
  applicationKinds: [Rmcatgizmo]
  apiGroups: [`+rmGroup+`]
variants:
  - name: default
    components:
      - name: op
        chart: charts/op
        namespace: e2e-`+rmToken+`
        privileged: true
        clusterRules:
          - apiGroups: [apiextensions.k8s.io]
            resources: [customresourcedefinitions]
            verbs: [get, list, watch, create, update, patch, delete]`+configMapRule+`
applications:
  - name: `+rmDef+`
    chart: charts/`+rmDef+`
    kind: Rmcatgizmo
    rules:
      - {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch, create, update, patch, delete]}
    tenantRoles:
      view:
        - {apiGroups: [apps.cozystack.io], resources: [`+rmDef+`s], verbs: [get, list, watch]}
      admin:
        - {apiGroups: [apps.cozystack.io], resources: [`+rmDef+`s], verbs: [create, update, patch, delete]}
`, chart{dir: "charts/op", values: "greeting: hello\n"}, chart{dir: "charts/" + rmDef})
	writeFile(t, dir, "charts/op/crds/widgets.yaml", crdYAML(rmToken+"widgets", rmGroup, "string", "{}"))
	writeFile(t, dir, "applicationdefinitions/"+rmDef+".yaml", definitionYAML(rmDef, "Rmcatgizmo", rmToken)+"---\n"+namesPolicyYAML(rmDef))
	return dir
}

// TestRemoveCatalog follows docs/operator/catalogs.md, "Removing a
// catalog": a catalog is installed from the test registry (a Package of
// its privileged component, which ships a CRD, and a kind with a policy),
// a tenant namespace gets its installer and release storage namespace
// (tenantrbac, as cozystack-controller runs it) and an application of the
// kind; the tenant deletes the application, then the document's commands
// run verbatim through kubectl. Afterwards no object of any resource the
// cluster serves (events aside) is the catalog's: a scan of every kind
// through discovery, which before the removal finds the catalog in each
// kind it touched. The tenant namespace, which is the tenant's, stays.
func TestRemoveCatalog(t *testing.T) {
	start(t)
	startTenantRBAC(t)
	c := kc(t)
	ctx := ctxT(t)
	script := removalScript(t)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rmTenant, Labels: map[string]string{v1alpha1.LabelTenant: "rmt"}}}
	create(t, ns)
	t.Cleanup(func() {
		// Only when the test failed half way: nothing is left otherwise.
		bg := context.Background()
		_ = c.Delete(bg, &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: rmToken}})
		_ = c.Delete(bg, &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: rmDef}})
		_ = c.Delete(bg, &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: rmToken}})
	})
	push(t, rmCatalog(t), "e2e/"+rmToken, "1.0.0")
	if err := c.Create(ctx, ociSource(rmToken, "e2e/"+rmToken, "1.0.0")); err != nil {
		t.Fatal(err)
	}
	waitSource(t, rmToken, "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	if err := c.Create(ctx, newPackage(rmToken, rmToken, "", true)); err != nil {
		t.Fatal(err)
	}
	waitPackage(t, rmToken, "Installed", packageReady(True, v1alpha1.ReasonInstalled))

	gvr := schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: rmDef + "s"}
	gizmos := dynamic.NewForConfigOrDie(env.Config).Resource(gvr).Namespace(rmTenant)
	eventually(t, rmDef+"s served", func() error {
		_, err := gizmos.List(ctx, metav1.ListOptions{})
		return err
	})
	if _, err := gizmos.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Rmcatgizmo", "metadata": map[string]any{"name": "one"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	storage := v1alpha1.ApplicationReleaseStorageNamespace(rmTenant, rmToken)
	eventually(t, "the catalog's installer and release storage in "+rmTenant, func() error {
		for _, o := range []client.Object{
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: rmTenant, Name: v1alpha1.CatalogInstallerServiceAccount(rmToken)}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: storage}},
		} {
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
		}
		return nil
	})

	// What the catalog put into the cluster, by kind, as the scan sees it.
	before := leftovers(t)
	var kinds []string
	for k := range before {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	t.Logf("the installed catalog, by resource: %v", kinds)
	for _, want := range []string{
		"packagesources.cozystack.io", "packages.cozystack.io", "applicationdefinitions.cozystack.io",
		"externalartifacts.source.toolkit.fluxcd.io", "helmreleases.helm.toolkit.fluxcd.io",
		"validatingadmissionpolicies.admissionregistration.k8s.io", "validatingadmissionpolicybindings.admissionregistration.k8s.io",
		"customresourcedefinitions.apiextensions.k8s.io", "namespaces", "serviceaccounts", "configmaps",
		"roles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io",
		"clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io",
		rmDef + "s.apps.cozystack.io",
	} {
		if len(before[want]) == 0 {
			t.Errorf("the scan finds no %s of the installed catalog: it would miss a leftover there", want)
		}
	}
	if !slices.Contains(before["namespaces"], storage) {
		t.Errorf("the scan misses the tenant's release storage namespace %s: %v", storage, before["namespaces"])
	}

	// The tenant deletes its application; then the cluster operator runs
	// the document's commands.
	if err := gizmos.Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	runRemoval(t, script)

	var left []string
	eventually(t, "nothing of the catalog left", func() error {
		left = left[:0]
		for res, objs := range leftovers(t) {
			for _, o := range objs {
				left = append(left, res+" "+o)
			}
		}
		if len(left) > 0 {
			slices.Sort(left)
			return fmt.Errorf("left: %v", left)
		}
		return nil
	})
	// The platform's aggregated tenant roles no longer grant the kind.
	eventually(t, "the tenant roles without "+rmDef+"s", func() error {
		var roles rbacv1.ClusterRoleList
		if err := c.List(ctx, &roles); err != nil {
			return err
		}
		for _, r := range roles.Items {
			for _, rule := range r.Rules {
				if slices.Contains(rule.Resources, rmDef+"s") || slices.Contains(rule.APIGroups, rmGroup) {
					return fmt.Errorf("ClusterRole %s still grants %v", r.Name, rule)
				}
			}
		}
		return nil
	})
	if err := c.Get(ctx, client.ObjectKey{Name: rmTenant}, &corev1.Namespace{}); err != nil {
		t.Errorf("the tenant namespace %s: %v; the catalog's removal must leave it", rmTenant, err)
	}
}

// removalScript returns the shell commands of docs/operator/catalogs.md's
// "Removing a catalog" with its first line, "SOURCE=demo PACKAGES=demo",
// naming this test's catalog instead.
func removalScript(t *testing.T) string {
	t.Helper()
	const doc = "docs/operator/catalogs.md"
	const first = "SOURCE=demo PACKAGES=demo"
	_, rest, ok := strings.Cut(doctest.Section(t, doc, "Catalog delivery"), "```sh\n"+first)
	if !ok {
		t.Fatalf("%s has no ```sh block starting %q (Catalog delivery, Removing a catalog)", doc, first)
	}
	block, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatalf("%s: the removal block does not end", doc)
	}
	return fmt.Sprintf("SOURCE=%s PACKAGES=%s%s\n", rmToken, rmToken, block)
}

// runRemoval runs script with sh -eu and the control plane's kubectl.
func runRemoval(t *testing.T, script string) {
	t.Helper()
	kubectl := localcp.DefaultLayout().Binary("kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctxT(t), 3*timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-eu", "-c", script)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "HOME="+home, "KUBECACHEDIR="+filepath.Join(home, "cache"),
		"PATH="+filepath.Dir(kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	started := time.Now()
	err := cmd.Run()
	t.Logf("the removal (%s, %.1f s):\n%s", strings.TrimSpace(script), time.Since(started).Seconds(), out.String())
	if err != nil {
		t.Fatalf("the removal commands of docs/operator/catalogs.md: %v", err)
	}
}

// leftovers lists, by resource ("plural.group"), every object of every
// listable resource the cluster serves that is the catalog's: its name
// contains rmToken, a label or annotation value is rmToken, or it is in a
// namespace that is. Events are left out (they expire on their own).
func leftovers(t *testing.T) map[string][]string {
	t.Helper()
	ctx := ctxT(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		t.Fatal(err)
	}
	mc, err := metadata.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	mine := func(m metav1.Object) bool {
		if strings.Contains(m.GetName(), rmToken) {
			return true
		}
		for _, kv := range []map[string]string{m.GetLabels(), m.GetAnnotations()} {
			for _, v := range kv {
				if v == rmToken {
					return true
				}
			}
		}
		return false
	}
	type resource struct {
		gvr        schema.GroupVersionResource
		namespaced bool
	}
	var all []resource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || r.Name == "events" {
				continue
			}
			res := resource{gv.WithResource(r.Name), r.Namespaced}
			if res.gvr.Group == "" && r.Name == "namespaces" {
				// First: every object in one of the catalog's is too.
				all = append([]resource{res}, all...)
			} else {
				all = append(all, res)
			}
		}
	}
	out := map[string][]string{}
	catalogNS := map[string]bool{}
	for _, r := range all {
		list, err := mc.Resource(r.gvr).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsServiceUnavailable(err) {
			continue // a kind that went meanwhile, or an API not up
		}
		if err != nil {
			t.Fatalf("list %s: %v", r.gvr, err)
		}
		key := r.gvr.Resource
		if r.gvr.Group != "" {
			key += "." + r.gvr.Group
		}
		for i := range list.Items {
			o := &list.Items[i]
			// Every object of one of the catalog's kinds is its too.
			if !mine(o) && !catalogNS[o.Namespace] && !strings.Contains(key, rmToken) {
				continue
			}
			if key == "namespaces" {
				catalogNS[o.Name] = true
			}
			name := o.Name
			if r.namespaced {
				name = o.Namespace + "/" + o.Name
			}
			out[key] = append(out[key], name)
		}
	}
	return out
}

// TestRemovedCatalogKeepsStorageWithRecords: the release storage
// namespace of a removed catalog in a tenant namespace stays while it
// holds a Helm release record (one handed over to another catalog keeps
// its records there, K1 "Who serves a kind"), though the catalog's
// installer goes.
func TestRemovedCatalogKeepsStorageWithRecords(t *testing.T) {
	start(t)
	startTenantRBAC(t)
	c := k(t)
	ctx := ctxT(t)
	const (
		src    = "rmkeep"
		def    = "rmkeepgizmo"
		tenant = "tenant-rmk"
	)
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant, Labels: map[string]string{v1alpha1.LabelTenant: "rmk"}}})
	push(t, appCatalog(t, src, "1.0.0", map[string]string{def: "Rmkeepgizmo"}), "e2e/"+src, "1.0.0")
	ps := ociSource(src, "e2e/"+src, "1.0.0")
	create(t, ps)
	waitSource(t, src, "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	storage := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ApplicationReleaseStorageNamespace(tenant, src)}}
	t.Cleanup(func() { _ = c.Delete(context.Background(), storage) })
	eventually(t, "the release storage namespace "+storage.Name, func() error {
		return c.Get(ctx, client.ObjectKeyFromObject(storage), storage)
	})
	record := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: storage.Name, Name: "sh.helm.release.v1.handed-over.v1",
		Labels: map[string]string{"owner": "helm", "name": "handed-over"}}, Type: helmReleaseSecretType}
	if err := c.Create(ctx, record); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, ps); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ps)
	if err := c.Delete(ctx, &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: def}}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: v1alpha1.CatalogInstallerServiceAccount(src)}})
	// The reconcile that deleted the installer would delete it next:
	// it is still there, not deleting, a while after.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(storage), storage); err != nil || !storage.DeletionTimestamp.IsZero() {
			t.Fatalf("release storage namespace %s holding a Helm record, after its catalog went: %v, deleting %v; want it kept", storage.Name, err, storage.DeletionTimestamp)
		}
	}
}

// helmReleaseSecretType is the type of Helm's release records.
const helmReleaseSecretType = "helm.sh/release.v1"
