package operator_test

// docs/operator/catalogs.md, "Catalog delivery", "Ownership": the operator decides
// ownership by the controller
// reference to the Package's UID, never by labels or annotations, which a
// tenant can set on its own objects (an application's labels reach its
// HelmRelease).

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/operator/packagereconciler"
)

// tenantFinalizer is a finalizer a tenant puts on its own object, which
// would hold the operator's prune forever if it deleted the object.
const tenantFinalizer = "example.org/tenant-hold"

// lookalike returns the metadata of an object a tenant made to look like
// component comp of Package pkg's: every label and the annotation the
// operator sets, no owner reference.
func lookalike(namespace, name, pkg, comp string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels: map[string]string{
			v1alpha1.LabelManagedBy: v1alpha1.ManagedByOperator, names.LabelPackage: names.LabelValue(pkg), names.LabelComponent: comp,
		},
		Annotations: map[string]string{names.AnnotationPackage: pkg},
	}
}

// suspendedRelease is a HelmRelease helm-controller leaves alone.
func suspendedRelease(meta metav1.ObjectMeta) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{ObjectMeta: meta, Spec: helmv2.HelmReleaseSpec{
		Suspend: true, Interval: metav1.Duration{Duration: time.Hour},
		ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.ExternalArtifactKind, Name: "not-ours"},
	}}
}

// createTenantObject creates obj and, at cleanup, removes its finalizers
// and deletes it.
func createTenantObject(t *testing.T, obj client.Object) {
	t.Helper()
	c := k(t)
	if err := c.Create(ctxT(t), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cur := obj.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
			return
		}
		if len(cur.GetFinalizers()) > 0 {
			patch := client.MergeFrom(cur.DeepCopyObject().(client.Object))
			cur.SetFinalizers(nil)
			_ = c.Patch(ctx, cur, patch)
		}
		_ = c.Delete(ctx, cur)
	})
}

// expectUntouched fails unless obj (as created) is unchanged: not being
// deleted, no owner reference, the same labels, annotations and finalizers,
// and the same resourceVersion, or for a HelmRelease (which
// helm-controller finalizes and writes the status of) the same generation.
func expectUntouched(t *testing.T, obj client.Object) {
	t.Helper()
	cur := obj.DeepCopyObject().(client.Object)
	if err := k(t).Get(ctxT(t), client.ObjectKeyFromObject(obj), cur); err != nil {
		t.Errorf("%T %s/%s: %v", obj, obj.GetNamespace(), obj.GetName(), err)
		return
	}
	finalizers := slices.DeleteFunc(slices.Clone(cur.GetFinalizers()), func(f string) bool { return f == "finalizers.fluxcd.io" })
	same := cur.GetResourceVersion() == obj.GetResourceVersion()
	if _, ok := obj.(*helmv2.HelmRelease); ok {
		same = cur.GetGeneration() == obj.GetGeneration()
	}
	if !same || len(cur.GetOwnerReferences()) > 0 || cur.GetDeletionTimestamp() != nil ||
		!maps.Equal(cur.GetLabels(), obj.GetLabels()) || !maps.Equal(cur.GetAnnotations(), obj.GetAnnotations()) ||
		!slices.Equal(finalizers, obj.GetFinalizers()) {
		t.Errorf("%T %s/%s was touched: resourceVersion %s generation %d (created as %s, %d), owner references %+v, deletion %v, finalizers %v, labels %v, annotations %v",
			obj, obj.GetNamespace(), obj.GetName(), cur.GetResourceVersion(), cur.GetGeneration(), obj.GetResourceVersion(), obj.GetGeneration(),
			cur.GetOwnerReferences(), cur.GetDeletionTimestamp(), cur.GetFinalizers(), cur.GetLabels(), cur.GetAnnotations())
	}
}

