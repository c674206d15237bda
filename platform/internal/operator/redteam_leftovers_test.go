package operator_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
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
	"cozystack.io/platform/internal/status"
	"cozystack.io/platform/tenantaccess"
)

// The leftovers and limits (docs/operator/catalogs.md, "Catalog
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

// addComponents returns a forge callback appending n components named
// <prefix><i> to the catalog's first variant, each with the variant's first
// component's chart, namespace and rules.
func addComponents(prefix string, n int) func(map[string]any) {
	return func(c map[string]any) {
		v := c["variants"].([]any)[0].(map[string]any)
		comps := v["components"].([]any)
		first := comps[0].(map[string]any)
		for i := range n {
			comp := map[string]any{}
			for k, val := range first {
				comp[k] = val
			}
			comp["name"] = fmt.Sprintf("%s%d", prefix, i)
			comps = append(comps, comp)
		}
		v["components"] = comps
	}
}

// withShortNames adds shortNames to the ApplicationDefinition def of an
// appCatalog directory.
func withShortNames(t *testing.T, dir, def string, short ...string) string {
	t.Helper()
	rewrite(t, dir, "applicationdefinitions/"+def+".yaml", "    plural: "+def+"s\n", "    plural: "+def+"s\n    shortNames: ["+strings.Join(short, ", ")+"]\n")
	return dir
}

// eventNotes returns the message the events about PackageSource name
// carry: the notes numbered "(i/n) " (status.Writer) put together in
// order, or the plain notes joined by newlines.
func eventNotes(t *testing.T, name string) string {
	t.Helper()
	var list eventsv1.EventList
	if err := k(t).List(ctxT(t), &list); err != nil {
		t.Fatal(err)
	}
	parts := map[int]map[int]string{} // n -> i -> note
	var plain []string
	for _, e := range list.Items {
		if e.Regarding.Kind != "PackageSource" || e.Regarding.Name != name {
			continue
		}
		var i, n int
		if _, err := fmt.Sscanf(e.Note, "(%d/%d) ", &i, &n); err != nil {
			plain = append(plain, e.Note)
			continue
		}
		if parts[n] == nil {
			parts[n] = map[int]string{}
		}
		if _, ok := parts[n][i]; !ok {
			parts[n][i] = strings.TrimPrefix(e.Note, fmt.Sprintf("(%d/%d) ", i, n))
		}
	}
	out := strings.Join(plain, "\n")
	for n, byIndex := range parts {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(byIndex[i])
		}
		out += "\n" + b.String()
	}
	return out
}

