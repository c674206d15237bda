package operator_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"oras.land/oras-go/v2/content/oci"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/sdk/testenv"
)

// The CRD-group attacks (docs/operator/catalogs.md, "Catalog
// delivery", "What a third-party catalog gets", "CRD groups") share one
// victim: catalog rgvictim, whose privileged component ships the CRD
// widgets.victim.example.org (its group is not shared) and
// doors.open.example.org (a group it shares with the catalogs that depend
// on it).
const (
	groupVictim   = "rgvictim"
	victimGroup   = "victim.example.org"
	openGroup     = "open.example.org"
	victimWidgets = "widgets." + victimGroup
)

// crdYAML is a namespaced CRD of plural.group, one version, whose schema
// has a spec.field of type, labelled with labels (a YAML flow mapping).
func crdYAML(plural, group, fieldType, labels string) string {
	kind := strings.ToUpper(plural[:1]) + strings.TrimSuffix(plural[1:], "s")
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s
  labels: %[5]s
spec:
  group: %[2]s
  names: {kind: %[3]s, listKind: %[3]sList, plural: %[1]s, singular: %[6]s}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                field: {type: %[4]s}
`, plural, group, kind, fieldType, labels, strings.ToLower(kind))
}

// crdCatalog is a catalog name whose privileged component "op" (in
// namespace e2e-<name>, allowed to manage CRDs) ships files (chart paths
// such as "crds/x.yaml" or "templates/x.yaml"); provides and extra are
// spliced into catalog.yaml (provides: YAML under provides:, extra: more
// fields of the component).
func crdCatalog(t *testing.T, name, version, provides, extra string, files map[string]string) string {
	t.Helper()
	dir := writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %[1]s
version: %[2]s
minPlatformVersion: 0.1.0
provides:
%[3]s
variants:
  - name: default
    components:
      - name: op
        chart: charts/op
        namespace: e2e-%[1]s
        privileged: true%[4]s
        clusterRules:
          - apiGroups: [apiextensions.k8s.io]
            resources: [customresourcedefinitions]
            verbs: [get, list, watch, create, update, patch, delete]`+configMapRule+`
`, name, version, provides, extra), chart{dir: "charts/op", values: "greeting: " + version + "\n"})
	for rel, body := range files {
		writeFile(t, dir, "charts/op/"+rel, body)
	}
	return dir
}

// writeFile writes body to dir/rel.
func writeFile(t *testing.T, dir, rel, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// buildInto builds the catalog in dir into an OCI layout at target.
func buildInto(t *testing.T, dir, target string) (*build.Result, error) {
	t.Helper()
	store, err := oci.New(target)
	if err != nil {
		t.Fatal(err)
	}
	return build.Build(ctxT(t), dir, store, build.Options{Tag: "1.0.0"})
}

// installGroupVictim installs the victim's PackageSource and Package,
// named victim, and returns a fingerprint function of its CRDs.
func installGroupVictim(t *testing.T, victim string) func() map[string]string {
	t.Helper()
	dir := crdCatalog(t, victim, "1.0.0",
		"  apiGroups: ["+victimGroup+", "+openGroup+"]\n  sharedAPIGroups: ["+openGroup+"]", "", map[string]string{
			"crds/widgets.yaml": crdYAML("widgets", victimGroup, "string", "{owner: victim}"),
			"crds/doors.yaml":   crdYAML("doors", openGroup, "string", "{owner: victim}"),
		})
	push(t, dir, "e2e/"+victim, "1.0.0")
	create(t, ociSource(victim, "e2e/"+victim, "1.0.0"))
	waitSource(t, victim, "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	c := kc(t)
	t.Cleanup(func() {
		// Helm leaves what crds/ installed: remove it for the next test.
		for _, n := range []string{victimWidgets, "doors." + openGroup} {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: n}}
			_ = c.Delete(context.Background(), crd)
			_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
				return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(crd), crd)), nil
			})
		}
	})
	create(t, newPackage(victim, victim, "", true))
	waitPackage(t, victim, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	return func() map[string]string {
		var list apiextensionsv1.CustomResourceDefinitionList
		if err := c.List(ctxT(t), &list); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, crd := range list.Items {
			if crd.Spec.Group != victimGroup && crd.Spec.Group != openGroup {
				continue
			}
			raw, _ := json.Marshal([]any{crd.Spec, crd.Labels, crd.Annotations})
			sum := sha256.Sum256(raw)
			out[crd.Name] = string(crd.UID) + " " + hex.EncodeToString(sum[:8])
		}
		return out
	}
}

