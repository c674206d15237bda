package binder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/binder"
	"cozystack.io/platform/internal/backup/registration"
	"cozystack.io/platform/internal/operator/names"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/charttest"
)

// The catalogs of TestRegistrationRedTeam: the victim "services" ships the
// driver rt-pg (component cnpg-backup-driver, kind RtPg); the attacker
// "evil" ships evil-driver (kind RtEvil). Both drivers hold exactly the
// rights of the shipped cnpg-backup-driver chart, rendered here.
const (
	rtVictimNS, rtVictimSA, rtVictimDriver, rtVictimKind = "rt-cnpg", "cnpg-backup-driver", "rt-pg", "RtPg"
	rtEvilNS, rtEvilSA, rtEvilKind                       = "rt-evil", "evil-driver", "RtEvil"
)

// A driver of a catalog tries to pass for another, serve what its catalog
// does not declare, look alive on another driver's Lease, take the
// platform's Job driver, and change other drivers' registrations.
// Every forged registration is refused with Accepted=False naming
// the rule and the owner, no job is bound to it, the victim's registration
// and Lease are unchanged, and the victim still registers, is accepted and
// binds.
func TestRegistrationRedTeam(t *testing.T) {
	need(t)
	ctx := backuptest.Context(t)
	backuptest.StartManager(t, env.Config, func(mgr ctrl.Manager) error {
		if err := binder.Setup(mgr, binder.Options{Resync: 200 * time.Millisecond}); err != nil {
			return err
		}
		return registration.Setup(mgr)
	})
	rtCatalog(t, "rt-services", "services", rtVictimNS, "cnpg-backup-driver", rtVictimKind)
	rtCatalog(t, "rt-evil", "evil", rtEvilNS, "evil-driver", rtEvilKind)
	victim := rtServiceAccount(t, rtVictimNS, rtVictimSA, rtVictimDriver)
	evil := rtServiceAccount(t, rtEvilNS, rtEvilSA, "rt-evil")

	// The victim registers as its SDK does (server-side apply of its
	// registration, then its Lease), with the chart's RBAC by name.
	now := time.Now()
	rtRegister(t, victim, rtVictimDriver, backupsv1alpha1.BackupDriverSpec{StrategyKinds: []string{rtVictimKind},
		ProtocolVersions: v1, Catalog: "services", Lease: backupsv1alpha1.LeaseRef{Namespace: rtVictimNS, Name: "backup-driver-" + rtVictimDriver}}, now)
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &backupsv1alpha1.BackupDriver{ObjectMeta: metav1.ObjectMeta{Name: rtVictimDriver}})
	})
	accepted := rtWaitAccepted(t, rtVictimDriver, metav1.ConditionTrue, backupsv1alpha1.ReasonAccepted)
	if accepted.Status.Catalog != "services" || accepted.Status.Package != "rt-services" || accepted.Status.Component != "cnpg-backup-driver" ||
		accepted.Annotations[backupsv1alpha1.AnnotationRegisteredBy] != victim.user {
		t.Fatalf("victim's status %+v, registered-by %q", accepted.Status, accepted.Annotations[backupsv1alpha1.AnnotationRegisteredBy])
	}
	job := rtPlatformJobDriver(t)
	before := rtFingerprint(t)

	// The attacks, each a registration the attacker creates with its own
	// client (create is not limited by name) and a live Lease it may write.
	for _, tc := range []struct {
		name string
		// why is the rule the case pins.
		why    string
		driver string
		kinds  []string
		// catalog is the forged registration's spec.catalog.
		catalog string
		lease   backupsv1alpha1.LeaseRef
		// reason and message are the refusal's (message: substrings,
		// besides the driver's name).
		reason  string
		message []string
	}{
		{
			name:    "undeclared kind",
			why:     "a catalog's driver claiming a kind its catalog does not declare is refused, both lists named",
			driver:  "rt-evil-kind",
			kinds:   []string{rtVictimKind},
			lease:   rtOwnLease("rt-evil-kind"),
			reason:  backupsv1alpha1.ReasonKindNotDeclared,
			message: []string{"[RtPg]", "component evil-driver", "catalog evil", "[RtEvil]"},
		},
		{
			name:    "another catalog's name",
			why:     "a catalog's driver naming another catalog in spec.catalog is refused",
			driver:  "rt-evil-catalog",
			kinds:   []string{rtEvilKind},
			catalog: "services",
			lease:   rtOwnLease("rt-evil-catalog"),
			reason:  backupsv1alpha1.ReasonCatalogMismatch,
			message: []string{"spec.catalog services", "catalog evil", "Package rt-evil"},
		},
		{
			name:    "another driver's Lease",
			why:     "a registration pointing at another driver's Lease is refused, both Leases named",
			driver:  "rt-evil-lease",
			kinds:   []string{rtEvilKind},
			lease:   backupsv1alpha1.LeaseRef{Namespace: rtVictimNS, Name: "backup-driver-" + rtVictimDriver},
			reason:  backupsv1alpha1.ReasonLeaseNotOwned,
			message: []string{"rt-cnpg/backup-driver-rt-pg", "BackupDriver rt-pg's", "rt-evil/backup-driver-rt-evil-lease"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.lease.Namespace == rtEvilNS {
				rtLease(t, evil.client, tc.lease.Namespace, tc.driver, now)
			}
			d := &backupsv1alpha1.BackupDriver{ObjectMeta: metav1.ObjectMeta{Name: tc.driver,
				// A forged writer: the platform's admission policy replaces it.
				Annotations: map[string]string{backupsv1alpha1.AnnotationRegisteredBy: victim.user}},
				Spec: backupsv1alpha1.BackupDriverSpec{StrategyKinds: tc.kinds, ProtocolVersions: v1, Catalog: tc.catalog, Lease: tc.lease}}
			if err := evil.client.Create(ctx, d); err != nil {
				t.Fatalf("create the forged registration: %v", err)
			}
			t.Cleanup(func() { _ = c.Delete(context.Background(), d) })
			got := rtWaitAccepted(t, tc.driver, metav1.ConditionFalse, tc.reason)
			if w := got.Annotations[backupsv1alpha1.AnnotationRegisteredBy]; w != evil.user {
				t.Errorf("registered-by %q, want the attacker %q", w, evil.user)
			}
			cond := apimeta.FindStatusCondition(got.Status.Conditions, backupsv1alpha1.ConditionAccepted)
			for _, m := range append(tc.message, tc.driver) {
				if !strings.Contains(cond.Message, m) {
					t.Errorf("Accepted message %q lacks %q: %s", cond.Message, m, tc.why)
				}
			}
			rtWaitEvent(t, tc.driver, tc.reason)

			// No job is bound to it: a job of its kind binds to the real
			// driver when there is one, or waits naming the refusal.
			ns := backuptest.TempNamespace(t, c, "rt-reg-")
			backuptest.Application(t, c, ns, appKind, "db", `{}`)
			kind := tc.kinds[0]
			class(t, tc.driver, appKind, kind, nil)
			j := backupJob(t, ns, "j", appKind, "db", tc.driver)
			if kind == rtVictimKind {
				got := waitFor(t, j, expect{status: metav1.ConditionTrue, reason: backupsv1alpha1.ReasonBound, phase: backupsv1alpha1.PhasePending})
				if got.Status.Binding.DriverRef.Name != rtVictimDriver {
					t.Errorf("bound to %s, want %s", got.Status.Binding.DriverRef.Name, rtVictimDriver)
				}
			} else {
				waitFor(t, j, expect{status: metav1.ConditionFalse, reason: backupsv1alpha1.ReasonDriverUnavailable,
					phase: backupsv1alpha1.PhasePending, message: []string{tc.driver, tc.reason}})
			}
		})
	}

	// The platform's Job driver is the platform's: no catalog registers
	// its name or kind.
	for _, d := range []*backupsv1alpha1.BackupDriver{
		{ObjectMeta: metav1.ObjectMeta{Name: "job"}, Spec: backupsv1alpha1.BackupDriverSpec{StrategyKinds: []string{rtEvilKind}, ProtocolVersions: v1, Lease: rtOwnLease("job")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "rt-evil-job"}, Spec: backupsv1alpha1.BackupDriverSpec{StrategyKinds: []string{"Job"}, ProtocolVersions: v1, Lease: rtOwnLease("rt-evil-job")}},
	} {
		rtForbidden(t, "create "+d.Name, evil.client.Create(ctx, d), "the platform's built-in Job driver")
	}

	// Only a registration's writer changes it. The chart's RBAC names the
	// driver's own registration; a ServiceAccount with the rights the
	// charts held before (update on every registration) is stopped by the
	// admission policy, naming the writer.
	broad := rtServiceAccount(t, rtEvilNS, "broad", "")
	rtBind(t, "rt-broad", broad, []rbacv1.PolicyRule{{APIGroups: []string{backupsv1alpha1.GroupVersion.Group},
		Resources: []string{"backupdrivers"}, Verbs: []string{"get", "create", "update", "patch", "delete"}}})
	for _, tc := range []struct {
		// why is the rule the case pins.
		why string
		who *rtIdentity
		// target is the registration who updates.
		target string
		// message are substrings of the refusal.
		message []string
	}{
		{
			why:     "the evil catalog's RBAC names only its own registration: the victim's is out of reach",
			who:     evil,
			target:  rtVictimDriver,
			message: []string{`cannot update resource "backupdrivers"`},
		},
		{
			why:     "nor may it update the platform's Job driver",
			who:     evil,
			target:  job,
			message: []string{`cannot update resource "backupdrivers"`},
		},
		{
			why:     "the victim's RBAC names only its own registration, not the Job driver",
			who:     victim,
			target:  job,
			message: []string{`cannot update resource "backupdrivers"`},
		},
		{
			why:     "rights on every registration do not pass the admission policy: only the writer changes it",
			who:     broad,
			target:  rtVictimDriver,
			message: []string{"registered by " + victim.user, "only that user"},
		},
		{
			why:     "the Job driver's writer is cozystack-admin, and only that user may change it",
			who:     broad,
			target:  job,
			message: []string{"registered by cozystack-admin", "only that user"},
		},
	} {
		d := &backupsv1alpha1.BackupDriver{}
		if err := c.Get(ctx, clientKey(tc.target), d); err != nil {
			t.Fatal(err)
		}
		d.Spec.StrategyKinds = []string{rtEvilKind}
		d.Spec.Lease = rtOwnLease(tc.target)
		rtForbidden(t, tc.who.user+" updates "+tc.target+" ("+tc.why+")", tc.who.client.Update(ctx, d), tc.message...)
	}
	rtForbidden(t, "broad deletes the job driver", broad.client.Delete(ctx, &backupsv1alpha1.BackupDriver{ObjectMeta: metav1.ObjectMeta{Name: job}}),
		"registered by cozystack-admin", "delete")
	if after := rtFingerprint(t); !reflect.DeepEqual(before, after) {
		t.Errorf("the victim changed:\nbefore %s\nafter  %s", before, after)
	}

	// The victim's own updates still pass (RBAC by name, its own writer).
	rtRegister(t, victim, rtVictimDriver, backupsv1alpha1.BackupDriverSpec{StrategyKinds: []string{rtVictimKind},
		ProtocolVersions: v1, Catalog: "services", Capabilities: []backupsv1alpha1.Capability{backupsv1alpha1.CapabilityVerify},
		Lease: backupsv1alpha1.LeaseRef{Namespace: rtVictimNS, Name: "backup-driver-" + rtVictimDriver}}, time.Now())
	d := &backupsv1alpha1.BackupDriver{}
	if err := c.Get(ctx, clientKey(rtVictimDriver), d); err != nil {
		t.Fatal(err)
	}
	if !d.Has(backupsv1alpha1.CapabilityVerify) || d.Annotations[backupsv1alpha1.AnnotationRegisteredBy] != victim.user {
		t.Errorf("the victim's own update: capabilities %v, registered-by %q", d.Spec.Capabilities, d.Annotations[backupsv1alpha1.AnnotationRegisteredBy])
	}
}

