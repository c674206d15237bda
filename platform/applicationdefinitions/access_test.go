package applicationdefinitions_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// accessRow is one request of the tenant roles table: resource (of gvr,
// namespaced unless cluster), verb, and the least level allowed it in its
// own tenant ("" for none: no tenant user may, whatever the level).
type accessRow struct {
	gvr     schema.GroupVersionResource
	cluster bool
	name    string // the object a get or delete names
	verb    string
	least   string
}

var (
	helmReleases = helmv2.GroupVersion.WithResource("helmreleases")
	secretsGVR   = corev1.SchemeGroupVersion.WithResource("secrets")
	// tenantSecretsGVR is served by cozystack-api (core.cozystack.io).
	tenantSecretsGVR = schema.GroupVersionResource{Group: "core.cozystack.io", Version: "v1alpha1", Resource: "tenantsecrets"}
	configMapsGVR    = corev1.SchemeGroupVersion.WithResource("configmaps")
	podsGVR          = corev1.SchemeGroupVersion.WithResource("pods")
	packagesGVR      = v1alpha1.GroupVersion.WithResource("packages")
	sourcesGVR       = v1alpha1.GroupVersion.WithResource("packagesources")
	clusterValsGVR   = v1alpha1.GroupVersion.WithResource("clustervalues")
	roleBindings     = rbacv1.SchemeGroupVersion.WithResource("rolebindings")
	backupsGroup     = schema.GroupVersion{Group: "backups.cozystack.io", Version: "v1alpha1"}
	plansGVR         = backupsGroup.WithResource("plans")
	backupJobsGVR    = backupsGroup.WithResource("backupjobs")
	backupsGVR       = backupsGroup.WithResource("backups")
	restoreJobsGVR   = backupsGroup.WithResource("restorejobs")
	grantsGVR        = backupsGroup.WithResource("backupgrants")
	classesGVR       = backupsGroup.WithResource("backupclasses")
	driversGVR       = backupsGroup.WithResource("backupdrivers")
)

// accessTable is contract K5's tenant roles ("Tenant roles",
// k5-cozy-lib.md) as requests: application kinds (Stall, a catalog's kind),
// child tenants, HelmReleases, Secrets, the projected values, Packages.
var accessTable = []accessRow{
	{gvr: stalls, verb: "get", name: "absent", least: "view"},
	{gvr: stalls, verb: "list", least: "view"},
	{gvr: stalls, verb: "create", least: "admin"},
	{gvr: stalls, verb: "delete", name: "absent", least: "admin"},
	{gvr: tenants, verb: "get", name: "absent", least: "view"},
	{gvr: tenants, verb: "list", least: "view"},
	{gvr: tenants, verb: "create", least: "super-admin"},
	{gvr: tenants, verb: "delete", name: "absent", least: "super-admin"},
	{gvr: podsGVR, verb: "list", least: "view"},
	// Secrets only as TenantSecrets (core.cozystack.io): a driver keeps
	// credentials beside the objects that use them (K5, "Tenant roles").
	{gvr: secretsGVR, verb: "list"},
	{gvr: secretsGVR, verb: "get", name: "absent"},
	{gvr: tenantSecretsGVR, verb: "list", least: "use"},
	{gvr: tenantSecretsGVR, verb: "get", name: "absent", least: "use"},
	{gvr: secretsGVR, verb: "create"},
	{gvr: secretsGVR, verb: "delete", name: "absent"},
	{gvr: helmReleases, verb: "get", name: "absent"},
	{gvr: helmReleases, verb: "list"},
	{gvr: helmReleases, verb: "create"},
	{gvr: configMapsGVR, verb: "get", name: v1alpha1.ValuesName},
	{gvr: configMapsGVR, verb: "list"},
	{gvr: roleBindings, verb: "create"},
	{gvr: packagesGVR, cluster: true, verb: "list"},
	{gvr: packagesGVR, cluster: true, verb: "create"},
	{gvr: sourcesGVR, cluster: true, verb: "list"},
	{gvr: clusterValsGVR, cluster: true, verb: "get", name: v1alpha1.ClusterValuesName},
	// Backups (contract K7): a Backup's spec says where data is, so no
	// tenant creates one; deleting one is the tenant's to decide.
	{gvr: plansGVR, verb: "list", least: "view"},
	{gvr: plansGVR, verb: "create", least: "admin"},
	{gvr: backupJobsGVR, verb: "get", name: "absent", least: "view"},
	{gvr: backupJobsGVR, verb: "create", least: "use"},
	{gvr: backupsGVR, verb: "list", least: "view"},
	{gvr: backupsGVR, verb: "create"},
	{gvr: backupsGVR, verb: "delete", name: "absent", least: "admin"},
	{gvr: restoreJobsGVR, verb: "create", least: "admin"},
	{gvr: grantsGVR, verb: "create", least: "admin"},
	{gvr: classesGVR, cluster: true, verb: "create"},
	{gvr: driversGVR, cluster: true, verb: "create"},
}