// sameFingerprints fails unless before and after are equal.
func sameFingerprints(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != 2 {
		t.Fatalf("the victim's CRDs: %v, want widgets and doors", before)
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("the victim's CRD %s changed: %s -> %s", k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("a CRD of the victim's groups appeared: %s", k)
		}
	}
}

// crdScheme is the operator's scheme with CustomResourceDefinitions.
func crdScheme() *runtime.Scheme {
	s := controllermanager.Scheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}

// kc is k with CustomResourceDefinitions in its scheme.
func kc(t *testing.T) client.Client {
	t.Helper()
	testenv.Need(t, env)
	c, err := client.New(env.Config, client.Options{Scheme: crdScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// asServiceAccount is a client acting as ServiceAccount ns/sa, as
// helm-controller does when it impersonates a component's installer.
func asServiceAccount(t *testing.T, ns, sa string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: crdScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRedTeamCRDGroups: a catalog never creates, replaces or changes
// another catalog's CRD. Claiming the victim's group in
// provides.apiGroups is refused at the PackageSource (Conflict naming the
// holder); a catalog that does not claim it but renders a CRD of the group
// from templates (which the build cannot check) fails at admission; and
// the update Helm's crds/ CreateReplace makes on upgrade, made as the
// attacker's installer, is denied too. The victim's CRDs keep their UID,
// spec and labels.
func TestRedTeamCRDGroups(t *testing.T) {
	start(t)
	c := kc(t)
	fingerprint := installGroupVictim(t, groupVictim)
	before := fingerprint()

	// 1. The victim's CRD, with another schema and labels, in crds/ of a
	// catalog that claims the group.
	thief := "rgthief"
	push(t, crdCatalog(t, thief, "1.0.0", "  apiGroups: ["+victimGroup+"]", "", map[string]string{
		"crds/widgets.yaml": crdYAML("widgets", victimGroup, "integer", "{owner: thief}"),
	}), "e2e/"+thief, "1.0.0")
	create(t, ociSource(thief, "e2e/"+thief, "1.0.0"))
	// The conditions and the rest of the status are two writes
	// (status.Writer): wait for both.
	conflict := sourceReady(False, v1alpha1.ReasonConflict)
	ps := waitSource(t, thief, "Conflict, with status.catalog", func(ps *v1alpha1.PackageSource) bool {
		return conflict(ps) && ps.Status.Catalog != nil
	})
	mustContain(t, "message", ready(ps.Status.Conditions).Message, "provides.apiGroups names "+victimGroup,
		"belongs to catalog "+groupVictim+" of PackageSource "+groupVictim+" (created first)", "none of its charts was published")
	if eas := artifactsOf(t, thief); len(eas) > 0 {
		t.Errorf("the refused catalog published %d ExternalArtifacts", len(eas))
	}
	if ps.Status.Catalog == nil || len(ps.Status.Catalog.Provides.APIGroups) != 1 {
		t.Errorf("status.catalog does not record the groups: %+v", ps.Status.Catalog)
	}

	// 2. A catalog of its own group whose template renders a new CRD in
	// the victim's group (templated, so no build check sees it), installed
	// with allowPrivileged: the install fails at admission.
	forger := "rgforger"
	push(t, crdCatalog(t, forger, "1.0.0", "  apiGroups: [forger.example.org]", "", map[string]string{
		"crds/own.yaml":      crdYAML("owns", "forger.example.org", "string", "{}"),
		"templates/crd.yaml": crdYAML("gizmos", victimGroup, "string", "{release: {{ .Release.Name | quote }}}"),
	}), "e2e/"+forger, "1.0.0")
	create(t, ociSource(forger, "e2e/"+forger, "1.0.0"))
	waitSource(t, forger, "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "owns.forger.example.org"}})
	})
	create(t, newPackage(forger, forger, "", true))
	p := waitPackage(t, forger, "InstallFailed", packageReady(False, v1alpha1.ReasonInstallFailed))
	denial := "CustomResourceDefinition gizmos." + victimGroup + " is of API group " + victimGroup + ", which belongs to catalog " + groupVictim + " (PackageSource " + groupVictim + ")"
	mustContain(t, "message", ready(p.Status.Conditions).Message, denial, "Package "+forger+" (catalog "+forger+") may create, change or delete only CRDs of its catalog's provides.apiGroups [forger.example.org]")
	t.Logf("forger: %s", ready(p.Status.Conditions).Message)

	// The policy is the Package's: controlled by it, labelled.
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "cozystack-package-crds." + forger}, &vap); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(&vap); ref == nil || ref.Kind != "Package" || ref.Name != forger || vap.Labels[names.LabelPackage] != forger {
		t.Errorf("policy owner %+v, labels %v", ref, vap.Labels)
	}

	// 3. What crds/ with CreateReplace does on upgrade (an update of the
	// existing CRD) and a delete, as the forger's installer: denied.
	installer := asServiceAccount(t, "e2e-"+forger, names.Installer(forger, "op"))
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctxT(t), client.ObjectKey{Name: victimWidgets}, &crd); err != nil {
		t.Fatal(err)
	}
	crd.Labels["owner"] = "thief"
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["field"] = apiextensionsv1.JSONSchemaProps{Type: "integer"}
	err := installer.Update(ctxT(t), &crd)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("update of the victim's CRD as the forger's installer: %v, want forbidden", err)
	}
	mustContain(t, "denial", err.Error(), "CustomResourceDefinition "+victimWidgets+" is of API group "+victimGroup+", which belongs to catalog "+groupVictim)
	// Dropping the served version (replacing the versions) is the same update.
	if err := installer.Delete(ctxT(t), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: victimWidgets}}); !apierrors.IsForbidden(err) {
		t.Errorf("delete of the victim's CRD as the forger's installer: %v, want forbidden", err)
	}
	// Its own group stays open to it (the policy denies only what is not
	// the catalog's).
	own := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "owns.forger.example.org"}, own); err != nil {
		t.Fatalf("the forger's own CRD (crds/) was not installed: %v", err)
	}
	own.Labels = map[string]string{"touched": "yes"}
	if err := installer.Update(ctxT(t), own); err != nil {
		t.Errorf("update of its own CRD: %v", err)
	}

	// A refusal is final: the refused source retries before the compare.
	time.Sleep(12 * time.Second)
	sameFingerprints(t, before, fingerprint())
	waitPackage(t, groupVictim, "still Installed", packageReady(True, v1alpha1.ReasonInstalled))

	// Deleting the Package removes its policy.
	if err := c.Delete(ctxT(t), &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: forger}}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "cozystack-package-crds." + forger}})
	waitGone(t, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "cozystack-package-crds." + forger}})
}

