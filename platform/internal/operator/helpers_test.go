package operator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/sdk/testenv"
)

// timeout bounds every wait for the operator or helm-controller.
const timeout = 90 * time.Second

// demoCatalog is the acceptance catalog: contracts' test catalog (two
// components, one privileged, one with a library vendored into it, and an
// application chart), whose charts admit the keys K2 and Helm add (K4).
const demoCatalog = "../../../contracts/artifact/testdata/catalog"

// ctxT returns a context bounded by timeout and cancelled at cleanup.
func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*timeout)
	t.Cleanup(cancel)
	return ctx
}

// k returns a client knowing the operator's kinds.
func k(t *testing.T) client.Client {
	t.Helper()
	testenv.Need(t, env) // skips under -short, where no control plane runs
	c, err := client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chart is one chart directory of a test catalog.
type chart struct {
	// dir is the chart directory relative to the catalog, e.g. "charts/a".
	dir string
	// values is values.yaml; templates maps file names under templates/
	// to their content (default: valuesConfigMap).
	values    string
	templates map[string]string
}

// valuesConfigMap renders a ConfigMap named after the release holding
// every scalar value that does not start with "_" (K2's keys do).
const valuesConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
{{- range $k, $v := .Values }}
{{- if not (hasPrefix "_" $k) }}
  {{ $k }}: {{ $v | toString | quote }}
{{- end }}
{{- end }}
`

// writeCatalog writes catalogYAML and the charts into a fresh directory
// and returns it.
func writeCatalog(t *testing.T, catalogYAML string, charts ...chart) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(artifact.CatalogFile, catalogYAML)
	for _, c := range charts {
		name := filepath.Base(c.dir)
		write(filepath.Join(c.dir, "Chart.yaml"), fmt.Sprintf("apiVersion: v2\nname: %s\nversion: 0.1.0\n", name))
		write(filepath.Join(c.dir, "values.yaml"), c.values)
		tpls := c.templates
		if tpls == nil {
			tpls = map[string]string{"configmap.yaml": valuesConfigMap}
		}
		for f, body := range tpls {
			write(filepath.Join(c.dir, "templates", f), body)
		}
	}
	return dir
}

// push builds the catalog in dir and pushes it to the test registry as
// repo:tag (repo without host), returning the build result.
func push(t *testing.T, dir, repo, tag string) *build.Result {
	t.Helper()
	target, _, err := artifact.NewRepository(env.RegistryHost()+"/"+repo+":"+tag, artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(ctxT(t), dir, target, build.Options{Tag: tag})
	if err != nil {
		t.Fatalf("build and push %s: %v", dir, err)
	}
	return res
}

// ociSource returns a PackageSource for repo:tag in the test registry.
func ociSource(name, repo, tag string) *v1alpha1.PackageSource {
	return &v1alpha1.PackageSource{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.PackageSourceSpec{OCI: &v1alpha1.OCISource{
			Repository: env.RegistryHost() + "/" + repo, Tag: tag, PlainHTTP: true,
		}},
	}
}

// newPackage returns a Package of source with variant and allowPrivileged.
func newPackage(name, source, variant string, privileged bool) *v1alpha1.Package {
	return &v1alpha1.Package{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.PackageSpec{
			SourceRef: v1alpha1.PackageSourceReference{Name: source}, Variant: variant, AllowPrivileged: privileged,
		},
	}
}

// create creates obj and deletes it at cleanup (Packages before sources:
// cleanups run in reverse).
func create(t *testing.T, obj client.Object) {
	t.Helper()
	c := k(t)
	if err := c.Create(ctxT(t), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete %s: %v", obj.GetName(), err)
		}
		// Wait until gone, so the next test starts clean.
		_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
			return apierrors.IsNotFound(err), nil
		})
	})
}

// ready returns the Ready condition of conds, or nil.
func ready(conds []metav1.Condition) *metav1.Condition {
	return apimeta.FindStatusCondition(conds, v1alpha1.ConditionReady)
}

// waitSource waits until cond holds for PackageSource name and returns it.
func waitSource(t *testing.T, name string, what string, cond func(*v1alpha1.PackageSource) bool) *v1alpha1.PackageSource {
	t.Helper()
	c := k(t)
	var ps v1alpha1.PackageSource
	err := wait.PollUntilContextTimeout(ctxT(t), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &ps); err != nil {
			return false, nil
		}
		return cond(&ps), nil
	})
	if err != nil {
		t.Fatalf("PackageSource %s: never %s; status: %+v", name, what, ps.Status.Conditions)
	}
	return &ps
}

// waitPackage waits until cond holds for Package name and returns it.
func waitPackage(t *testing.T, name string, what string, cond func(*v1alpha1.Package) bool) *v1alpha1.Package {
	t.Helper()
	c := k(t)
	var p v1alpha1.Package
	err := wait.PollUntilContextTimeout(ctxT(t), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &p); err != nil {
			return false, nil
		}
		return cond(&p), nil
	})
	if err != nil {
		t.Fatalf("Package %s: never %s; status: %+v", name, what, p.Status)
	}
	return &p
}

// hasReason returns a condition on Ready's reason (and status False unless
// reason is a success reason the caller passes with wantTrue).
func readyIs(status metav1.ConditionStatus, reason string) func([]metav1.Condition, int64) bool {
	return func(conds []metav1.Condition, gen int64) bool {
		c := ready(conds)
		return c != nil && c.Status == status && c.Reason == reason && c.ObservedGeneration == gen
	}
}

func sourceReady(status metav1.ConditionStatus, reason string) func(*v1alpha1.PackageSource) bool {
	f := readyIs(status, reason)
	return func(ps *v1alpha1.PackageSource) bool { return f(ps.Status.Conditions, ps.Generation) }
}

// packageReady is readyIs on a Package. Installed also waits for the status fields written with it: the patch
// helper (fluxcd/pkg/runtime/patch) writes the conditions first and the
// rest of the status in a second request, so a reader can see Ready=True
// Installed before installedRevision and the components' readiness.
func packageReady(status metav1.ConditionStatus, reason string) func(*v1alpha1.Package) bool {
	f := readyIs(status, reason)
	return func(p *v1alpha1.Package) bool {
		if !f(p.Status.Conditions, p.Generation) {
			return false
		}
		if status != metav1.ConditionTrue || reason != v1alpha1.ReasonInstalled {
			return true
		}
		if p.Status.InstalledRevision == "" {
			return false
		}
		for _, c := range p.Status.Components {
			if !c.Ready {
				return false
			}
		}
		return true
	}
}

// mustContain fails unless s contains every one of subs.
func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s %q does not contain %q", what, s, sub)
		}
	}
}

// artifactsOf lists the ExternalArtifacts published for source.
func artifactsOf(t *testing.T, source string) []sourcev1.ExternalArtifact {
	t.Helper()
	var list sourcev1.ExternalArtifactList
	if err := k(t).List(ctxT(t), &list, client.InNamespace(v1alpha1.SystemNamespace),
		client.MatchingLabels{names.LabelPackageSource: names.LabelValue(source)}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// ownedObjects lists everything labelled as Package pkg's, by kind.
func ownedObjects(t *testing.T, pkg string) []string {
	t.Helper()
	c := k(t)
	sel := client.MatchingLabels{names.LabelPackage: names.LabelValue(pkg)}
	var out []string
	lists := map[string]client.ObjectList{
		"HelmRelease": &helmv2.HelmReleaseList{}, "ConfigMap": &corev1.ConfigMapList{}, "ServiceAccount": &corev1.ServiceAccountList{},
		"Role": &rbacv1.RoleList{}, "RoleBinding": &rbacv1.RoleBindingList{}, "ClusterRole": &rbacv1.ClusterRoleList{},
		"ClusterRoleBinding": &rbacv1.ClusterRoleBindingList{},
	}
	for kind, l := range lists {
		if err := c.List(ctxT(t), l, sel); err != nil {
			t.Fatal(err)
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			o := it.(client.Object)
			out = append(out, kind+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	return out
}

// expectNothingInstalled fails if Package pkg has any object.
func expectNothingInstalled(t *testing.T, pkg string) {
	t.Helper()
	if objs := ownedObjects(t, pkg); len(objs) > 0 {
		t.Errorf("Package %s was refused but has objects: %v", pkg, objs)
	}
}

// helmRelease returns the HelmRelease of component of pkg.
func helmRelease(t *testing.T, pkg, component, namespace string) (*helmv2.HelmRelease, error) {
	t.Helper()
	var hr helmv2.HelmRelease
	err := k(t).Get(ctxT(t), client.ObjectKey{Namespace: namespace, Name: names.HelmRelease(pkg, component)}, &hr)
	return &hr, err
}

// waitGone waits until obj no longer exists.
func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	c := k(t)
	err := wait.PollUntilContextTimeout(ctxT(t), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)), nil
	})
	if err != nil {
		t.Fatalf("%T %s/%s never went away", obj, obj.GetNamespace(), obj.GetName())
	}
}