// levelRank orders the levels: view 0 ... super-admin 3; "" is -1.
func levelRank(level string) int { return slices.Index(v1alpha1.TenantLevels, level) }

// TestTenantRoles (K5 "Tenant roles", contracts/schemas/v1alpha1/
// k5-cozy-lib.md; docs/operator/tenants.md, "Tenants: who may do what"): users in each of the four groups of tenant
// acme, of its parent (the root), of its child (acme's dev) and of a
// sibling (other) send every request of accessTable into acme's
// namespace, its child's and the sibling's, impersonated against the real
// API servers (kube-apiserver's RBAC, and cozystack-api for the
// application kinds, which asks kube-apiserver). A request is allowed
// exactly when the user's tenant is the target's or an ancestor of it and
// the user's level is at least the row's; rows with no level are refused
// to everyone. Creates are dry runs; gets and deletes name absent objects
// (allowed means NotFound, refused means Forbidden).
func TestTenantRoles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	create := createTenant(ctx, dyn)
	for _, tn := range [][3]string{{"tenant-root", "acme", "tenant-acme"}, {"tenant-acme", "dev", "tenant-acme-dev"}, {"tenant-root", "other", "tenant-other"}} {
		if err := create(tn[0], tn[1], map[string]any{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		waitBound(t, ctx, c, tn[2])
	}
	// ancestorOrSelf: the tenant namespaces whose users act in a target.
	ancestorOrSelf := map[string][]string{
		"tenant-acme":     {"tenant-acme", "tenant-root"},
		"tenant-acme-dev": {"tenant-acme-dev", "tenant-acme", "tenant-root"},
		"tenant-other":    {"tenant-other", "tenant-root"},
	}
	targets := []string{"tenant-acme", "tenant-acme-dev", "tenant-other"}
	for _, home := range []string{"tenant-acme", "tenant-root", "tenant-acme-dev", "tenant-other"} {
		for _, level := range v1alpha1.TenantLevels {
			group := v1alpha1.TenantGroup(home, level)
			t.Run(group, func(t *testing.T) {
				cfg := rest.CopyConfig(env.Config)
				cfg.Impersonate = rest.ImpersonationConfig{UserName: "user-of-" + group, Groups: []string{group, "system:authenticated"}}
				user := dynamic.NewForConfigOrDie(cfg)
				for _, target := range targets {
					for _, row := range accessTable {
						if row.cluster && target != targets[0] {
							continue
						}
						want := row.least != "" && levelRank(level) >= levelRank(row.least) &&
							(row.cluster == false && slices.Contains(ancestorOrSelf[target], home))
						got, err := try(ctx, user, row, target)
						if err != nil {
							t.Errorf("%s %s in %s: unexpected error %v", row.verb, row.gvr.Resource, target, err)
							continue
						}
						if got != want {
							t.Errorf("%s %s in %s: allowed = %v, want %v", row.verb, row.gvr.Resource, target, got, want)
						}
					}
				}
			})
		}
	}
}

// try sends row's request into namespace ns and says whether it was
// allowed: Forbidden means refused; success, NotFound (a get or delete of
// an absent object) and Invalid (a dry-run create the API refused on its
// merits, after authorization) mean allowed. Other errors are returned.
func try(ctx context.Context, dyn dynamic.Interface, row accessRow, ns string) (bool, error) {
	var ri dynamic.ResourceInterface = dyn.Resource(row.gvr).Namespace(ns)
	if row.cluster {
		ri = dyn.Resource(row.gvr)
	}
	var err error
	switch row.verb {
	case "get":
		_, err = ri.Get(ctx, row.name, metav1.GetOptions{})
	case "list":
		_, err = ri.List(ctx, metav1.ListOptions{Limit: 1})
	case "delete":
		err = ri.Delete(ctx, row.name, metav1.DeleteOptions{})
	case "create":
		_, err = ri.Create(ctx, newObject(row.gvr), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	default:
		return false, fmt.Errorf("verb %q", row.verb)
	}
	switch {
	case apierrors.IsForbidden(err):
		return false, nil
	case err == nil, apierrors.IsNotFound(err), apierrors.IsInvalid(err):
		return true, nil
	}
	return false, err
}

// newObject is an object of gvr to create.
func newObject(gvr schema.GroupVersionResource) *unstructured.Unstructured {
	kinds := map[string]string{"stalls": "Stall", "tenants": "Tenant", "secrets": "Secret", "helmreleases": "HelmRelease",
		"rolebindings": "RoleBinding", "packages": "Package", "plans": "Plan", "backupjobs": "BackupJob", "backups": "Backup",
		"restorejobs": "RestoreJob", "backupgrants": "BackupGrant", "backupclasses": "BackupClass", "backupdrivers": "BackupDriver"}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "probe"}, "spec": map[string]any{}}}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kinds[gvr.Resource])
	switch gvr.Resource {
	case "secrets":
		delete(u.Object, "spec")
	case "rolebindings":
		delete(u.Object, "spec")
		u.Object["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"}
	}
	return u
}