// digestPattern finds the digest a PrivilegeChangeRequiresApproval
// message gives.
var digestPattern = regexp.MustCompile(`spec.approvedPrivileges: "(sha256:[0-9a-f]{64})"`)

// TestConversionWebhookNeedsConsent: a conversion webhook reads every
// object of its kind, so a Package may set one only on a CRD its
// component names in conversionWebhooks, which is part of the privileges
// the cluster operator approves.
func TestConversionWebhookNeedsConsent(t *testing.T) {
	start(t)
	c := kc(t)
	const name, gadgets = "rgconv", "gadgets.conv.example.org"
	files := map[string]string{"crds/gadgets.yaml": crdYAML("gadgets", "conv.example.org", "string", "{}")}
	push(t, crdCatalog(t, name, "1.0.0", "  apiGroups: [conv.example.org]", "", files), "e2e/"+name, "1.0.0")
	create(t, ociSource(name, "e2e/"+name, "1.0.0"))
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: gadgets}})
	})
	create(t, newPackage(name, name, "", true))
	waitPackage(t, name, "Installed", packageReady(True, v1alpha1.ReasonInstalled))

	installer := asServiceAccount(t, "e2e-"+name, names.Installer(name, "op"))
	hook := func() error {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := c.Get(ctxT(t), client.ObjectKey{Name: gadgets}, &crd); err != nil {
			return err
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "e2e-" + name, Name: "reader", Path: ptrTo("/convert")}},
				ConversionReviewVersions: []string{"v1"},
			},
		}
		return installer.Update(ctxT(t), &crd)
	}
	err := hook()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("a conversion webhook without consent: %v, want forbidden", err)
	}
	mustContain(t, "denial", err.Error(), "CustomResourceDefinition "+gadgets+" sets spec.conversion.strategy Webhook",
		"Package "+name+" (catalog "+name+") may give a conversion webhook only to the CRDs its privileged components name in conversionWebhooks []")

	// The catalog names it: a new right, which waits for approval.
	push(t, crdCatalog(t, name, "2.0.0", "  apiGroups: [conv.example.org]", "\n        conversionWebhooks: ["+gadgets+"]", files), "e2e/"+name, "2.0.0")
	patchTag(t, name, "2.0.0")
	p := waitPackage(t, name, "PrivilegeChangeRequiresApproval", packageReady(False, v1alpha1.ReasonPrivilegeChangeRequiresApproval))
	msg := ready(p.Status.Conditions).Message
	mustContain(t, "message", msg, "component op: cluster-wide conversion webhook of CustomResourceDefinition "+gadgets)
	if err := hook(); !apierrors.IsForbidden(err) {
		t.Fatalf("a conversion webhook before approval: %v, want forbidden", err)
	}
	m := digestPattern.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("no digest in %q", msg)
	}
	orig := p.DeepCopy()
	p.Spec.ApprovedPrivileges = m[1]
	if err := c.Patch(ctxT(t), p, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	p = waitPackage(t, name, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	if g := p.Status.GrantedPrivileges; g == nil || len(g.Components) != 1 || len(g.Components[0].ConversionWebhooks) != 1 {
		t.Errorf("granted privileges do not record the webhook: %+v", g)
	}
	eventually(t, "the approved conversion webhook is admitted", hook)
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctxT(t), client.ObjectKey{Name: gadgets}, &crd); err != nil || crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter {
		t.Errorf("the CRD's conversion: %+v, %v", crd.Spec.Conversion, err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestRulesOnOtherCatalogsGroups: a catalog's rules and tenant roles name
// only its own groups, Kubernetes' and the platform's, or groups a
// catalog it depends on shares. One with no relation to the victim that
// gives tenant admins create/patch/delete on the victim's widgets is
// refused naming the field (at build, and forged past it, at pull); one
// that depends on the victim is refused for the group the victim does
// not share (APIGroupNotGranted) and accepted for the one it does. No
// role granting the victim's group is ever written.
func TestRulesOnOtherCatalogsGroups(t *testing.T) {
	start(t)
	c := kc(t)
	// Its own victim (the first test's may still be going).
	const groupVictim = "rgowner"
	fingerprint := installGroupVictim(t, groupVictim)
	before := fingerprint()

	depCatalog := func(name, group, deps, provides string) string {
		return writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %[1]s
version: 1.0.0
minPlatformVersion: 0.1.0%[4]s
variants:
  - name: default
    dependsOn: %[3]s
    components:
      - name: web
        chart: charts/web
        namespace: e2e-%[1]s`+configMapRule+`
applications:
  - name: %[1]s-app
    chart: charts/app
    rules:
      - apiGroups: [%[2]s]
        resources: [widgets]
        verbs: [get, list, watch, create, update, patch, delete]
    tenantRoles:
      admin:
        - apiGroups: [%[2]s]
          resources: [widgets]
          verbs: [create, patch, delete]
`, name, group, deps, provides), chart{dir: "charts/web"}, chart{dir: "charts/app"})
	}
	rolesNaming := func(group string) []string {
		var list rbacv1.ClusterRoleList
		if err := c.List(ctxT(t), &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range list.Items {
			for _, rule := range r.Rules {
				for _, g := range rule.APIGroups {
					if g == group {
						out = append(out, r.Name)
					}
				}
			}
		}
		return out
	}

	// No dependency: the build refuses it, naming the field.
	nodep := "rgnodep"
	dir := depCatalog(nodep, victimGroup, "[]", "")
	target := t.TempDir()
	if _, err := buildInto(t, dir, target); err == nil || !strings.Contains(err.Error(), `applications[0].tenantRoles.admin[0].apiGroups: Invalid value: "`+victimGroup+`": is not in provides.apiGroups and the catalog depends on no catalog`) {
		t.Fatalf("build of %s: %v, want the tenant role refused", nodep, err)
	}
	// Forged past the build (built with a group of its own, then
	// rewritten), it is refused at pull.
	forged := forge(t, depCatalog(nodep, "nodep.example.org", "[]", "\nprovides:\n  apiGroups: [nodep.example.org]"), "1.0.0", func(cat map[string]any) {
		cat["provides"] = map[string]any{}
		app := cat["applications"].([]any)[0].(map[string]any)
		app["rules"].([]any)[0].(map[string]any)["apiGroups"] = []any{victimGroup}
		app["tenantRoles"].(map[string]any)["admin"].([]any)[0].(map[string]any)["apiGroups"] = []any{victimGroup}
	}, nil)
	create(t, layoutSource(nodep, forged, "1.0.0"))
	ps := waitSource(t, nodep, "InvalidArtifact", sourceReady(False, v1alpha1.ReasonInvalidArtifact))
	mustContain(t, "message", ready(ps.Status.Conditions).Message, "applications[0].tenantRoles.admin[0].apiGroups", victimGroup, "provides.sharedAPIGroups")

	// A dependency that does not share the group: APIGroupNotGranted.
	bad := "rgdepbad"
	push(t, depCatalog(bad, victimGroup, "["+groupVictim+"]", ""), "e2e/"+bad, "1.0.0")
	create(t, ociSource(bad, "e2e/"+bad, "1.0.0"))
	ps = waitSource(t, bad, "APIGroupNotGranted", sourceReady(False, v1alpha1.ReasonAPIGroupNotGranted))
	msg := ready(ps.Status.Conditions).Message
	mustContain(t, "message", msg, "applications[0].rules[0].apiGroups names API group "+victimGroup+" (and 1 more rules)",
		groupVictim+" (PackageSource "+groupVictim+", sharedAPIGroups ["+openGroup+"])", "it belongs to catalog "+groupVictim+" of PackageSource "+groupVictim,
		"provides.sharedAPIGroups", "none of its charts was published")
	t.Logf("rgdepbad: %s", msg)
	if eas := artifactsOf(t, bad); len(eas) > 0 {
		t.Errorf("the refused catalog published %d ExternalArtifacts", len(eas))
	}

	// A dependency that shares it: accepted, and its roles written.
	good := "rgdepgood"
	push(t, depCatalog(good, openGroup, "["+groupVictim+"]", ""), "e2e/"+good, "1.0.0")
	create(t, ociSource(good, "e2e/"+good, "1.0.0"))
	waitSource(t, good, "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	eventually(t, "the shared group's roles", func() error {
		if len(rolesNaming(openGroup)) == 0 {
			return fmt.Errorf("no ClusterRole names %s", openGroup)
		}
		return nil
	})

	time.Sleep(12 * time.Second) // the refused sources retry first
	if roles := rolesNaming(victimGroup); len(roles) > 0 {
		t.Errorf("ClusterRoles grant the victim's group %s: %v", victimGroup, roles)
	}
	sameFingerprints(t, before, fingerprint())
}