// rtIdentity is a driver's ServiceAccount and a client acting as it.
type rtIdentity struct {
	user   string
	client client.Client
}

func rtOwnLease(driver string) backupsv1alpha1.LeaseRef {
	return backupsv1alpha1.LeaseRef{Namespace: rtEvilNS, Name: "backup-driver-" + driver}
}

// rtCatalog writes what the operator would for an installed catalog: the
// PackageSource source (catalog name catalog) with one component in ns
// declaring kind, the Package of the same name, and ns annotated with it.
func rtCatalog(t *testing.T, source, catalog, ns, component, kind string) {
	t.Helper()
	ctx := backuptest.Context(t)
	ps := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: source},
		Spec: v1alpha1.PackageSourceSpec{Layout: &v1alpha1.LayoutSource{Path: "/nowhere", Tag: "0.1.0"}}}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	ps.Status = v1alpha1.PackageSourceStatus{Catalog: &v1alpha1.CatalogInfo{Name: catalog, Version: "0.1.0", MinPlatformVersion: "0.1.0"},
		Variants: []v1alpha1.PackageVariant{{Name: "default", Components: []v1alpha1.PackageComponent{
			{Name: component, Chart: "charts/" + component, Namespace: ns, Privileged: true, BackupStrategyKinds: []string{kind}}}}}}
	if err := c.Status().Update(ctx, ps); err != nil {
		t.Fatal(err)
	}
	p := &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: source},
		Spec: v1alpha1.PackageSpec{SourceRef: v1alpha1.PackageSourceReference{Name: source}, AllowPrivileged: true}}
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Annotations: map[string]string{names.AnnotationPackage: source}}}
	if err := c.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = c.Delete(ctx, p)
		_ = c.Delete(ctx, ps)
		_ = c.Delete(ctx, n)
	})
}