// waitBound waits for tenant namespace ns to exist with its tenant
// RoleBindings and installer identities, those of the test catalogs
// included (cozystack-controller's tenantrbac); the test catalogs must be
// published first.
func waitBound(t *testing.T, ctx context.Context, c client.Client, ns string) {
	t.Helper()
	eventually(t, ctx, "tenant roles bound in "+ns, func() error {
		for _, level := range v1alpha1.TenantLevels {
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: v1alpha1.TenantRoleName(level)}, &rbacv1.RoleBinding{}); err != nil {
				return err
			}
		}
		for _, sa := range []string{v1alpha1.InstallerServiceAccount, v1alpha1.CatalogInstallerServiceAccount(testSource), v1alpha1.CatalogInstallerServiceAccount("lonerapps")} {
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: sa}, &corev1.ServiceAccount{}); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestApplicationChartsInstallWithTheTenantsRights (K5, k5-cozy-lib.md,
// "The identities releases install as"): the
// application release installs as the tenant namespace's installer, so a
// chart that renders a ClusterRole fails with forbidden; the application
// says Forbidden naming the ClusterRole, and nothing cluster-scoped (nor
// the chart's ConfigMap) is created. The HelmRelease names the installer.
func TestApplicationChartsInstallWithTheTenantsRights(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	if err := createTenant(ctx, dyn)("tenant-root", "esc", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ctx, c, "tenant-esc")
	createApp(t, ctx, dyn, escalators, "tenant-esc", "up")
	var message string
	eventually(t, ctx, "Escalator up Ready=False/Forbidden", func() error {
		ready, msg, err := readyOf(ctx, dyn, escalators, "tenant-esc", "up")
		if err != nil {
			return err
		}
		if strings.HasPrefix(ready, "True") {
			t.Fatalf("Escalator up is Ready: its chart created a ClusterRole (%s)", msg)
		}
		if ready != "False/Forbidden" {
			return fmt.Errorf("Ready %s: %s", ready, msg)
		}
		message = msg
		return nil
	})
	for _, want := range []string{`clusterroles.rbac.authorization.k8s.io "esc-up-everything" (cluster-scoped)`,
		"system:serviceaccount:tenant-esc:cozy-installer-testapps", "may not create cluster-scoped objects"} {
		if !strings.Contains(message, want) {
			t.Errorf("Forbidden message %q lacks %q", message, want)
		}
	}
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-esc", Name: "esc-up"}, hr); err != nil {
		t.Fatal(err)
	}
	if want := v1alpha1.CatalogInstallerServiceAccount(testSource); hr.Spec.ServiceAccountName != want {
		t.Errorf("HelmRelease esc-up: serviceAccountName %q, want %q", hr.Spec.ServiceAccountName, want)
	}
	if !hr.Spec.Install.DisableHooks || !hr.Spec.Upgrade.DisableHooks || hr.Spec.Uninstall == nil || !hr.Spec.Uninstall.DisableHooks {
		t.Errorf("HelmRelease esc-up runs Helm hooks, which bypass ownership: %+v %+v %+v", hr.Spec.Install, hr.Spec.Upgrade, hr.Spec.Uninstall)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "esc-up-everything"}, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole esc-up-everything: %v, want NotFound", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-esc", Name: "esc-up-harmless"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap esc-up-harmless: %v, want NotFound (a release that fails installs nothing)", err)
	}
}

