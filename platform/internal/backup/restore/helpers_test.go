package restore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/apiservertest"
	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/restore"
	"cozystack.io/platform/internal/controller/tenantrbac"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/install"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/platform/tenantaccess"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/testenv"
)

// No driver runs in these tests: they write what a driver would (its
// BackupDriver registration and Lease, and the Backups it takes, with
// spec.driverRef and spec.applicationSnapshot) with an admin client.

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(backuptest.Main(m, &env)) }

const (
	alice = "tenant-alice"
	bob   = "tenant-bob"
	// kind is the application kind of these tests, served by cozystack-api
	// from demoAD.
	kind   = "RestoreDemo"
	plural = "restoredemos"
	prefix = "restoredemo-"
	// vaultKind is an application kind only a tenant's super-admins may
	// create, served from vaultAD.
	vaultKind   = "RestoreVault"
	vaultPlural = "restorevaults"
	vaultPrefix = "restorevault-"
	// catalogSource is the PackageSource the catalog roles of these
	// kinds are named for.
	catalogSource = "restore-test"
)

var (
	once    sync.Once
	onceErr error
	// c is an admin client knowing every kind used here.
	c client.Client
	// apps is an admin client of the application API.
	apps dynamic.Interface
	// clk is the reconciler's clock: it stays where it is until a test
	// steps it.
	clk      = clocktesting.NewFakeClock(time.Now())
	gvr      = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: plural}
	vaultGVR = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: vaultPlural}
)

// demoAD is a minimal application kind, enough for cozystack-api to serve
// it and validate specs against its schema.
func demoAD() *v1alpha1.ApplicationDefinition { return minimalAD("restoredemo", kind, plural, prefix) }

// vaultAD is a second minimal kind, that only a tenant's super-admins may
// create (catalogRoles), as the platform's Tenant.
func vaultAD() *v1alpha1.ApplicationDefinition {
	return minimalAD("restorevault", vaultKind, vaultPlural, vaultPrefix)
}

func minimalAD(name, kind, plural, prefix string) *v1alpha1.ApplicationDefinition {
	return &v1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ApplicationDefinitionSpec{
			Application: v1alpha1.ApplicationDefinitionApplication{
				Kind: kind, Singular: name, Plural: plural,
				OpenAPISchema: `{"type":"object","properties":{` +
					`"size":{"type":"string","default":"1Gi"},` +
					`"replicas":{"type":"integer","default":1},` +
					`"users":{"type":"object","additionalProperties":{"type":"string"}}}}`,
			},
			Release: v1alpha1.ApplicationDefinitionRelease{
				Prefix:   prefix,
				ChartRef: &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: name, Namespace: "cozy-system"},
			},
		},
	}
}

// catalogRoles are the tenant roles cozystack-operator would write for a
// catalog shipping demoAD and vaultAD (adinstaller.Roles: one ClusterRole
// per level, aggregated into the platform's cozy:tenant:<level>): admins
// keep RestoreDemos, only super-admins create RestoreVaults (every level
// reads them).
func catalogRoles() []*rbacv1.ClusterRole {
	role := func(level string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: adinstaller.TenantRoleName(catalogSource, level),
				Labels: map[string]string{v1alpha1.TenantRoleAggregationLabel(level): "true"}},
			Rules: rules,
		}
	}
	apps := func(verbs []string, resources ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{"apps.cozystack.io"}, Resources: resources, Verbs: verbs}
	}
	return []*rbacv1.ClusterRole{
		role(v1alpha1.TenantLevelView, apps([]string{"get", "list", "watch"}, plural, vaultPlural)),
		role(v1alpha1.TenantLevelAdmin, apps([]string{"create", "update", "patch", "delete"}, plural)),
		role(v1alpha1.TenantLevelSuperAdmin, apps([]string{"create", "update", "patch", "delete"}, vaultPlural)),
	}
}

// reviewAllows reports whether group may create resource in ns, by a
// SubjectAccessReview sent as the admin.
func reviewAllows(ctx context.Context, ns, group, resource string) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "restore-test", Groups: []string{group, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Group: "apps.cozystack.io", Resource: resource},
	}}
	if err := c.Create(ctx, sar); err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// start readies the cluster once per test binary: the CRDs, cozystack-api
