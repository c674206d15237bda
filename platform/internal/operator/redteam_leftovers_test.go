package operator_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/controller/tenantrbac"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/tenantaccess"
)

// The leftovers and limits of issue 29, part 6 (README.md, "Catalog
// delivery", "What a third-party catalog gets"): each test builds the
// attacking catalog itself.

var tenantRBACOnce sync.Once

// startTenantRBAC runs, once for the package, what cozystack-controller
// runs for tenant namespaces (package tenantrbac) and applies the
// platform's tenant roles (platform/tenantaccess).
func startTenantRBAC(t *testing.T) {
	t.Helper()
	c := k(t)
	if err := tenantaccess.Apply(ctxT(t), c); err != nil {
		t.Fatal(err)
	}
	var err error
	tenantRBACOnce.Do(func() {
		var mgr ctrl.Manager
		mgr, err = ctrl.NewManager(env.Config, ctrl.Options{
			Scheme: controllermanager.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
			Cache: cache.Options{ByObject: tenantrbac.CacheByObject()},
		})
		if err == nil {
			err = tenantrbac.Setup(mgr)
		}
		if err == nil {
			go func() {
				if err := mgr.Start(context.Background()); err != nil {
					fmt.Fprintln(os.Stderr, "tenant-rbac manager:", err)
				}
			}()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// allowed asks kube-apiserver whether a member of group may verb
// group/resource in namespace ns.
func allowed(t *testing.T, group, ns, apiGroup, resource, verb string) bool {
	t.Helper()
	return allowedAs(t, "member-of-"+group, []string{group, "system:authenticated"}, ns, apiGroup, resource, verb)
}

// allowedAs is allowed for user with groups.
func allowedAs(t *testing.T, user string, groups []string, ns, apiGroup, resource, verb string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: apiGroup, Resource: resource},
	}}
	if err := k(t).Create(ctxT(t), sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}

// TestRedTeamGrantsGoWithTheCatalog: a catalog's PackageSource and its
// ApplicationDefinition are deleted; before the fix its aggregated tenant
// roles, its installer role and the installer ServiceAccount and
// RoleBinding in every tenant namespace stayed, so tenant admins kept the
// catalog's rights. Now they go once the last definition is gone (and not
// before: while a definition stays, its applications' releases need the
// installer).
func TestRedTeamGrantsGoWithTheCatalog(t *testing.T) {
	start(t)
	startTenantRBAC(t)
	c := k(t)
	const (
		src    = "rtleft"
		def    = "rtleftgizmo"
		plural = def + "s"
		tenant = "tenant-rtleft"
	)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant, Labels: map[string]string{v1alpha1.LabelTenant: "rtleft"}}}
	create(t, ns)
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: def}})
	})
	push(t, appCatalog(t, src, "1.0.0", map[string]string{def: "Rtleftgizmo"}), "e2e/"+src, "1.0.0")
	ps := ociSource(src, "e2e/"+src, "1.0.0")
	create(t, ps)
	waitSource(t, src, "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))

	admin := v1alpha1.TenantGroup(tenant, v1alpha1.TenantLevelAdmin)
	installer := v1alpha1.CatalogInstallerServiceAccount(src)
	roles := []string{"cozy:catalog:" + src + ":tenant-view", "cozy:catalog:" + src + ":tenant-admin", "cozy:catalog:" + src + ":installer"}
	granted := func() []client.Object {
		objs := []client.Object{
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: installer}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: installer}},
		}
		for _, r := range roles {
			objs = append(objs, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: r}})
		}
		return objs
	}
	eventually(t, "the catalog's grants in the tenant namespace", func() error {
		for _, o := range granted() {
			if err := c.Get(ctxT(t), client.ObjectKeyFromObject(o), o); err != nil {
				return fmt.Errorf("%T %s: %w", o, o.GetName(), err)
			}
		}
		if !allowed(t, admin, tenant, "apps.cozystack.io", plural, "create") {
			return fmt.Errorf("%s may not create %s yet", admin, plural)
		}
		return nil
	})

	// The attack's setup: the cluster operator removes the catalog.
	if err := c.Delete(ctxT(t), ps); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ps)
	// Its definition stays (and so do the grants) until deleted too.
	if err := c.Get(ctxT(t), client.ObjectKey{Name: def}, &v1alpha1.ApplicationDefinition{}); err != nil {
		t.Fatalf("ApplicationDefinition %s after its source went: %v, want it kept", def, err)
	}
	for _, o := range granted() {
		if err := c.Get(ctxT(t), client.ObjectKeyFromObject(o), o); err != nil {
			t.Errorf("%T %s went while ApplicationDefinition %s is left: %v", o, o.GetName(), def, err)
		}
	}
	ad := &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: def}}
	if err := c.Delete(ctxT(t), ad); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ad)

	eventually(t, "the catalog's grants gone", func() error {
		for _, o := range granted() {
			err := c.Get(ctxT(t), client.ObjectKeyFromObject(o), o)
			if err == nil {
				return fmt.Errorf("%T %s/%s is still there", o, o.GetNamespace(), o.GetName())
			}
			if !apierrors.IsNotFound(err) {
				return err
			}
		}
		for _, verb := range []string{"create", "get"} {
			if allowed(t, admin, tenant, "apps.cozystack.io", plural, verb) {
				return fmt.Errorf("%s may still %s %s in %s", admin, verb, plural, tenant)
			}
		}
		if allowedAs(t, "system:serviceaccount:"+tenant+":"+installer, []string{"system:serviceaccounts", "system:serviceaccounts:" + tenant}, tenant, "", "configmaps", "create") {
			return fmt.Errorf("%s may still create ConfigMaps in %s (the catalog's installer rule)", installer, tenant)
		}
		return nil
	})
	// The platform's own tenant roles stay.
	if !allowed(t, admin, tenant, "apps.cozystack.io", "tenants", "get") {
		t.Errorf("%s lost the platform's own rights (get tenants)", admin)
	}
}
