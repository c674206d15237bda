package applicationdefinitions_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/conformance"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/sdk/localcp"
)

// webChart is an application chart rendering one Deployment, with no
// replica by default: no pod runs on the test's control plane (no
// scheduler, no kubelet), so a Deployment that wants ready replicas never
// is ready, while one with none is, once its ReplicaSet exists: Helm's
// wait lists it all the same.
var webChart = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\ntype: application\n",
	"values.yaml": "replicas: 0\n",
	"values.schema.json": `{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "replicas": {"description": "Pods of the Deployment.", "type": "integer", "minimum": 0, "maximum": 10, "default": 0},
    "_cluster": {"type": "object"},
    "_namespace": {"type": "object"}
  }
}
`,
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas | int }}
  selector:
    matchLabels: {app: {{ .Release.Name | quote }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name | quote }}}
    spec:
      securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: web
          image: nginx:1.27
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`,
}

// webCatalog writes catalog source, whose application web (kind, plural,
// prefix) installs webChart with rules, to a new directory.
func webCatalog(t *testing.T, source, kind, plural, prefix, rules string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"catalog.yaml": fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %s
version: 0.1.0
minPlatformVersion: 0.1.0
provides:
  applicationKinds: [%s]
applications:
  - name: web
    chart: charts/web
    kind: %s
    rules:
%s`, source, kind, kind, rules),
		"applicationdefinitions/web.yaml": fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: %[2]s
spec:
  application:
    kind: %[1]s
    singular: %[3]s
    plural: %[2]s
    openAPISchema: |-
      {"type":"object","additionalProperties":false,"properties":{"replicas":{"description":"Pods of the Deployment.","type":"integer","minimum":0,"maximum":10,"default":0}}}
  release:
    prefix: %[4]s
    source: %[5]s
    component: web
  dashboard:
    category: PaaS
    singular: %[1]s
    plural: %[1]ss
    description: A Deployment
    tags: [web]
    weight: 10
    icon: PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHdpZHRoPSIxNDQiIGhlaWdodD0iMTQ0IiB2aWV3Qm94PSIwIDAgMTQ0IDE0NCI+PHJlY3Qgd2lkdGg9IjE0NCIgaGVpZ2h0PSIxNDQiIHJ4PSIyNCIgZmlsbD0iIzNiODJmNiIvPjwvc3ZnPg==
    keysOrder: [["apiVersion"], ["kind"], ["metadata"], ["metadata", "name"], ["spec", "replicas"]]