// serving demoAD and vaultAD, the tenant roles with catalogRoles, the
// namespaces tenant-alice and tenant-bob (labelled as tenant namespaces
// and bound to the tenant roles by the tenantrbac reconciler), and a
// manager running the restore reconciler with the fake clock clk. It
// returns once the tenants' admins may create RestoreDemos and their
// super-admins RestoreVaults: the restore checks that before it creates
// an application, and a refusal ends the job.
func start(t *testing.T) {
	t.Helper()
	testenv.Need(t, env)
	once.Do(func() { onceErr = setup(t) })
	if onceErr != nil {
		t.Fatalf("setup: %v", onceErr)
	}
}

func setup(t *testing.T) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := install.CRDs(ctx, env.Config, backuptest.DriverNamespace); err != nil {
		return err
	}
	apiservertest.Start(t, env)
	var err error
	if c, err = client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()}); err != nil {
		return err
	}
	if apps, err = dynamic.NewForConfig(env.Config); err != nil {
		return err
	}
	for _, ad := range []*v1alpha1.ApplicationDefinition{demoAD(), vaultAD()} {
		if err := c.Create(ctx, ad); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if err := tenantaccess.Apply(ctx, c); err != nil {
		return err
	}
	for _, r := range catalogRoles() {
		if err := c.Create(ctx, r); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	for _, ns := range []string{alice, bob} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{v1alpha1.LabelTenant: ns[len("tenant-"):]}}}
		if err := c.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 controllermanager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{ByObject: tenantrbac.CacheByObject()},
	})
	if err != nil {
		return err
	}
	if err := restore.Setup(mgr, restore.Options{Clock: clk, RetryInterval: 300 * time.Millisecond}); err != nil {
		return err
	}
	if err := tenantrbac.Setup(mgr); err != nil {
		return err
	}
	// The manager lives as long as the test binary, as the control plane.
	go func() {
		if err := mgr.Start(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
	}()
	// cozystack-api serves the kinds once it has seen the ADs; the tenant
	// roles are bound (tenantrbac) and aggregated (kube-controller-manager)
	// shortly after.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, r := range []schema.GroupVersionResource{gvr, vaultGVR} {
			if _, err := apps.Resource(r).Namespace(alice).List(ctx, metav1.ListOptions{}); err != nil {
				return false, nil
			}
		}
		for _, ns := range []string{alice, bob} {
			for group, resource := range map[string]string{
				v1alpha1.TenantGroup(ns, v1alpha1.TenantLevelAdmin):      plural,
				v1alpha1.TenantGroup(ns, v1alpha1.TenantLevelSuperAdmin): vaultPlural,
			} {
				if ok, err := reviewAllows(ctx, ns, group, resource); err != nil || !ok {
					return false, err
				}
			}
		}
		return true, nil
	})
}

// patience bounds the waits of these tests: a restore goes through
// cozystack-api and the tenants' roles.
const patience = 90 * time.Second

// testContext returns a context for a test's API calls (through
// cozystack-api: three minutes).
func testContext(t *testing.T) context.Context { return backuptest.ContextTimeout(t, 3*time.Minute) }

