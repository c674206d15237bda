package packagereconciler

import (
	"slices"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

// pkgWithUID returns a Package named name with uid, as read from the API.
func pkgWithUID(name, uid string) *v1alpha1.Package {
	p := pkgOf(name, "s")
	p.UID = types.UID(uid)
	return p
}

// ref returns an owner reference to kind/name with uid, a controller's when
// controller.
func ref(apiVersion, kind, name, uid string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(controller)}
}

// labelled returns what a tenant can write: every label and annotation the
// operator sets on Package pkg's objects of component comp.
func labelled() metav1.ObjectMeta {
	m := markMeta("p", "a")
	m.Name, m.Namespace = names.HelmRelease("p", "a"), "ns-a"
	return m
}

func TestControlledBy(t *testing.T) {
	p := pkgWithUID("p", "uid-p")
	for _, tt := range []struct {
		name string
		refs []metav1.OwnerReference
		want bool
	}{
		{"the operator's controller reference", []metav1.OwnerReference{*metav1.NewControllerRef(p, packageGVK)}, true},
		{"an older operator's (SetControllerReference)", []metav1.OwnerReference{ref("cozystack.io/v1alpha1", "Package", "p", "uid-p", true)}, true},
		{"labels and annotation only", nil, false},
		{"right name, other UID", []metav1.OwnerReference{ref("cozystack.io/v1alpha1", "Package", "p", "uid-old", true)}, false},
		{"right UID, not a controller", []metav1.OwnerReference{ref("cozystack.io/v1alpha1", "Package", "p", "uid-p", false)}, false},
		{"right UID, another kind", []metav1.OwnerReference{ref("v1", "ConfigMap", "p", "uid-p", true)}, false},
		{"right UID, another group", []metav1.OwnerReference{ref("example.org/v1", "Package", "p", "uid-p", true)}, false},
		{"another controller, the Package an owner only", []metav1.OwnerReference{
			ref("cozystack.io/v1alpha1", "Package", "p", "uid-p", false), ref("apps/v1", "Deployment", "d", "uid-d", true)}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := labelled()
			m.OwnerReferences = tt.refs
			hr := &helmv2.HelmRelease{ObjectMeta: m}
			if got := controlledBy(hr, p); got != tt.want {
				t.Errorf("controlledBy = %v, want %v", got, tt.want)
			}
		})
	}
	// A Package not read from the API (no UID) owns nothing, not even
	// objects whose reference has no UID either.
	m := labelled()
	m.OwnerReferences = []metav1.OwnerReference{ref("cozystack.io/v1alpha1", "Package", "p", "", true)}
	if controlledBy(&helmv2.HelmRelease{ObjectMeta: m}, pkgOf("p", "s")) {
		t.Error("a Package without a UID owns an object")
	}
}

func TestDescribeOwner(t *testing.T) {
	p := pkgWithUID("p", "uid-p")
	app := labelled()
	app.Labels[v1alpha1.LabelApplicationKind] = "Postgres"
	app.Labels[v1alpha1.LabelApplicationName] = "db"
	for _, tt := range []struct {
		name string
		obj  client.Object
		want []string
	}{
		{"another Package", &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{
			OwnerReferences: []metav1.OwnerReference{ref("cozystack.io/v1alpha1", "Package", "other", "uid-o", true)}}},
			[]string{`Package "other"`}},
		{"an earlier Package of the same name", &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{
			OwnerReferences: []metav1.OwnerReference{ref("cozystack.io/v1alpha1", "Package", "p", "uid-old", true)}}},
			[]string{`another Package named "p"`, "uid-old", "uid-p", "deleted earlier"}},
		{"another controller", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			OwnerReferences: []metav1.OwnerReference{ref("apps/v1", "Deployment", "web", "uid-d", true)}}},
			[]string{`Deployment "web" (apps/v1)`}},
		{"labelled and annotated, no reference", &helmv2.HelmRelease{ObjectMeta: labelled()},
			[]string{"no Package", "no controller reference", `cozystack.io/package="p"`, "proves nothing"}},
		{"an application's release", &helmv2.HelmRelease{ObjectMeta: app},
			[]string{"application Postgres ns-a/db"}},
		{"application labels on a ConfigMap are not an application", &corev1.ConfigMap{ObjectMeta: app},
			[]string{"no controller reference"}},
		{"nothing at all", &corev1.ServiceAccount{}, []string{"no Package (something else created it)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := describeOwner(tt.obj, p)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("describeOwner = %q, want it to contain %q", got, w)
				}
			}
		})
	}
}