// TestInstallerIdentitiesAreNarrow (K5, k5-cozy-lib.md, "The identities
// releases install as") attacks the two installer
// identities directly, impersonated as helm-controller would act as them:
// the Tenant chart's identity of tenant-acme may create and change only
// the namespaces of acme's own child tenants and their quotas (the policy
// tenant-installer-scope.cozystack.io), the application installer of
// tenant-acme may create nothing cluster-scoped or outside its namespace,
// and no Pod may run as, and no Secret hold a token of, either (the
// policy installer-identities.cozystack.io). Writes are dry runs.
func TestInstallerIdentitiesAreNarrow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	create := createTenant(ctx, dyn)
	for _, tn := range [][3]string{{"tenant-root", "acme", "tenant-acme"}, {"tenant-root", "other", "tenant-other"}} {
		if err := create(tn[0], tn[1], map[string]any{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		waitBound(t, ctx, c, tn[2])
	}
	waitStorage(t, ctx, c, "tenant-acme", testSource)
	waitStorage(t, ctx, c, "tenant-acme", "lonerapps")
	as := func(ns, sa string) client.Client {
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + sa,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
		cl, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	tenantInstaller := as("tenant-acme", v1alpha1.TenantInstallerServiceAccount)
	appInstaller := as("tenant-acme", v1alpha1.CatalogInstallerServiceAccount(testSource))
	noCatalog := as("tenant-acme", v1alpha1.InstallerServiceAccount)
	namespace := func(name, parent string) *corev1.Namespace {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelTenant: "x"}}}
		if parent != "" {
			ns.Labels[v1alpha1.LabelParent] = parent
		}
		return ns
	}
	quota := func(ns string) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "tenant-quota", Namespace: ns},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1000")}}}
	}
	dry := client.DryRunAll
	for _, tc := range []struct {
		name    string
		c       client.Client
		act     func(client.Client) error
		allowed bool
		// want is in the refusal when a policy, not RBAC, refuses.
		want string
	}{
		{"the Tenant chart creates its child's namespace", tenantInstaller, func(cl client.Client) error {
			return cl.Create(ctx, namespace("tenant-acme-new", "tenant-acme"), dry)
		}, true, ""},
		{"... and a quota there", tenantInstaller, func(cl client.Client) error {
			if err := c.Create(ctx, namespace("tenant-acme-quota", "tenant-acme")); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			return cl.Create(ctx, quota("tenant-acme-quota"), dry)
		}, true, ""},
		{"a namespace outside the tenant's children", tenantInstaller, func(cl client.Client) error {
			return cl.Create(ctx, namespace("kube-evil", "tenant-acme"), dry)
		}, false, "may act only on the namespaces of its own child tenants"},
		{"a child-like name claiming another parent", tenantInstaller, func(cl client.Client) error {
			return cl.Create(ctx, namespace("tenant-acme-x", "tenant-other"), dry)
		}, false, "may act only on the namespaces of its own child tenants"},
		{"a sibling's namespace", tenantInstaller, func(cl client.Client) error {
			return cl.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-other"}}, dry)
		}, false, "may act only on the namespaces of its own child tenants"},
		{"its own namespace", tenantInstaller, func(cl client.Client) error {
			return cl.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-acme"}}, dry)
		}, false, "may act only on the namespaces of its own child tenants"},
		{"a sibling's quota", tenantInstaller, func(cl client.Client) error {
			return cl.Create(ctx, quota("tenant-other"), dry)
		}, false, "may act only on the namespaces of its own child tenants"},
		{"kube-system's quota", tenantInstaller, func(cl client.Client) error {
			return cl.Create(ctx, quota("kube-system"), dry)
		}, false, "may act only on the namespaces of its own child tenants"},
		{"the application installer makes a namespace", appInstaller, func(cl client.Client) error {
			return cl.Create(ctx, namespace("tenant-acme-app", "tenant-acme"), dry)
		}, false, ""},
		{"... a ClusterRole", appInstaller, func(cl client.Client) error {
			return cl.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "grab"}}, dry)
		}, false, ""},
		{"... a RoleBinding in its namespace", appInstaller, func(cl client.Client) error {
			return cl.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "grab", Namespace: "tenant-acme"},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"}}, dry)
		}, false, ""},
		{"... a Secret in another namespace", appInstaller, func(cl client.Client) error {
			return cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "tenant-other"}}, dry)
		}, false, ""},
		{"... Helm's storage in its namespace (its catalog declares no Secrets)", appInstaller, func(cl client.Client) error {
			return cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.x.v1", Namespace: "tenant-acme"}}, dry)
		}, false, ""},
		{"... Helm's storage in its catalog's release storage namespace", appInstaller, func(cl client.Client) error {
			ns := v1alpha1.ApplicationReleaseStorageNamespace("tenant-acme", testSource)
			return cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.x.v1", Namespace: ns}}, dry)
		}, true, ""},
		{"... Helm's storage in another catalog's", appInstaller, func(cl client.Client) error {
			ns := v1alpha1.ApplicationReleaseStorageNamespace("tenant-acme", "lonerapps")
			return cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.x.v1", Namespace: ns}}, dry)
		}, false, ""},
		{"the installer of no catalog makes a ConfigMap", noCatalog, func(cl client.Client) error {
			return cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "tenant-acme"}}, dry)
		}, false, ""},
		{"another catalog's installer uses testapps' ConfigMap rights", as("tenant-acme", v1alpha1.CatalogInstallerServiceAccount("lonerapps")), func(cl client.Client) error {
			return cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "tenant-acme"}}, dry)
		}, false, ""},
		// vaultapps declares Secrets, so the policy, not RBAC, refuses.
		{"... a token of itself", as("tenant-acme", v1alpha1.CatalogInstallerServiceAccount("vaultapps")), func(cl client.Client) error {
			return cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tok", Namespace: "tenant-acme",
				Annotations: map[string]string{corev1.ServiceAccountNameKey: v1alpha1.TenantInstallerServiceAccount}},
				Type: corev1.SecretTypeServiceAccountToken}, dry)
		}, false, "may not hold a token of an installer"},
		{"a token of a Package component's installer (even by an admin)", c, func(cl client.Client) error {
			return cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tok", Namespace: "tenant-acme",
				Annotations: map[string]string{corev1.ServiceAccountNameKey: "cnpg-operator--0123456789-installer"}},
				Type: corev1.SecretTypeServiceAccountToken}, dry)
		}, false, "may not hold a token of an installer"},
		{"a Pod as the Tenant chart's identity (even by an admin)", c, func(cl client.Client) error {
			return cl.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "tenant-acme"},
				// restricted, so the tenant namespace's Pod Security (the
				// Tenant chart's labels) is not what refuses it.
				Spec: corev1.PodSpec{ServiceAccountName: v1alpha1.TenantInstallerServiceAccount,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{Name: "c", Image: "x", SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}}}}, dry)
		}, false, "a Pod may not run as it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.act(tc.c)
			switch {
			case tc.allowed && err != nil:
				t.Errorf("want allowed, got %v", err)
			case !tc.allowed && !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
				t.Errorf("want Forbidden (RBAC or policy), got %v", err)
			case !tc.allowed && !strings.Contains(fmt.Sprint(err), tc.want):
				t.Errorf("refusal %v lacks %q", err, tc.want)
			}
		})
	}
}