// as returns a client acting as a member of group (impersonated), e.g.
// "tenant-bob-admin".
func as(t *testing.T, user, group string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{group, "system:authenticated"}}
	cl, err := client.New(cfg, client.Options{Scheme: controllermanager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// consistently fails when cond returns an error at any poll during d.
func consistently(t *testing.T, what string, d time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := cond(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// registerDriver writes, as a driver would, the registration name (kind
// Demo) with caps and protocols, and its Lease renewed now by clk (live)
// or two hours before (expired).
func registerDriver(t *testing.T, name string, live bool, protocols []string, caps ...backupsv1alpha1.Capability) {
	t.Helper()
	renew := clk.Now()
	if !live {
		renew = renew.Add(-2 * time.Hour)
	}
	backuptest.ApplyDriver(t, c, name, backupsv1alpha1.BackupDriverSpec{
		StrategyKinds: []string{"Demo"}, ProtocolVersions: protocols, Capabilities: caps,
	}, renew, 300)
}

// takeBackup writes, as driver would after a backup of application app in
// ns, the Backup name with the application's spec as its snapshot (nil:
// none).
func takeBackup(t *testing.T, ns, name, app, driver string, snapshot map[string]any) *backupsv1alpha1.Backup {
	t.Helper()
	return createBackup(t, backupOf(t, ns, name, app, driver, snapshot))
}

// backupOf is the Backup takeBackup writes, for a test to change before
// createBackup writes it (a Backup's spec is immutable).
func backupOf(t *testing.T, ns, name, app, driver string, snapshot map[string]any) *backupsv1alpha1.Backup {
	t.Helper()
	b := &backupsv1alpha1.Backup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: backupsv1alpha1.BackupSpec{
			ApplicationRef: backupsv1alpha1.ApplicationRef{
				ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: kind}, Name: app,
			},
			DriverRef:     backupsv1alpha1.DriverRef{Name: driver, ProtocolVersion: backupsv1alpha1.ProtocolVersion},
			Strategy:      backupsv1alpha1.Strategy{Kind: "Demo"},
			BackupJobName: name + "-job",
			TakenAt:       metav1.NewTime(clk.Now().Truncate(time.Second)),
		},
	}
	if snapshot != nil {
		raw, err := json.Marshal(snapshot)
		if err != nil {
			t.Fatal(err)
		}
		b.Spec.ApplicationSnapshot = &backupsv1alpha1.RawSpec{Raw: raw}
	}
	return b
}

// createBackup writes b, as its driver would.
func createBackup(t *testing.T, b *backupsv1alpha1.Backup) *backupsv1alpha1.Backup {
	t.Helper()
	if err := c.Create(testContext(t), b); err != nil {
		t.Fatalf("create Backup %s/%s: %v", b.Namespace, b.Name, err)
	}
	return b
}

// newRestore creates, with cl, the RestoreJob ns/name of Backup
// backupNS/backup (backupNS empty: ns); target "" is mode InPlace, else
// NewApplication into that name.
func newRestore(t *testing.T, cl client.Client, ns, name, backupNS, backup, target string) *backupsv1alpha1.RestoreJob {
	t.Helper()
	job := &backupsv1alpha1.RestoreJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: backupsv1alpha1.RestoreJobSpec{
			BackupRef: backupsv1alpha1.BackupRef{Namespace: backupNS, Name: backup},
			Target:    backupsv1alpha1.RestoreTarget{Mode: backupsv1alpha1.RestoreInPlace},
		},
	}
	if target != "" {
		job.Spec.Target = backupsv1alpha1.RestoreTarget{Mode: backupsv1alpha1.RestoreNewApplication, ApplicationName: target}
	}
	if err := cl.Create(testContext(t), job); err != nil {
		t.Fatalf("create RestoreJob %s/%s: %v", ns, name, err)
	}
	return job
}

// waitCondition waits until job's condition typ has status and reason, and
// returns the job then.
func waitCondition(t *testing.T, job *backupsv1alpha1.RestoreJob, typ string, status metav1.ConditionStatus, reason string) *backupsv1alpha1.RestoreJob {
	t.Helper()
	cur := &backupsv1alpha1.RestoreJob{}
	backuptest.Eventually(t, patience, fmt.Sprintf("RestoreJob %s/%s %s=%s %s", job.Namespace, job.Name, typ, status, reason), func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(job), cur); err != nil {
			return err
		}
		cond := apimeta.FindStatusCondition(cur.Status.Conditions, typ)
		if cond == nil || cond.Status != status || cond.Reason != reason {
			return fmt.Errorf("conditions %+v", cur.Status.Conditions)
		}
		if cond.ObservedGeneration != cur.Generation {
			return fmt.Errorf("%s observedGeneration %d, generation %d", typ, cond.ObservedGeneration, cur.Generation)
		}
		return nil
	})
	return cur
}

// createApp creates, as an admin, application name in ns with spec.
func createApp(t *testing.T, ns, name string, labels map[string]string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	if labels != nil {
		u.SetLabels(labels)
	}
	out, err := apps.Resource(gvr).Namespace(ns).Create(testContext(t), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", kind, ns, name, err)
	}
	return out
}

// getApp returns application ns/name, or nil when it does not exist.
func getApp(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := apps.Resource(gvr).Namespace(ns).Get(testContext(t), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", kind, ns, name, err)
	}
	return u
}

func conditionOf(job *backupsv1alpha1.RestoreJob, typ string) *metav1.Condition {
	return apimeta.FindStatusCondition(job.Status.Conditions, typ)
}