func TestConflictMessage(t *testing.T) {
	p := pkgWithUID("p", "uid-p")
	app := labelled()
	app.Labels[v1alpha1.LabelApplicationKind] = "Postgres"
	app.Labels[v1alpha1.LabelApplicationName] = "db"
	foreign := newConflict("ServiceAccount", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "ns-a",
		Annotations: map[string]string{names.AnnotationPackage: "p"}}}, "a", p)
	tenant := newConflict("HelmRelease", &helmv2.HelmRelease{ObjectMeta: app}, "a", p)

	msg := conflictMessage([]conflict{foreign})
	for _, w := range []string{"ServiceAccount ns-a/sa (component a) exists and belongs to no Package", "never overwritten or adopted", "nothing was installed"} {
		if !strings.Contains(msg, w) {
			t.Errorf("foreign object: %q lacks %q", msg, w)
		}
	}
	msg = conflictMessage([]conflict{tenant})
	for _, w := range []string{"HelmRelease ns-a/" + app.Name + " (component a) is the HelmRelease of application Postgres db",
		"the tenant of namespace ns-a (or a cluster admin) must delete application Postgres db", "nothing was installed"} {
		if !strings.Contains(msg, w) {
			t.Errorf("application: %q lacks %q", msg, w)
		}
	}
	if strings.Contains(msg, "uninstall its owner") {
		t.Errorf("application: %q gives the advice for foreign objects", msg)
	}
	msg = conflictMessage([]conflict{tenant, foreign})
	if !strings.Contains(msg, "ServiceAccount ns-a/sa") || !strings.Contains(msg, "application Postgres db") {
		t.Errorf("both: %q", msg)
	}
	// An application's release that some controller owns is not the
	// tenant's to remove: its owner is named instead.
	owned := app.DeepCopy()
	owned.OwnerReferences = []metav1.OwnerReference{ref("cozystack.io/v1alpha1", "Package", "other", "uid-o", true)}
	if c := newConflict("HelmRelease", &helmv2.HelmRelease{ObjectMeta: *owned}, "a", p); c.appKind != "" || !strings.Contains(conflictMessage([]conflict{c}), `belongs to Package "other"`) {
		t.Errorf("controlled application release: %+v", c)
	}
}

// TestBuildOwnsEveryObject: every object a component needs carries the
// Package's controller reference; the identity also IdentityFinalizer.
func TestBuildOwnsEveryObject(t *testing.T) {
	c := comp("a")
	c.Privileged = true
	c.ClusterRules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}}}
	c.Values = &apiextensionsv1.JSON{Raw: []byte(`{"b":"catalog"}`)}
	p := pkgWithUID("p", "uid-p")
	p.Spec.AllowPrivileged = true
	v := mustView(t, p, source("s", nil, c))
	pl, res := newPlan(v, map[string]*view{"p": v})
	if res != nil {
		t.Fatal(res)
	}
	d := build(pl, pl.components[0], false)
	objs := d.objects()
	if len(objs) != 9 {
		t.Fatalf("%d objects, want SA, Role, RoleBinding, the storage Role and RoleBinding, ClusterRole, ClusterRoleBinding, values, HelmRelease", len(objs))
	}
	for _, o := range objs {
		if !controlledBy(o, p) {
			t.Errorf("%T %s: owner references %+v, want the Package's controller reference", o, o.GetName(), o.GetOwnerReferences())
		}
		_, release := o.(*helmv2.HelmRelease)
		_, values := o.(*corev1.ConfigMap)
		if identity := !release && !values; slices.Contains(o.GetFinalizers(), IdentityFinalizer) != identity {
			t.Errorf("%T %s: finalizers %v; want %s on the identity only", o, o.GetName(), o.GetFinalizers(), IdentityFinalizer)
		}
	}
	if ns := namespace("p", "ns-a"); len(ns.OwnerReferences) != 0 || len(ns.Finalizers) != 0 {
		t.Errorf("the Namespace is owned: %+v", ns.ObjectMeta)
	}
}