// rtServiceAccount creates the ServiceAccount ns/name and returns a client
// impersonating it; with driverName set, it holds the RBAC of the shipped
// cnpg-backup-driver chart rendered for that registration name (its
// ClusterRole, and its Role in ns).
func rtServiceAccount(t *testing.T, ns, name, driverName string) *rtIdentity {
	t.Helper()
	ctx := backuptest.Context(t)
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	user := "system:serviceaccount:" + ns + ":" + name
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	cl, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	id := &rtIdentity{user: user, client: cl}
	if driverName == "" {
		return id
	}
	ch, err := charttest.Load(filepath.Join("..", "..", "..", "..", "catalogs", "services", "charts", "cnpg-backup-driver"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := charttest.Render(ch, name, charttest.WithK2(map[string]any{"driverName": driverName}))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := charttest.Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cr); err != nil {
				t.Fatal(err)
			}
			rtBind(t, "rt-"+ns+"-"+name, id, cr.Rules)
			found++
		case "Role":
			var r rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: r.Rules}
			rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
			for _, obj := range []client.Object{role, rb} {
				if err := c.Create(ctx, obj); err != nil {
					t.Fatal(err)
				}
			}
			found++
		}
	}
	if found != 2 {
		t.Fatalf("the chart rendered %d of its ClusterRole and Role", found)
	}
	return id
}