// TestApplicationsHoldOnlyTheirCatalogsRights (contracts/artifact/README.md,
// "Application rights"): each catalog's
// application releases install as that catalog's installer, which holds
// only what that catalog declares. Loner's chart renders a ConfigMap, which
// its catalog (lonerapps) does not declare; another installed catalog
// (testapps) does, and lends it nothing: the Loner says Forbidden, naming
// the ConfigMap and its own catalog's installer.
func TestApplicationsHoldOnlyTheirCatalogsRights(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	if err := createTenant(ctx, dyn)("tenant-root", "lone", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ctx, c, "tenant-lone")
	createApp(t, ctx, dyn, loners, "tenant-lone", "one")
	eventually(t, ctx, "Loner one Ready=False/Forbidden", func() error {
		ready, msg, err := readyOf(ctx, dyn, loners, "tenant-lone", "one")
		if err != nil {
			return err
		}
		if strings.HasPrefix(ready, "True") {
			t.Fatalf("Loner one is Ready: it used another catalog's rights (%s)", msg)
		}
		if ready != "False/Forbidden" {
			return fmt.Errorf("Ready %s: %s", ready, msg)
		}
		for _, want := range []string{`configmaps "board"`, "system:serviceaccount:tenant-lone:cozy-installer-lonerapps",
			"the application's catalog does not declare resource configmaps"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Forbidden message %q lacks %q", msg, want)
			}
		}
		return nil
	})
}