func TestNamespacesOf(t *testing.T) {
	p := pkgOf("p", "s")
	p.Status.Namespaces = []string{"old", "b"}
	p.Status.Components = []v1alpha1.PackageComponentStatus{
		{Name: "x", HelmRelease: &v1alpha1.NamespacedObjectReference{Name: "r", Namespace: "from-components"}},
		{Name: "y"},
	}
	got := namespacesOf(p, []string{"b", "a", "a"})
	if want := []string{"a", "b", "from-components", "old"}; !slices.Equal(got, want) {
		t.Errorf("namespacesOf = %v, want %v", got, want)
	}
	if got := namespacesOf(pkgOf("q", "s"), nil); len(got) != 0 {
		t.Errorf("a new Package: %v", got)
	}
}

// TestInventoryRelease: which HelmRelease an identity serves, so it is kept
// while that release is uninstalled.
func TestInventoryRelease(t *testing.T) {
	meta := func(ns, comp, name string) metav1.ObjectMeta {
		m := markMeta("p", comp)
		m.Namespace, m.Name = ns, name
		return m
	}
	hrA := &helmv2.HelmRelease{ObjectMeta: meta("ns-a", "a", names.HelmRelease("p", "a"))}
	inv := newInventory("p", []client.Object{hrA})
	for _, tt := range []struct {
		name string
		obj  client.Object
		want *helmv2.HelmRelease
	}{
		{"its component's release, same namespace", &corev1.ServiceAccount{ObjectMeta: meta("ns-a", "a", names.Installer("p", "a"))}, hrA},
		{"a moved component's old namespace", &corev1.ServiceAccount{ObjectMeta: meta("ns-old", "a", names.Installer("p", "a"))}, nil},
		{"another component", &corev1.ServiceAccount{ObjectMeta: meta("ns-a", "b", names.Installer("p", "b"))}, nil},
		{"cluster-scoped, any namespace", &rbacv1.ClusterRole{ObjectMeta: meta("", "a", names.ClusterRBAC("p", "a"))}, hrA},
		{"cluster-scoped, release gone", &rbacv1.ClusterRole{ObjectMeta: meta("", "b", names.ClusterRBAC("p", "b"))}, nil},
	} {
		if got := inv.release(tt.obj); got != tt.want {
			t.Errorf("%s: release = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMutateFinalizers: the identity's finalizer is restored, except on an
// object being deleted, where Kubernetes refuses new finalizers.
func TestMutateFinalizers(t *testing.T) {
	want := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{IdentityFinalizer}}}
	cur := &corev1.ServiceAccount{}
	if !mutate(cur, want) || !slices.Contains(cur.Finalizers, IdentityFinalizer) {
		t.Errorf("finalizer not restored: %v", cur.Finalizers)
	}
	now := metav1.Now()
	deleting := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now, Finalizers: []string{"other"}}}
	if mutate(deleting, want) || slices.Contains(deleting.Finalizers, IdentityFinalizer) {
		t.Errorf("finalizer added to an object being deleted: %v", deleting.Finalizers)
	}
}