`, kind, plural, strings.TrimSuffix(plural, "s"), prefix, source),
	}
	for name, body := range webChart {
		files["charts/web/"+name] = body
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// installWebCatalog installs the catalog in dir as the operator would: its
// chart published, its definitions and roles applied.
func installWebCatalog(t *testing.T, ctx context.Context, c client.Client, srv *localcp.ArtifactServer, dir string) *artifact.Catalog {
	t.Helper()
	cat, err := artifact.LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := localcp.ChartArchive("web", webChart)
	if err != nil {
		t.Fatal(err)
	}
	publishArtifact(t, ctx, c, srv.Publish(cat.Name+"/web.tgz", "0.1.0", data), v1alpha1.ComponentArtifactName(cat.Name, "web"))
	adFile := filepath.Join(dir, "applicationdefinitions", "web.yaml")
	raw, err := os.ReadFile(adFile)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := artifact.DecodeDefinitionFile("applicationdefinitions/web.yaml", raw)
	if err != nil {
		t.Fatal(err)
	}
	roles, err := adinstaller.Roles(cat, cat.Name, defs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adinstaller.Install(ctx, c, cat.Name, append(defs, roles...)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = adinstaller.Install(ctx, c, cat.Name, nil)
	})
	return cat
}

const deploymentRule = "      - {apiGroups: [apps], resources: [deployments], verbs: [get, list, watch, create, update, patch, delete]}\n"

// TestDeploymentChartInstalls (K4-application-rights,
// contracts/schemas/v1alpha1/k4-values.md; docs/operator/tenants.md, "Tenants: who may do
// what"): an application chart rendering a Deployment, whose catalog
// declares rules for Deployments only, fails conformance with the fix
// naming the ReplicaSets rule, because Helm's readiness wait lists the
// Deployment's ReplicaSets as the release's installer; installed anyway,
// its application says Forbidden naming that rule. With the rule the fix
// names, the catalog passes conformance and its application installs
// Ready through helm-controller with the application's default wait
// settings (the HelmRelease waits: Helm lists the ReplicaSets as the
// installer). The control plane runs no deployment controller and no pod,
// so the test creates the Deployment's ReplicaSet as that controller would
// (actAsDeploymentController), and the chart asks for no replica.
func TestDeploymentChartInstalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	narrowDir := webCatalog(t, "narrowapps", "Narrow", "narrows", "narrow-", deploymentRule)
	r, err := conformance.CheckDir(narrowDir, conformance.Options{PlatformVersion: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	const replicaSetsRule = "{apiGroups: [apps], resources: [replicasets], verbs: [get, list, watch]}"
	var fix string
	for _, f := range r.Errors() {
		if f.RuleID == "K4-application-rights" && strings.Contains(f.Fix, replicaSetsRule) {
			fix = f.Fix
		}
	}
	if r.Passed() || fix == "" {
		t.Fatalf("conformance of a Deployment without the ReplicaSets rule: passed %v, findings %v; want a K4-application-rights error naming %s", r.Passed(), r.Findings, replicaSetsRule)
	}
	webDir := webCatalog(t, "webapps", "Web", "webs", "web-", deploymentRule+"      - "+replicaSetsRule+"\n")
	if r, err := conformance.CheckDir(webDir, conformance.Options{PlatformVersion: "0.1.0"}); err != nil || !r.Passed() || len(r.Findings) > 0 {
		t.Fatalf("conformance of the catalog with the rule the fix names (%s): %v, %v", fix, err, r.Findings)
	}

	c, dyn := setupPlatform(t, ctx)
	srv, err := localcp.NewArtifactServer()
	if err != nil {
		t.Fatal(err)
	}
	narrow := installWebCatalog(t, ctx, c, srv, narrowDir)
	web := installWebCatalog(t, ctx, c, srv, webDir)
	if err := createTenant(ctx, dyn)("tenant-root", "dep", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	const ns = "tenant-dep"
	for _, cat := range []*artifact.Catalog{narrow, web} {
		waitInstallerMay(t, ctx, c, ns, cat.Name, "apps", "deployments", "create")
	}
	waitInstallerMay(t, ctx, c, ns, web.Name, "apps", "replicasets", "list")

	narrows := schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "narrows"}
	webs := schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "webs"}
	createKind(t, ctx, dyn, narrows, "Narrow", ns, "one")
	createKind(t, ctx, dyn, webs, "Web", ns, "one")

	var message string
	eventually(t, ctx, "Narrow one Ready=False/Forbidden", func() error {
		ready, msg, err := readyOf(ctx, dyn, narrows, ns, "one")
		if err != nil {
			return err
		}
		if ready != "False/Forbidden" {
			return fmt.Errorf("Ready %s: %s", ready, msg)
		}
		message = msg
		return nil
	})
	for _, want := range []string{"may not list replicasets.apps (in namespace tenant-dep)", "system:serviceaccount:tenant-dep:cozy-installer-narrowapps",
		"the rule to add is " + replicaSetsRule} {
		if !strings.Contains(message, want) {
			t.Errorf("Forbidden message %q lacks %q", message, want)
		}
	}
	t.Logf("Narrow one: %s", message)

	eventually(t, ctx, "Web one Ready=True", func() error {
		if err := actAsDeploymentController(ctx, c, ns, "web-one"); err != nil {
			return err
		}
		ready, msg, err := readyOf(ctx, dyn, webs, ns, "one")
		if err != nil {
			return err
		}
		if strings.HasPrefix(ready, "False/Forbidden") {
			t.Fatalf("Web one: %s: %s", ready, msg)
		}
		if !strings.HasPrefix(ready, "True") {
			return fmt.Errorf("Ready %s: %s", ready, msg)
		}
		return nil
	})
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-one"}, hr); err != nil {
		t.Fatal(err)
	}
	if hr.Spec.Install == nil || hr.Spec.Install.DisableWait || hr.Spec.Upgrade == nil || hr.Spec.Upgrade.DisableWait {
		t.Errorf("HelmRelease web-one does not wait: install %+v, upgrade %+v", hr.Spec.Install, hr.Spec.Upgrade)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-one"}, &appsv1.Deployment{}); err != nil {
		t.Errorf("Deployment web-one: %v", err)
	}
}

// actAsDeploymentController does for Deployment name in ns, once it
// exists, what kube-controller-manager's deployment and replicaset
// controllers would: the test's control plane runs neither
// (sdk/localcp, "--controllers") and no pod at all. It creates the
// Deployment's ReplicaSet (its template with a pod-template-hash label,
// controlled by the Deployment) and records both as observed; with no
// replica wanted, that is what Helm's readiness wait needs to see.
func actAsDeploymentController(ctx context.Context, c client.Client, ns, name string) error {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		return client.IgnoreNotFound(err)
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-0"}}
	if err := c.Get(ctx, client.ObjectKeyFromObject(rs), rs); apierrors.IsNotFound(err) {
		tmpl := *d.Spec.Template.DeepCopy()
		tmpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = "0"
		sel := d.Spec.Selector.DeepCopy()
		sel.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = "0"
		rs.Labels = tmpl.Labels
		rs.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}
		rs.Spec = appsv1.ReplicaSetSpec{Replicas: d.Spec.Replicas, Selector: sel, Template: tmpl}
		if err := c.Create(ctx, rs); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if rs.Status.ObservedGeneration != rs.Generation {
		rs.Status.ObservedGeneration = rs.Generation
		if err := c.Status().Update(ctx, rs); err != nil {
			return err
		}
	}
	if d.Status.ObservedGeneration != d.Generation {
		d.Status.ObservedGeneration = d.Generation
		return c.Status().Update(ctx, d)
	}
	return nil
}

// waitInstallerMay waits until the installer of catalog source in ns may
// verb group/resource (cozystack-controller binds it).
func waitInstallerMay(t *testing.T, ctx context.Context, c client.Client, ns, source, group, resource, verb string) {
	t.Helper()
	user := "system:serviceaccount:" + ns + ":" + v1alpha1.CatalogInstallerServiceAccount(source)
	eventually(t, ctx, user+" may "+verb+" "+resource, func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: v1alpha1.CatalogInstallerServiceAccount(source)}, &corev1.ServiceAccount{}); err != nil {
			return err
		}
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource}}}
		if err := c.Create(ctx, sar); err != nil {
			return err
		}
		if !sar.Status.Allowed {
			return fmt.Errorf("not allowed: %s", sar.Status.Reason)
		}
		return nil
	})
}

// createKind creates application name of kind (resource gvr) in ns with
// an empty spec, retrying while the kind is not served yet.
func createKind(t *testing.T, ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, kind, ns, name string) {
	t.Helper()
	eventually(t, ctx, gvr.Resource+" "+ns+"/"+name+" created", func() error {
		_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.cozystack.io/v1alpha1", "kind": kind, "metadata": map[string]any{"name": name}, "spec": map[string]any{},
		}}, metav1.CreateOptions{})
		return err
	})
}