// rtBind grants id rules cluster-wide through ClusterRole name.
func rtBind(t *testing.T, name string, id *rtIdentity, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := backuptest.Context(t)
	parts := strings.Split(id.user, ":")
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: parts[2], Name: parts[3]}}}
	for _, obj := range []client.Object{cr, crb} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), crb)
		_ = c.Delete(context.Background(), cr)
	})
}

// rtRegister writes, as id, what sdk/backup/driver's registration writes:
// the BackupDriver by server-side apply under the driver's field manager,
// then its Lease, renewed at now.
func rtRegister(t *testing.T, id *rtIdentity, name string, spec backupsv1alpha1.BackupDriverSpec, now time.Time) {
	t.Helper()
	d := &backupsv1alpha1.BackupDriver{ObjectMeta: metav1.ObjectMeta{Name: name}}
	// Retried only while the API server cannot apply the new CRD's kind yet.
	backuptest.Eventually(t, 30*time.Second, id.user+" registers "+name, func() error {
		err := apply.Object(backuptest.Context(t), id.client, d, map[string]any{"spec": spec}, backupsv1alpha1.DriverFieldManager(name))
		if err != nil && !strings.Contains(err.Error(), "There can be a delay") {
			t.Fatalf("%s registers %s: %v", id.user, name, err)
		}
		return err
	})
	rtLease(t, id.client, spec.Lease.Namespace, name, now)
}

