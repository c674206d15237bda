package operator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// memoryCatalog is catalog "ucompat" at version with one application kind,
// Cachebox, whose values schema (chart and ApplicationDefinition) declares
// one string key, key, defaulting to 64Mi.
func memoryCatalog(t *testing.T, version, key string) string {
	t.Helper()
	dir := writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: ucompat
version: %s
minPlatformVersion: 0.1.0
provides:
  applicationKinds: [Cachebox]
applications:
  - name: cachebox
    chart: charts/cachebox
    kind: Cachebox
    rules:
      - {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch, create, update, patch, delete]}
    tenantRoles:
      view:
        - {apiGroups: [apps.cozystack.io], resources: [cacheboxes], verbs: [get, list, watch]}
      admin:
        - {apiGroups: [apps.cozystack.io], resources: [cacheboxes], verbs: [create, update, patch, delete]}
`, version), chart{dir: "charts/cachebox", values: key + ": 64Mi\n"})
	doc := fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: cachebox
spec:
  application:
    kind: Cachebox
    singular: cachebox
    plural: cacheboxes
    openAPISchema: '{"type":"object","additionalProperties":false,"properties":{"%s":{"type":"string","default":"64Mi"}}}'
  release:
    prefix: cachebox-
    source: ucompat
    component: cachebox
`, key)
	p := filepath.Join(dir, "applicationdefinitions", "cachebox.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestUpgradeCompat checks docs/operator/catalogs.md "Catalog delivery" (a revision that
// existing applications' values no longer fit waits): version 1 of a
// catalog declares maxMemory, an application stores maxMemory: 128Mi,
// version 2 renames the key to memoryLimit. Moving the tag to 2.0.0
// publishes and installs nothing (the ExternalArtifact, the
// ApplicationDefinition and the application's HelmRelease are
// fingerprinted, and the chart served stays version 1's): Ready=False
// IncompatibleValues naming the kind, both keys, the count and the
// namespace. A consent naming another digest changes nothing; a tag
// rollback serves version 1 as it was; a consent naming 2.0.0's digest
// installs it, the condition says so and the event names the
// applications that fail their next upgrade.
func TestUpgradeCompat(t *testing.T) {
	start(t)
	c := k(t)
	ctx := ctxT(t)
	v1 := push(t, memoryCatalog(t, "1.0.0", "maxMemory"), "e2e/ucompat", "1.0.0")
	v2 := push(t, memoryCatalog(t, "2.0.0", "memoryLimit"), "e2e/ucompat", "2.0.0")
	ps := ociSource("ucompat", "e2e/ucompat", "1.0.0")
	create(t, ps)
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), ps)
		_ = c.Delete(context.Background(), &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: "cachebox"}})
	})
	serving := func(version string) func(*v1alpha1.PackageSource) bool {
		return func(ps *v1alpha1.PackageSource) bool {
			r := ready(ps.Status.Conditions)
			return ps.Status.Catalog != nil && ps.Status.Catalog.Version == version && r != nil &&
				r.Status == True && r.ObservedGeneration == ps.Generation
		}
	}
	waitSource(t, "ucompat", "serving 1.0.0", serving("1.0.0"))

	gvr := schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "cacheboxes"}
	cacheboxes := dynamic.NewForConfigOrDie(env.Config).Resource(gvr)
	eventually(t, "cacheboxes served", func() error {
		_, err := cacheboxes.List(ctx, metav1.ListOptions{})
		return err
	})
	const ns = "ucompat-a"
	ensureNS(t, ns)
	if _, err := cacheboxes.Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Cachebox", "metadata": map[string]any{"name": "one"},
		"spec": map[string]any{"maxMemory": "128Mi"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cacheboxes.Namespace(ns).Delete(context.Background(), "one", metav1.DeleteOptions{}) })
	var hr helmv2.HelmRelease
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cachebox-one"}, &hr); err != nil {
		t.Fatalf("the HelmRelease of %s/one: %v", ns, err)
	}
	if hr.Spec.Values == nil || !strings.Contains(string(hr.Spec.Values.Raw), `"maxMemory":"128Mi"`) {
		t.Fatalf("the HelmRelease of %s/one stores %v, want maxMemory: 128Mi", ns, hr.Spec.Values)
	}

	// chartServed is the chart revision the application's
	// ExternalArtifact points helm-controller at (its status, which the
	// fingerprint leaves out).
	chartServed := func() string {
		for _, ea := range artifactsOf(t, "ucompat") {
			if ea.Status.Artifact != nil {
				return ea.Name + " " + ea.Status.Artifact.Revision
			}
		}
		return ""
	}
	before, chartBefore := fingerprint(t, "ucompat", ns), chartServed()
	unchanged := func(when string) {
		t.Helper()
		expectUnchanged(t, "catalog ucompat "+when, before, fingerprint(t, "ucompat", ns))
		if got := chartServed(); got != chartBefore {
			t.Errorf("the chart published %s: %q, want version 1's %q", when, got, chartBefore)
		}
	}

	// 2.0.0 renames maxMemory: nothing of it is published or installed.
	patchTag(t, "ucompat", "2.0.0")
	got := waitSource(t, "ucompat", "IncompatibleValues", sourceReady(False, v1alpha1.ReasonIncompatibleValues))
	msg := ready(got.Status.Conditions).Message
	t.Logf("the PackageSource says: %s", msg)
	mustContain(t, "IncompatibleValues message", msg, "2.0.0@"+v2.Manifest.Digest.String(),
		"kind Cachebox (ApplicationDefinition cachebox): maxMemory renamed to memoryLimit, stored by 1 application in 1 namespace (ucompat-a: 1)",
		`"deprecated": true`, "spec.approvedIncompatibleRevision to "+v2.Manifest.Digest.String())
	unchanged("while 2.0.0 waits")
	var ad v1alpha1.ApplicationDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: "cachebox"}, &ad); err != nil || !strings.Contains(ad.Spec.Application.OpenAPISchema, "maxMemory") {
		t.Errorf("ApplicationDefinition cachebox while 2.0.0 waits: %v, schema %s; want version 1's", err, ad.Spec.Application.OpenAPISchema)
	}

	// A consent naming another revision's digest does not apply.
	approve := func(d string) {
		t.Helper()
		cur := &v1alpha1.PackageSource{}
		if err := c.Get(ctx, client.ObjectKey{Name: "ucompat"}, cur); err != nil {
			t.Fatal(err)
		}
		orig := cur.DeepCopy()
		cur.Spec.ApprovedIncompatibleRevision = d
		if err := c.Patch(ctx, cur, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	approve(v1.Manifest.Digest.String())
	got = waitSource(t, "ucompat", "IncompatibleValues for the new generation", sourceReady(False, v1alpha1.ReasonIncompatibleValues))
	mustContain(t, "IncompatibleValues message", ready(got.Status.Conditions).Message, "maxMemory renamed to memoryLimit")
	unchanged("with a consent to another digest")

	// Rolled back: version 1 is served as it was.
	patchTag(t, "ucompat", "1.0.0")
	waitSource(t, "ucompat", "serving 1.0.0 again", serving("1.0.0"))
	unchanged("across the rollback")

	// The consent naming 2.0.0's digest installs it.
	approve(v2.Manifest.Digest.String())
	patchTag(t, "ucompat", "2.0.0")
	got = waitSource(t, "ucompat", "serving 2.0.0", serving("2.0.0"))
	mustContain(t, "Ready message", ready(got.Status.Conditions).Message, "installed with consent (spec.approvedIncompatibleRevision")
	// The install's event names the applications that fail their next
	// upgrade (later messages compare the new schemas with themselves).
	eventually(t, "an event naming the applications installed with consent", func() error {
		notes := eventNotes(t, "ucompat")
		want := "installed with consent (spec.approvedIncompatibleRevision) although its schemas no longer accept stored values, so these applications fail their next upgrade until their values change: " +
			"kind Cachebox (ApplicationDefinition cachebox): maxMemory renamed to memoryLimit, stored by 1 application in 1 namespace (ucompat-a: 1)"
		if !strings.Contains(notes, want) {
			return fmt.Errorf("the events say %q, want %q", notes, want)
		}
		return nil
	})
	eventually(t, "ApplicationDefinition cachebox of 2.0.0", func() error {
		if err := c.Get(ctx, client.ObjectKey{Name: "cachebox"}, &ad); err != nil {
			return err
		}
		if !strings.Contains(ad.Spec.Application.OpenAPISchema, "memoryLimit") {
			return fmt.Errorf("schema %s, want memoryLimit", ad.Spec.Application.OpenAPISchema)
		}
		return nil
	})
	if got := chartServed(); got == chartBefore {
		t.Errorf("the chart published with consent: still %q", got)
	}
	// The operator never rewrites stored values.
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cachebox-one"}, &hr); err != nil {
		t.Fatal(err)
	}
	if hr.Spec.Values == nil || !strings.Contains(string(hr.Spec.Values.Raw), `"maxMemory":"128Mi"`) {
		t.Errorf("the HelmRelease of %s/one after 2.0.0 installed stores %v, want maxMemory: 128Mi as before", ns, hr.Spec.Values)
	}
}