// TestFormerTenantNamespaceIsUnbound: a namespace that stops being a
// tenant namespace (its tenant label removed) loses the tenant
// RoleBindings, the installers and the Tenant chart's ClusterRoleBinding.
func TestFormerTenantNamespaceIsUnbound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, _ := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-former", Labels: map[string]string{v1alpha1.LabelTenant: "former"}}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ctx, c, "tenant-former")
	// tenantrbac applies the ClusterRoleBinding after the namespace's
	// objects waitBound sees (and after the release storage namespaces).
	eventually(t, ctx, "the Tenant chart's ClusterRoleBinding for tenant-former", func() error {
		return c.Get(ctx, client.ObjectKey{Name: "cozy:tenant-installer:tenant-former"}, &rbacv1.ClusterRoleBinding{})
	})
	orig := ns.DeepCopy()
	delete(ns.Labels, v1alpha1.LabelTenant)
	if err := c.Patch(ctx, ns, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "tenant-former unbound", func() error {
		var rbs rbacv1.RoleBindingList
		if err := c.List(ctx, &rbs, client.InNamespace("tenant-former")); err != nil {
			return err
		}
		var sas corev1.ServiceAccountList
		if err := c.List(ctx, &sas, client.InNamespace("tenant-former"), client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController}); err != nil {
			return err
		}
		err := c.Get(ctx, client.ObjectKey{Name: "cozy:tenant-installer:tenant-former"}, &rbacv1.ClusterRoleBinding{})
		if len(rbs.Items) > 0 || len(sas.Items) > 0 || !apierrors.IsNotFound(err) {
			return fmt.Errorf("%d RoleBindings, %d ServiceAccounts, ClusterRoleBinding: %v", len(rbs.Items), len(sas.Items), err)
		}
		return nil
	})
}