// rtLease applies the Lease of driver in ns, as its SDK does, with cl.
func rtLease(t *testing.T, cl client.Client, ns, driver string, now time.Time) {
	t.Helper()
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backup-driver-" + driver,
		Labels: map[string]string{backupsv1alpha1.LabelDriver: driver}}}
	if err := apply.Object(backuptest.Context(t), cl, l, map[string]any{"spec": coordinationv1.LeaseSpec{
		HolderIdentity: ptr.To(driver + "-0"), LeaseDurationSeconds: ptr.To(int32(3600)), RenewTime: &metav1.MicroTime{Time: now},
	}}, backupsv1alpha1.DriverFieldManager(driver)); err != nil {
		t.Fatalf("Lease of %s: %v", driver, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), l) })
}

// rtPlatformJobDriver registers the platform's Job driver as the
// platform (the admin client) unless it is registered, and returns its
// name.
func rtPlatformJobDriver(t *testing.T) string {
	t.Helper()
	d := &backupsv1alpha1.BackupDriver{}
	if err := c.Get(backuptest.Context(t), clientKey("job"), d); apierrors.IsNotFound(err) {
		backuptest.RegisterDriver(t, c, "job", []string{"Job"}, v1, time.Now(), 3600)
	} else if err != nil {
		t.Fatal(err)
	}
	return "job"
}

// rtWaitAccepted waits until registration name has condition Accepted of
// status and reason, and returns it.
func rtWaitAccepted(t *testing.T, name string, status metav1.ConditionStatus, reason string) *backupsv1alpha1.BackupDriver {
	t.Helper()
	d := &backupsv1alpha1.BackupDriver{}
	backuptest.Eventually(t, 30*time.Second, fmt.Sprintf("BackupDriver %s Accepted=%s %s", name, status, reason), func() error {
		if err := c.Get(backuptest.Context(t), clientKey(name), d); err != nil {
			return err
		}
		cond := apimeta.FindStatusCondition(d.Status.Conditions, backupsv1alpha1.ConditionAccepted)
		if cond == nil || cond.Status != status || cond.Reason != reason || cond.ObservedGeneration != d.Generation {
			return fmt.Errorf("Accepted %s", backuptest.ShowCondition(cond))
		}
		return nil
	})
	return d
}

// rtWaitEvent waits for a Warning event of reason about registration name.
func rtWaitEvent(t *testing.T, name, reason string) {
	t.Helper()
	backuptest.Eventually(t, 30*time.Second, "a Warning event "+reason+" on BackupDriver "+name, func() error {
		var list eventsv1.EventList
		if err := c.List(backuptest.Context(t), &list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Regarding.Kind == "BackupDriver" && e.Reason == reason && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("none of %d events", len(list.Items))
	})
}

// rtFingerprint is the victim's registration (spec, writer) and Lease.
func rtFingerprint(t *testing.T) string {
	t.Helper()
	ctx := backuptest.Context(t)
	d := &backupsv1alpha1.BackupDriver{}
	l := &coordinationv1.Lease{}
	j := &backupsv1alpha1.BackupDriver{}
	if err := c.Get(ctx, clientKey(rtVictimDriver), d); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: rtVictimNS, Name: "backup-driver-" + rtVictimDriver}, l); err != nil {
		t.Fatal(err)
	}
	jobSpec := []byte("absent")
	if err := c.Get(ctx, clientKey("job"), j); err == nil {
		jobSpec, _ = json.Marshal([]any{j.Spec, j.Annotations})
	}
	victim, _ := json.Marshal([]any{d.Spec, d.Annotations, l.ResourceVersion, l.Spec})
	return string(victim) + " | job " + string(jobSpec)
}

// rtForbidden fails unless err is a 403 whose message holds each of want.
func rtForbidden(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: %v, want 403 Forbidden", what, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q lacks %q", what, err.Error(), w)
		}
	}
}
