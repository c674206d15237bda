package operator_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/platform/internal/operator/names"
)

// The red-team catalogs (docs/operator/catalogs.md, "Catalog delivery", "What a
// third-party catalog gets") share one victim: catalog rtvictim,
// with a component in namespace e2e-rtvictim and an application kind
// (Rtgizmo, plural rtgizmos) shipped with an admission policy.
const (
	victim          = "rtvictim"
	victimNamespace = "e2e-rtvictim"
)

// victimCatalog is the victim's catalog directory; def names its
// ApplicationDefinition (a later revision renames it).
func victimCatalog(t *testing.T, version, def string) string {
	t.Helper()
	dir := appCatalog(t, victim, version, map[string]string{"rtgizmo": "Rtgizmo"})
	if def != "rtgizmo" {
		rewrite(t, dir, "applicationdefinitions/rtgizmo.yaml", "  name: rtgizmo\n", "  name: "+def+"\n")
	}
	f, err := os.OpenFile(filepath.Join(dir, artifact.CatalogFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, `variants:
  - name: default
    components:
      - name: web
        chart: charts/web
        namespace: %s`+configMapRule+"\n", victimNamespace); err != nil {
		t.Fatal(err)
	}
	web := writeCatalog(t, "", chart{dir: "charts/web", values: "greeting: mine\n"})
	if err := os.CopyFS(filepath.Join(dir, "charts", "web"), os.DirFS(filepath.Join(web, "charts", "web"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// forge builds the catalog in dir into a fresh OCI layout, then rewrites
// what the build refuses to make: the catalog (config) through catalog,
// and the definitions files through defs (either may be nil). It returns
// the layout directory, with the forged artifact tagged tag.
func forge(t *testing.T, dir, tag string, catalog func(map[string]any), defs func(path string, data []byte) []byte) string {
	t.Helper()
	ctx := ctxT(t)
	out := t.TempDir()
	store, err := oci.New(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(ctx, dir, store, build.Options{Tag: "built"})
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if raw, err := content.FetchAll(ctx, store, res.Manifest); err != nil || json.Unmarshal(raw, &m) != nil {
		t.Fatalf("read the built manifest: %v", err)
	}
	pushBlob := func(mediaType string, data []byte, annotations map[string]string) ocispec.Descriptor {
		d := content.NewDescriptorFromBytes(mediaType, data)
		d.Annotations = annotations
		if err := store.Push(ctx, d, strings.NewReader(string(data))); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
		return d
	}
	cfg := m.Config
	if catalog != nil {
		raw, err := content.FetchAll(ctx, store, m.Config)
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]any
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		catalog(c)
		raw, _ = json.Marshal(c)
		cfg = pushBlob(artifact.ConfigMediaType, raw, nil)
	}
	for i, l := range m.Layers {
		if l.MediaType != artifact.DefinitionMediaType || defs == nil {
			continue
		}
		raw, err := content.FetchAll(ctx, store, l)
		if err != nil {
			t.Fatal(err)
		}
		m.Layers[i] = pushBlob(l.MediaType, defs(l.Annotations[artifact.AnnotationTitle], raw), l.Annotations)
	}
	forged, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, artifact.ArtifactType,
		oras.PackManifestOptions{ConfigDescriptor: &cfg, Layers: m.Layers, ManifestAnnotations: m.Annotations})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Tag(ctx, forged, tag); err != nil {
		t.Fatal(err)
	}
	return out
}

// setComponentRules replaces the rules of the catalog's first component.
func setComponentRules(rules ...map[string]any) func(map[string]any) {
	return func(c map[string]any) {
		comp := c["variants"].([]any)[0].(map[string]any)["components"].([]any)[0].(map[string]any)
		list := make([]any, len(rules))
		for i, r := range rules {
			list[i] = r
		}
		comp["rules"] = list
	}
}

// victimKinds are the kinds snapshot compares: everything the victim's
// Package and PackageSource own, in its namespaces and cluster-wide.
var victimKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Namespace"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
	{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"},
	{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "ExternalArtifact"},
	{Group: "cozystack.io", Version: "v1alpha1", Kind: "ApplicationDefinition"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"},
}

// snapshot fingerprints every object of the victim (fingerprint): so a
// controller writing a status is not a change, and any write of what an
// object is, or a re-creation, is.
func snapshot(t *testing.T) map[string]string {
	t.Helper()
	return fingerprint(t, victim, victimNamespace)
}

// fingerprint is snapshot for Package pkg: every object in namespaces (and
// those namespaces), and those labelled as pkg's or its source's (named
// pkg too) anywhere, as UID and a hash of the object without
// resourceVersion, managed fields and status.
func fingerprint(t *testing.T, pkg string, namespaces ...string) map[string]string {
	t.Helper()
	c := k(t)
	namespaces = append(namespaces, names.StorageNamespace(pkg))
	out := map[string]string{}
	for _, gvk := range victimKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctxT(t), list); err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Items {
			l := o.GetLabels()
			mine := slices.Contains(namespaces, o.GetNamespace()) || (gvk.Kind == "Namespace" && slices.Contains(namespaces, o.GetName())) ||
				l[names.LabelPackage] == names.LabelValue(pkg) || l[names.LabelPackageSource] == names.LabelValue(pkg)
			if !mine {
				continue
			}
			obj := o.DeepCopy()
			unstructured.RemoveNestedField(obj.Object, "status")
			unstructured.RemoveNestedField(obj.Object, "metadata", "resourceVersion")
			unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
			raw, _ := json.Marshal(obj.Object)
			sum := sha256.Sum256(raw)
			out[gvk.Kind+" "+o.GetNamespace()+"/"+o.GetName()] = string(o.GetUID()) + " " + hex.EncodeToString(sum[:8])
		}
	}
	return out
}

// expectUnchanged fails listing what differs between two fingerprints.
func expectUnchanged(t *testing.T, who string, before, after map[string]string) {
	t.Helper()
	var changed []string
	for key, fp := range before {
		if after[key] != fp {
			changed = append(changed, fmt.Sprintf("%s (%s -> %s)", key, fp, after[key]))
		}
	}
	for key := range after {
		if _, ok := before[key]; !ok {
			changed = append(changed, key+" (new)")
		}
	}
	sort.Strings(changed)
	if len(changed) > 0 {
		t.Errorf("the objects of %s changed:\n%s", who, strings.Join(changed, "\n"))
	}
}

// TestRedTeamCatalogs checks what docs/operator/catalogs.md ("Catalog delivery", "What a
// third-party catalog gets") promises: one catalog per attack a
// third-party catalog author can make, built with cozypkg's build (or
// forged where the build refuses to make it), installed through a
// PackageSource and a Package without allowPrivileged unless the row says
// so. Each is refused or contained with the condition of its row, and
// nothing of the victim catalog changes: its objects are fingerprinted
// before and after all rows (snapshot).
//
// Covered by other tests, with the same victim-untouched checks:
//   - an application chart that escalates (a ClusterRole and binding, a
//     Secret of another release): its release installs as its catalog's
//     installer and fails with Ready=False, reason Forbidden
//     (platform/applicationdefinitions TestApplicationsHoldOnlyTheirCatalogsRights);
//   - six 95 MiB charts: served with the operator's peak RSS bounded
//     (platform/internal/operator/memorytest).
func TestRedTeamCatalogs(t *testing.T) {
	start(t)
	c := k(t)
	push(t, victimCatalog(t, "1.0.0", "rtgizmo"), "e2e/"+victim, "1.0.0")
	create(t, ociSource(victim, "e2e/"+victim, "1.0.0"))
	waitSource(t, victim, "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	create(t, newPackage(victim, victim, "", false))
	waitPackage(t, victim, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	t.Cleanup(func() {
		for _, ad := range []string{"rtgizmo", "rtgizmo2"} {
			_ = c.Delete(context.Background(), &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: ad}})
		}
	})
	// The victim's chart renders a ConfigMap named after its release.
	victimConfigMap := names.HelmRelease(victim, "web")
	before := snapshot(t)
	if _, ok := before["ConfigMap "+victimNamespace+"/"+victimConfigMap]; !ok {
		t.Fatalf("the victim's chart rendered no ConfigMap %s: %v", victimConfigMap, before)
	}

	token := map[string]any{"apiGroups": []any{""}, "resources": []any{"serviceaccounts/token"}, "verbs": []any{"create"}}
	readSA := map[string]any{"apiGroups": []any{""}, "resources": []any{"serviceaccounts", "secrets"}, "verbs": []any{"get", "list"}}
	wildcard := map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"*"}}

	rows := []struct {
		name string
		// source returns the PackageSource of the attacking catalog.
		source func(t *testing.T, name string) *v1alpha1.PackageSource
		// privileged sets the Package's allowPrivileged; no Package when
		// wantPackage is "".
		privileged bool
		// The conditions (Ready's reason) the source and the Package end
		// with, and what their messages say.
		wantSource, wantPackage string
		message                 []string
		// then runs further steps of the attack, if any.
		then func(t *testing.T, name string)
	}{{
		name: "rtforeignref", wantSource: v1alpha1.ReasonInvalidArtifact, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{"spec.release"},
		// An ApplicationDefinition naming the victim's application chart.
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			dir := appCatalog(t, name, "1.0.0", map[string]string{name + "x": "Rtforeignx"})
			return layoutSource(name, forge(t, dir, "1.0.0", nil, func(_ string, data []byte) []byte {
				return []byte(strings.ReplaceAll(string(data), "source: "+name+"\n    component: "+name+"x", "source: "+victim+"\n    component: rtgizmo"))
			}), "1.0.0")
		},
	}, {
		name: "rtescape", wantSource: v1alpha1.ReasonArtifactReady, wantPackage: v1alpha1.ReasonNamespaceNotAllowed,
		message: []string{"namespace " + victimNamespace + " belongs to Package " + victim},
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			push(t, simpleCatalog(t, name, "1.0.0", victimNamespace, "x"), "e2e/"+name, "1.0.0")
			return ociSource(name, "e2e/"+name, "1.0.0")
		},
	}, {
		name: "rtminter", wantSource: v1alpha1.ReasonInvalidArtifact, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{"serviceaccounts/token"},
		// A component in the victim's namespace that would mint a token
		// for the victim's installer and read it back.
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			return layoutSource(name, forge(t, simpleCatalog(t, name, "1.0.0", victimNamespace, "x"), "1.0.0", setComponentRules(token, readSA), nil), "1.0.0")
		},
	}, {
		name: "rtwildcard", wantSource: v1alpha1.ReasonInvalidArtifact, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{`"*"`},
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			return layoutSource(name, forge(t, simpleCatalog(t, name, "1.0.0", "e2e-"+name, "x"), "1.0.0", setComponentRules(wildcard), nil), "1.0.0")
		},
	}, {
		name: "rtwiden", privileged: true, wantSource: v1alpha1.ReasonArtifactReady, wantPackage: v1alpha1.ReasonInstalled,
		// Installed with consent to reading ConfigMaps; the next revision
		// asks for every verb on every resource of every group.
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			push(t, widenCatalog(t, name, "1.0.0", configMapVerbs("get")), "e2e/"+name, "1.0.0")
			return ociSource(name, "e2e/"+name, "1.0.0")
		},
		then: func(t *testing.T, name string) {
			push(t, widenCatalog(t, name, "2.0.0", `{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}`), "e2e/"+name, "2.0.0")
			patchTag(t, name, "2.0.0")
			p := waitPackage(t, name, "PrivilegeChangeRequiresApproval", packageReady(False, v1alpha1.ReasonPrivilegeChangeRequiresApproval))
			mustContain(t, "message", ready(p.Status.Conditions).Message, "*")
		},
	}, {
		name: "rtdecoy", wantSource: v1alpha1.ReasonConflict, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{"ValidatingAdmissionPolicy rtdecoyx-names.example.org (it matches rtgizmos, the kind of ApplicationDefinition rtgizmo of PackageSource " + victim + ")",
			"none of its charts was published"},
		// A decoy definition with the victim's plural, and a policy on it
		// that denies every create. The Package is the "conflict then
		// install" attack: it waits and installs nothing.
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			dir := claimingCatalog(t, name, "rtdecoyx", "Rtdecoyx", "rtgizmos")
			rewrite(t, dir, "applicationdefinitions/rtdecoyx.yaml", `size(object.metadata.name) <= 20`, `false`)
			push(t, dir, "e2e/"+name, "1.0.0")
			return ociSource(name, "e2e/"+name, "1.0.0")
		},
	}, {
		name: "rtsquat", wantSource: v1alpha1.ReasonConflict, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{`ApplicationDefinition rtsquatx (its resource name "rtgizmos" is held by ApplicationDefinition rtgizmo of PackageSource ` + victim + ")"},
		// A definition parked on the victim's kind, waiting for the
		// victim to rename its definition (the rename is below, after the
		// victim's objects are compared).
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			push(t, claimingCatalog(t, name, "rtsquatx", "Rtsquatx", "rtgizmos"), "e2e/"+name, "1.0.0")
			return ociSource(name, "e2e/"+name, "1.0.0")
		},
	}, {
		name: "rthook", privileged: true, wantSource: v1alpha1.ReasonArtifactReady, wantPackage: v1alpha1.ReasonInstalled,
		// A privileged component's pre-install hook named after the
		// victim's ConfigMap: it never runs (contained).
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			dir := hookCatalog(t, name, client.ObjectKey{Namespace: victimNamespace, Name: victimConfigMap})
			push(t, dir, "e2e/"+name, "1.0.0")
			return ociSource(name, "e2e/"+name, "1.0.0")
		},
	}, {
		name: "rtdupname", wantSource: v1alpha1.ReasonConflict, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{"catalog " + victim + " (served by PackageSource " + victim + ", created first"},
		// A second catalog calling itself by the victim's name.
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			push(t, simpleCatalog(t, victim, "9.0.0", "e2e-"+name, "x"), "e2e/"+name, "9.0.0")
			return ociSource(name, "e2e/"+name, "9.0.0")
		},
	}, {
		name: "rtoversized", wantSource: v1alpha1.ReasonInvalidArtifact, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{"the largest is variants[0].components[0] (web)"},
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			big := strings.Repeat("x", 1600<<10)
			push(t, componentCatalog(t, name, "1.0.0", "e2e-"+name, "x", "\n        values: {blob: "+big+"}"), "e2e/"+name, "1.0.0")
			return ociSource(name, "e2e/"+name, "1.0.0")
		},
	}}

	// The attackers' objects live until the end of the test (outer), so
	// they go on retrying while the victim is compared.
	outer := t
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			create(outer, row.source(t, row.name))
			wantStatus := False
			if row.wantSource == v1alpha1.ReasonArtifactReady {
				wantStatus = True
			}
			ps := waitSource(t, row.name, row.wantSource, sourceReady(wantStatus, row.wantSource))
			msg := ready(ps.Status.Conditions).Message
			if row.wantPackage != "" {
				create(outer, newPackage(row.name, row.name, "", row.privileged))
				wantStatus = False
				if row.wantPackage == v1alpha1.ReasonInstalled {
					wantStatus = True
				}
				p := waitPackage(t, row.name, row.wantPackage, packageReady(wantStatus, row.wantPackage))
				if wantStatus == False {
					expectNothingInstalled(t, row.name)
				}
				msg += "\n" + ready(p.Status.Conditions).Message
			}
			mustContain(t, "conditions", msg, row.message...)
			t.Logf("source %s, package %s: %s", row.wantSource, row.wantPackage, msg)
			if row.then != nil {
				row.then(t, row.name)
			}
		})
	}

	// A refusal is final, not a race the attacker may win later: the
	// refused sources retry (the first retry is after 10 s) before the
	// victim is compared.
	time.Sleep(12 * time.Second)
	expectUnchanged(t, "the victim", before, snapshot(t))
	t.Logf("%d objects of the victim compared before and after %d attacks", len(before), len(rows))
	waitSource(t, victim, "still Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	waitPackage(t, victim, "still Installed", packageReady(True, v1alpha1.ReasonInstalled))

	// The squatter's second step: the victim renames its definition. The
	// kind stays the victim's (its new definition, same plural), and the
	// squatter stays refused.
	push(t, victimCatalog(t, "1.1.0", "rtgizmo2"), "e2e/"+victim, "1.1.0")
	patchTag(t, victim, "1.1.0")
	eventually(t, "the victim's renamed definition", func() error {
		var ad v1alpha1.ApplicationDefinition
		if err := c.Get(ctxT(t), client.ObjectKey{Name: "rtgizmo2"}, &ad); err != nil {
			return err
		}
		if err := c.Get(ctxT(t), client.ObjectKey{Name: "rtgizmo"}, &v1alpha1.ApplicationDefinition{}); err == nil {
			return fmt.Errorf("the old definition is still there")
		}
		if ad.Annotations[names.AnnotationPackageSource] != victim {
			return fmt.Errorf("rtgizmo2 belongs to %q", ad.Annotations[names.AnnotationPackageSource])
		}
		return nil
	})
	// A spec change, so the squatter is reconciled now.
	squat := &v1alpha1.PackageSource{}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "rtsquat"}, squat); err != nil {
		t.Fatal(err)
	}
	orig := squat.DeepCopy()
	squat.Spec.Interval = &metav1.Duration{Duration: 5 * time.Minute}
	if err := c.Patch(ctxT(t), squat, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	ps := waitSource(t, "rtsquat", "Conflict with the renamed definition", func(ps *v1alpha1.PackageSource) bool {
		c := ready(ps.Status.Conditions)
		return c != nil && c.Reason == v1alpha1.ReasonConflict && strings.Contains(c.Message, "ApplicationDefinition rtgizmo2 of PackageSource "+victim)
	})
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "rtsquatx"}, &v1alpha1.ApplicationDefinition{}); err == nil {
		t.Errorf("the squatter's definition was installed: %s", ready(ps.Status.Conditions).Message)
	}
}