// controlledObjects lists the objects whose controller reference carries
// uid, in namespace and cluster-wide, by kind.
func controlledObjects(t *testing.T, uid types.UID, namespace string) []string {
	t.Helper()
	c := k(t)
	var out []string
	for kind, l := range map[string]client.ObjectList{
		"HelmRelease": &helmv2.HelmReleaseList{}, "ConfigMap": &corev1.ConfigMapList{}, "ServiceAccount": &corev1.ServiceAccountList{},
		"Role": &rbacv1.RoleList{}, "RoleBinding": &rbacv1.RoleBindingList{},
	} {
		if err := c.List(ctxT(t), l, client.InNamespace(namespace)); err != nil {
			t.Fatal(err)
		}
		if err := apimeta.EachListItem(l, func(obj runtime.Object) error {
			o, err := apimeta.Accessor(obj)
			if err != nil {
				return err
			}
			if ref := metav1.GetControllerOf(o); ref != nil && ref.UID == uid {
				out = append(out, kind+" "+o.GetName())
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

// twoComponentCatalog is a catalog of components web and extra, both in
// namespace, each rendering a ConfigMap of its values.
func twoComponentCatalog(t *testing.T, name, namespace string) string {
	t.Helper()
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
        namespace: %[2]s`+configMapRule+`
      - name: extra
        chart: charts/extra
        namespace: %[2]s`+configMapRule+`
        values: {greeting: catalog}
`, name, namespace), chart{dir: "charts/web", values: "greeting: web\n"}, chart{dir: "charts/extra", values: "greeting: extra\n"})
}

// TestPruneSparesLabelledObjects (prune): objects in a component's
// namespace carrying every label and the annotation of the Package, one of
// them the component about to be removed, but no owner reference, survive
// a reconcile, the component's removal and the Package's deletion; the
// Package stays Ready (it never waits for them to go).
func TestPruneSparesLabelledObjects(t *testing.T) {
	start(t)
	c := k(t)
	const ns = "e2e-own-prune"
	create(t, packageNamespace(ns, "own-prune"))
	push(t, twoComponentCatalog(t, "own-prune", ns), "e2e/own-prune", "1.0.0")
	create(t, ociSource("own-prune", "e2e/own-prune", "1.0.0"))
	p := newPackage("own-prune", "own-prune", "", false)
	create(t, p)
	waitPackage(t, "own-prune", "Installed", packageReady(True, v1alpha1.ReasonInstalled))

	// What a tenant with rights in the namespace (or an application whose
	// labels reach its HelmRelease) can make.
	hr := suspendedRelease(lookalike(ns, "tenant-app", "own-prune", "extra"))
	hr.Finalizers = []string{tenantFinalizer}
	cm := &corev1.ConfigMap{ObjectMeta: lookalike(ns, "tenant-values", "own-prune", "extra"), Data: map[string]string{"k": "v"}}
	sa := &corev1.ServiceAccount{ObjectMeta: lookalike(ns, "tenant-sa", "own-prune", "web")}
	role := &rbacv1.Role{ObjectMeta: lookalike(ns, "tenant-role", "own-prune", "extra")}
	decoys := []client.Object{hr, cm, sa, role}
	for _, o := range decoys {
		createTenantObject(t, o)
	}

	// A reconcile that prunes: disable extra.
	if err := c.Get(ctxT(t), client.ObjectKey{Name: "own-prune"}, p); err != nil {
		t.Fatal(err)
	}
	p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{"extra": {Enabled: ptr.To(false)}}
	if err := c.Update(ctxT(t), p); err != nil {
		t.Fatal(err)
	}
	extra := names.HelmRelease("own-prune", "extra")
	waitGone(t, &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: extra}})
	waitGone(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.Installer("own-prune", "extra")}})
	waitGone(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.CatalogValues("own-prune", "extra")}})
	got := waitPackage(t, "own-prune", "Installed with one component", func(p *v1alpha1.Package) bool {
		return packageReady(True, v1alpha1.ReasonInstalled)(p) && len(p.Status.Components) == 1
	})
	if want := []string{names.StorageNamespace("own-prune"), ns}; !slices.Equal(got.Status.Namespaces, want) {
		t.Errorf("status.namespaces = %v, want %v (the components' and the release storage)", got.Status.Namespaces, want)
	}
	for _, o := range decoys {
		expectUntouched(t, o)
	}
	if _, err := helmRelease(t, "own-prune", "web", ns); err != nil {
		t.Errorf("the still enabled web lost its HelmRelease: %v", err)
	}

	// Deleting the Package removes its own objects only.
	uid := got.UID
	if err := c.Delete(ctxT(t), p); err != nil {
		t.Fatal(err)
	}
	waitGone(t, p)
	if left := controlledObjects(t, uid, ns); len(left) > 0 {
		t.Errorf("after deleting the Package its objects remain: %v", left)
	}
	for _, o := range decoys {
		expectUntouched(t, o)
	}
}

// TestLabelledObjectInTheWayIsNotAdopted (adopt): an object with the
// Package's labels and annotation and the name of one it would write is
// reported as a Conflict naming it, and never given an owner reference nor
// updated; one that is not in the way is not reported. Once it is gone the
// Package installs, and its own object carries its controller reference.
func TestLabelledObjectInTheWayIsNotAdopted(t *testing.T) {
	start(t)
	const ns = "e2e-own-adopt"
	create(t, packageNamespace(ns, "own-adopt"))
	installer := names.Installer("own-adopt", "web")
	inTheWay := &corev1.ServiceAccount{ObjectMeta: lookalike(ns, installer, "own-adopt", "web")}
	bystander := &corev1.ConfigMap{ObjectMeta: lookalike(ns, "bystander", "own-adopt", "web"), Data: map[string]string{"k": "v"}}
	createTenantObject(t, inTheWay)
	createTenantObject(t, bystander)

	push(t, simpleCatalog(t, "own-adopt", "1.0.0", ns, "x"), "e2e/own-adopt", "1.0.0")
	create(t, ociSource("own-adopt", "e2e/own-adopt", "1.0.0"))
	p := newPackage("own-adopt", "own-adopt", "", false)
	create(t, p)
	got := waitPackage(t, "own-adopt", "Conflict", packageReady(False, v1alpha1.ReasonConflict))
	msg := ready(got.Status.Conditions).Message
	mustContain(t, "message", msg, "ServiceAccount "+ns+"/"+installer+" (component web) exists and belongs to no Package",
		"no controller reference", "never overwritten or adopted", "nothing was installed")
	if strings.Contains(msg, "bystander") {
		t.Errorf("the message names an object not in the way: %q", msg)
	}
	expectUntouched(t, inTheWay)
	expectUntouched(t, bystander)
	if left := controlledObjects(t, got.UID, ns); len(left) > 0 {
		t.Errorf("the refused Package wrote %v", left)
	}

	// Gone: the Package installs (it looks again by itself), its own
	// ServiceAccount in place, the bystander still untouched.
	if err := k(t).Delete(ctxT(t), inTheWay); err != nil {
		t.Fatal(err)
	}
	got = waitPackage(t, "own-adopt", "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	var own corev1.ServiceAccount
	if err := k(t).Get(ctxT(t), client.ObjectKey{Namespace: ns, Name: installer}, &own); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(&own); ref == nil || ref.UID != got.UID || !slices.Contains(own.Finalizers, packagereconciler.IdentityFinalizer) {
		t.Errorf("the Package's ServiceAccount: controller %+v, finalizers %v; want the Package's UID %s and %s", ref, own.Finalizers, got.UID, packagereconciler.IdentityFinalizer)
	}
	expectUntouched(t, bystander)
}

// TestApplicationReleaseInTheWay (stall): an application's HelmRelease (as
// cozystack-api stores it, K1 labels, copied operator labels) that took a
// component's name before the name was reserved is never touched: the
// component, though privileged, may not install into the tenant's
// namespace at all (NamespaceNotAllowed, naming the tenant). The name is
// one cozystack-api refuses to applications now.
func TestApplicationReleaseInTheWay(t *testing.T) {
	start(t)
	const ns = "e2e-own-tenant"
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{v1alpha1.LabelTenant: "own"}}})
	release := names.HelmRelease("own-stall", "web")
	if !names.ReservedRelease(release) {
		t.Fatalf("%s is not reserved: cozystack-api would let an application take it", release)
	}
	meta := lookalike(ns, release, "own-stall", "web")
	meta.Labels[v1alpha1.LabelApplicationKind] = "Postgres"
	meta.Labels[v1alpha1.LabelApplicationName] = release
	meta.Labels["apps.cozystack.io/application.group"] = "apps.cozystack.io"
	app := suspendedRelease(meta)
	app.Finalizers = []string{tenantFinalizer}
	createTenantObject(t, app)

	// No component installs into a tenant's namespace, privileged or not
	// (privileged components go through the namespace check
	// too), so the application's release is never reached.
	push(t, privilegedCatalog(t, "own-stall", "1.0.0", ns, "x"), "e2e/own-stall", "1.0.0")
	create(t, ociSource("own-stall", "e2e/own-stall", "1.0.0"))
	create(t, newPackage("own-stall", "own-stall", "", true))
	got := waitPackage(t, "own-stall", "NamespaceNotAllowed", packageReady(False, v1alpha1.ReasonNamespaceNotAllowed))
	mustContain(t, "message", ready(got.Status.Conditions).Message,
		"component web: namespace "+ns+` belongs to the tenant "own"`)
	expectUntouched(t, app)
	if left := controlledObjects(t, got.UID, ns); len(left) > 0 {
		t.Errorf("the refused Package wrote %v", left)
	}
}

// holdRelease adds a test finalizer to HelmRelease ns/name, so it stays
// after helm-controller has uninstalled it, and returns the function that
// removes it.
func holdRelease(t *testing.T, ns, name string) func() {
	t.Helper()
	c := k(t)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		hr := &helmv2.HelmRelease{}
		if err := c.Get(ctxT(t), client.ObjectKey{Namespace: ns, Name: name}, hr); err != nil {
			return err
		}
		hr.Finalizers = append(hr.Finalizers, tenantFinalizer)
		return c.Update(ctxT(t), hr)
	}); err != nil {
		t.Fatal(err)
	}
	// An update with the resourceVersion just read, retried on conflict:
	// a merge patch of the finalizers would write back a stale list, and
	// could restore helm-controller's finalizer after it removed it.
	release := func() {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &helmv2.HelmRelease{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cur); err != nil {
				return client.IgnoreNotFound(err)
			}
			if !slices.Contains(cur.Finalizers, tenantFinalizer) {
				return nil
			}
			cur.Finalizers = slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == tenantFinalizer })
			return client.IgnoreNotFound(c.Update(context.Background(), cur))
		})
		if err != nil {
			t.Logf("releasing HelmRelease %s/%s: %v", ns, name, err)
		}
	}
	t.Cleanup(release)
	return release
}

// expectIdentityOutlivesRelease waits until the garbage collector (or
// anyone) has deleted the identity of component web of Package pkg, and
// fails unless it is still there, held by IdentityFinalizer, while the
// HelmRelease (held by the test) exists and its chart is uninstalled:
// helm-controller skips the uninstall when the ServiceAccount is missing.
func expectIdentityOutlivesRelease(t *testing.T, pkgName, ns string) {
	t.Helper()
	c := k(t)
	installer := names.Installer(pkgName, "web")
	for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		err := wait.PollUntilContextTimeout(ctxT(t), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: installer}, obj)
			return err != nil || obj.GetDeletionTimestamp() != nil, nil
		})
		if err != nil {
			t.Fatalf("%T %s/%s was never deleted", obj, ns, installer)
		}
		if err := c.Get(ctxT(t), client.ObjectKey{Namespace: ns, Name: installer}, obj); err != nil {
			t.Fatalf("%T %s/%s went before its HelmRelease: %v", obj, ns, installer, err)
		}
		if !slices.Contains(obj.GetFinalizers(), packagereconciler.IdentityFinalizer) {
			t.Errorf("%T %s/%s is held by %v, want %s", obj, ns, installer, obj.GetFinalizers(), packagereconciler.IdentityFinalizer)
		}
	}
	release := names.HelmRelease(pkgName, "web")
	if _, err := helmRelease(t, pkgName, "web", ns); err != nil {
		t.Fatalf("the HelmRelease held by the test: %v", err)
	}
	waitGone(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: release}})
}

// installHeld installs Package name (a simple catalog of the same name,
// component web in ns), waits until it is Installed and holds its
// HelmRelease (holdRelease). It returns the Package as created, as Ready,
// and the function that releases the HelmRelease.
func installHeld(t *testing.T, name, ns string) (created, ready *v1alpha1.Package, unhold func()) {
	t.Helper()
	start(t)
	push(t, simpleCatalog(t, name, "1.0.0", ns, "x"), "e2e/"+name, "1.0.0")
	create(t, ociSource(name, "e2e/"+name, "1.0.0"))
	created = newPackage(name, name, "", false)
	create(t, created)
	ready = waitPackage(t, name, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	return created, ready, holdRelease(t, ns, names.HelmRelease(name, "web"))
}

// TestForegroundDeletionUninstalls: deleting a Package in the foreground
// lets the garbage collector delete its HelmReleases and identities at
// once; the identities' finalizer keeps them until helm-controller has
// uninstalled through them, so the chart's objects go and nothing is left.
func TestForegroundDeletionUninstalls(t *testing.T) {
	c := k(t)
	const ns = "e2e-own-foreground"
	p, got, unhold := installHeld(t, "own-fg", ns)

	if err := c.Delete(ctxT(t), p, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	expectIdentityOutlivesRelease(t, "own-fg", ns)
	unhold()
	waitGone(t, p)
	if left := controlledObjects(t, got.UID, ns); len(left) > 0 {
		t.Errorf("after the foreground deletion these remain: %v", left)
	}
}

// TestFinalizerBypassUninstalls: a Package whose finalizer someone removes
// goes at once; the garbage collector deletes what it owned, and the
// identities stay until the HelmRelease is uninstalled, then go too
// (released by the owner references of what the Package left).
func TestFinalizerBypassUninstalls(t *testing.T) {
	c := k(t)
	const ns = "e2e-own-bypass"
	p, got, unhold := installHeld(t, "own-bypass", ns)

	if err := c.Delete(ctxT(t), p); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: p.Name}, p); err == nil {
		patch := client.MergeFrom(p.DeepCopy())
		p.Finalizers = nil
		if err := c.Patch(ctxT(t), p, patch); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	waitGone(t, p)
	expectIdentityOutlivesRelease(t, "own-bypass", ns)
	unhold()
	for _, obj := range []client.Object{
		&helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.HelmRelease("own-bypass", "web")}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.Installer("own-bypass", "web")}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.Installer("own-bypass", "web")}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.Installer("own-bypass", "web")}},
	} {
		waitGone(t, obj)
	}
	if left := controlledObjects(t, got.UID, ns); len(left) > 0 {
		t.Errorf("after the bypass these remain: %v", left)
	}
}