// TestRedTeamLeftoverCatalogs: the leftovers and limits (docs/operator/catalogs.md,
// "Catalog delivery", "What a third-party catalog gets"), one attacking
// catalog per row, against the red-team victim (redteam_test.go), whose
// objects are fingerprinted before and after: a catalog over the bounds,
// a release prefix overlapping the victim's, short names shadowing a
// built-in resource (refused at pull) and a served CRD (refused by the
// operator from discovery), and a catalog whose refusal is long (its
// condition stays short, the events carry it all).
func TestRedTeamLeftoverCatalogs(t *testing.T) {
	start(t)
	c := k(t)
	push(t, victimCatalog(t, "1.0.0", "rtgizmo"), "e2e/"+victim, "1.0.0")
	create(t, ociSource(victim, "e2e/"+victim, "1.0.0"))
	waitSource(t, victim, "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	create(t, newPackage(victim, victim, "", false))
	waitPackage(t, victim, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	t.Cleanup(func() {
		for _, ad := range []string{"rtgizmo", "rtprefixx", "rtshadowx"} {
			_ = c.Delete(context.Background(), &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: ad}})
		}
	})
	before := snapshot(t)

	rows := []struct {
		name                    string
		source                  func(t *testing.T, name string) *v1alpha1.PackageSource
		wantSource, wantPackage string
		message                 []string
		// long: the refusal is longer than a condition holds; events
		// carry it, ending with eventsEnd.
		long      bool
		eventsEnd string
	}{{
		name: "rtmany", wantSource: v1alpha1.ReasonInvalidArtifact, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{"is component name 101", "at most 100 distinct component names"},
		// 101 components, each a chart the source would publish.
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			return layoutSource(name, forge(t, simpleCatalog(t, name, "1.0.0", "e2e-"+name, "x"), "1.0.0", addComponents("c", 100), nil), "1.0.0")
		},
	}, {
		name: "rtprefix", wantSource: v1alpha1.ReasonConflict, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{`ApplicationDefinition rtprefixx (its release prefix "rtgizmo-x-" and "rtgizmo-" of ApplicationDefinition rtgizmo of PackageSource ` + victim + " overlap",
			"none of its charts was published"},
		// Its kind's HelmReleases rtgizmo-x-<name> collide with the
		// victim's rtgizmo-<x-name>.
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			dir := appCatalog(t, name, "1.0.0", map[string]string{"rtprefixx": "Rtprefixx"})
			rewrite(t, dir, "applicationdefinitions/rtprefixx.yaml", "prefix: rtprefixx-", "prefix: rtgizmo-x-")
			push(t, dir, "e2e/"+name, "1.0.0")
			return ociSource(name, "e2e/"+name, "1.0.0")
		},
	}, {
		name: "rtshortcm", wantSource: v1alpha1.ReasonInvalidArtifact, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{"spec.application.shortNames[0]", `"cm" is a name of the built-in resource configmaps`},
		// cozypkg build refuses it: forged.
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			dir := appCatalog(t, name, "1.0.0", map[string]string{"rtshortx": "Rtshortx"})
			return layoutSource(name, forge(t, dir, "1.0.0", nil, func(_ string, data []byte) []byte {
				return []byte(strings.Replace(string(data), "    plural: rtshortxs\n", "    plural: rtshortxs\n    shortNames: [cm]\n", 1))
			}), "1.0.0")
		},
	}, {
		name: "rtshadow", wantSource: v1alpha1.ReasonConflict, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{`ApplicationDefinition rtshadowx (its short name "hr" is a name of the served resource helmreleases.helm.toolkit.fluxcd.io`},
		// hr is no built-in name, so the build lets it through; the
		// cluster serves it (helm-controller's CRD).
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			push(t, withShortNames(t, appCatalog(t, name, "1.0.0", map[string]string{"rtshadowx": "Rtshadowx"}), "rtshadowx", "hr"), "e2e/"+name, "1.0.0")
			return ociSource(name, "e2e/"+name, "1.0.0")
		},
	}, {
		name: "rtlong", wantSource: v1alpha1.ReasonInvalidArtifact, wantPackage: v1alpha1.ReasonSourceNotReady,
		message: []string{"variants[0].components[1].name", "see the events of this object"},
		long:    true, eventsEnd: `"Bad_59"`,
		// 60 invalid component names: a refusal of about 10 KiB.
		source: func(t *testing.T, name string) *v1alpha1.PackageSource {
			return layoutSource(name, forge(t, simpleCatalog(t, name, "1.0.0", "e2e-"+name, "x"), "1.0.0", addComponents("Bad_", 60), nil), "1.0.0")
		},
	}}
	outer := t
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			create(outer, row.source(t, row.name))
			ps := waitSource(t, row.name, row.wantSource, sourceReady(False, row.wantSource))
			msg := ready(ps.Status.Conditions).Message
			if len(msg) > status.MaxMessage {
				t.Errorf("the Ready condition's message has %d bytes, over %d", len(msg), status.MaxMessage)
			}
			if row.long {
				eventually(t, "the whole refusal in events", func() error {
					if notes := eventNotes(t, row.name); !strings.Contains(notes, row.eventsEnd) {
						return fmt.Errorf("the events of PackageSource %s do not hold %s: %.300q", row.name, row.eventsEnd, notes)
					}
					return nil
				})
			}
			if eas := artifactsOf(t, ps.Name); len(eas) > 0 {
				t.Errorf("PackageSource %s was refused but published %d ExternalArtifacts", ps.Name, len(eas))
			}
			create(outer, newPackage(row.name, row.name, "", false))
			p := waitPackage(t, row.name, row.wantPackage, packageReady(False, row.wantPackage))
			expectNothingInstalled(t, row.name)
			msg += "\n" + ready(p.Status.Conditions).Message
			mustContain(t, "conditions", msg, row.message...)
			t.Logf("source %s, package %s: %s", row.wantSource, row.wantPackage, msg)
		})
	}
	for _, ad := range []string{"rtprefixx", "rtshortx", "rtshadowx"} {
		if err := c.Get(ctxT(t), client.ObjectKey{Name: ad}, &v1alpha1.ApplicationDefinition{}); err == nil {
			t.Errorf("ApplicationDefinition %s of a refused catalog was installed", ad)
		}
	}
	// The refused sources retry (the first retry is after 10 s) before
	// the victim is compared.
	time.Sleep(12 * time.Second)
	expectUnchanged(t, "the victim", before, snapshot(t))
	t.Logf("%d objects of the victim compared before and after %d attacks", len(before), len(rows))
	waitSource(t, victim, "still Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	waitPackage(t, victim, "still Installed", packageReady(True, v1alpha1.ReasonInstalled))
}

// TestRedTeamPublishOnDemand: a PackageSource with no Package created one
// ExternalArtifact per component it declares (no consent to install
// anything yet). Now a source publishes a component's chart only while a
// Package enables it: none for a catalog of 40 components nobody
// installs, one when a Package installs the one-component variant, none
// again when that Package goes.
func TestRedTeamPublishOnDemand(t *testing.T) {
	start(t)
	const name = "rtdemand"
	dir := simpleCatalog(t, name, "1.0.0", "e2e-"+name, "x")
	// A second variant, big, of 40 components sharing web's chart.
	var big strings.Builder
	big.WriteString("  - name: big\n    components:\n")
	for i := range 40 {
		fmt.Fprintf(&big, "      - {name: c%d, chart: charts/web, namespace: e2e-%s}\n", i, name)
	}
	f, err := os.OpenFile(dir+"/catalog.yaml", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(big.String()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	push(t, dir, "e2e/"+name, "1.0.0")
	ps := ociSource(name, "e2e/"+name, "1.0.0")
	create(t, ps)
	waitSource(t, name, "Ready", sourceReady(True, v1alpha1.ReasonArtifactReady))
	// Give a wrong implementation the time to publish.
	time.Sleep(2 * time.Second)
	if eas := artifactsOf(t, name); len(eas) != 0 {
		t.Fatalf("PackageSource %s with no Package published %d ExternalArtifacts", name, len(eas))
	}

	pkg := newPackage(name, name, "", false)
	create(t, pkg)
	waitPackage(t, name, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	eas := artifactsOf(t, name)
	if len(eas) != 1 || eas[0].Name != v1alpha1.ComponentArtifactName(name, "web") {
		var got []string
		for _, ea := range eas {
			got = append(got, ea.Name)
		}
		t.Errorf("ExternalArtifacts %v, want only the enabled component web's", got)
	}

	if err := k(t).Delete(ctxT(t), pkg); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pkg)
	eventually(t, "the component's chart withdrawn with its last Package", func() error {
		if eas := artifactsOf(t, name); len(eas) != 0 {
			return fmt.Errorf("%d ExternalArtifacts left", len(eas))
		}
		return nil
	})
}
