package core_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/registry/core"
)

func names(l *unstructured.UnstructuredList) []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.GetName())
	}
	slices.Sort(out)
	return out
}

// TestTenantSecretsFollowTheADRules (contract K5, "Tenant roles"; K1,
// spec.secrets): in tenant-alice, the SecretDemo applications db and
// db-backup, and Secrets made by db's release or not. Alice's use group
// reads, through core.cozystack.io tenantsecrets, exactly the Secrets of
// db's release that the AD selects: the "-credentials" one and the
// labelled one, not the excluded "-internal", not an unselected one, not
// Helm's release storage, not a driver's credential copy (no Helm marks)
// even where an application's rule renders its name (db-backup's
// "secretdemo-db-backup-credentials"), not a Secret claiming a release of
// another namespace. Others are 404. Get, list with field and label
// selectors, the table, and a watch that sends only TenantSecrets.
func TestTenantSecretsFollowTheADRules(t *testing.T) {
	start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	createApp(t, ctx, alice, "db")
	createApp(t, ctx, alice, "db-backup")
	rel := prefix + "db"
	mustCreate(t, ctx,
		secret(alice, rel+"-credentials", rel, nil),
		secret(alice, rel+"-tls", rel, map[string]string{published: "true"}),
		secret(alice, rel+"-internal", rel, map[string]string{published: "true"}),
		secret(alice, rel+"-other", rel, nil),
		secret(alice, "sh.helm.release.v1."+rel+".v1", "", map[string]string{"owner": "helm", "name": rel}),
		// A driver's copy of a shared store's credentials, beside the
		// Cluster: the name db-backup's rule renders, no Helm marks.
		secret(alice, rel+"-backup-credentials", "", nil),
		// Helm marks of a release of another namespace.
		func() *corev1.Secret {
			s := secret(alice, prefix+"db-backup-credentials-x", prefix+"db-backup", nil)
			s.Annotations[core.AnnotationReleaseNamespace] = bob
			return s
		}(),
	)
	use := as(t, v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelUse)).Resource(tsGVR).Namespace(alice)

	list, err := use.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list tenantsecrets as %s-use: %v", alice, err)
	}
	if got, want := names(list), []string{rel + "-credentials", rel + "-tls"}; !slices.Equal(got, want) {
		t.Errorf("tenantsecrets of %s = %v, want %v", alice, got, want)
	}
	for _, it := range list.Items {
		if app, _, _ := unstructured.NestedStringMap(it.Object, "application"); app["kind"] != kind || app["name"] != "db" {
			t.Errorf("%s: application = %v, want %s/db", it.GetName(), app, kind)
		}
	}

	got, err := use.Get(ctx, rel+"-credentials", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pw, _, _ := unstructured.NestedString(got.Object, "data", "password"); pw != base64.StdEncoding.EncodeToString([]byte("pw-of-"+rel+"-credentials")) {
		t.Errorf("data.password = %q", pw)
	}
	for _, name := range []string{rel + "-internal", rel + "-other", "sh.helm.release.v1." + rel + ".v1", rel + "-backup-credentials", prefix + "db-backup-credentials-x", "absent"} {
		_, err := use.Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("get tenantsecret %s: %v, want 404 NotFound", name, err)
		} else if !strings.Contains(err.Error(), "tenantsecrets.core.cozystack.io") {
			t.Errorf("get tenantsecret %s: %v, want it to name tenantsecrets.core.cozystack.io", name, err)
		}
	}

	byName, err := use.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + rel + "-tls"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(byName); !slices.Equal(got, []string{rel + "-tls"}) {
		t.Errorf("field selector metadata.name: %v", got)
	}
	byLabel, err := use.List(ctx, metav1.ListOptions{LabelSelector: published + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(byLabel); !slices.Equal(got, []string{rel + "-tls"}) {
		t.Errorf("label selector: %v", got)
	}
	if _, err := use.List(ctx, metav1.ListOptions{FieldSelector: "data.password=x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("unsupported field selector: %v, want 400", err)
	}

	// The table kubectl asks for.
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "u", Groups: []string{v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelUse), "system:authenticated"}}
	cfg.GroupVersion, cfg.APIPath = &core.GroupVersion, "/apis"
	cfg.NegotiatedSerializer = core.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	table := &metav1.Table{}
	if err := rc.Get().Namespace(alice).Resource(core.TenantSecretsResource).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Into(table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if want := []string{"Name", "Type", "Data", "Application", "Age"}; !slices.Equal(cols, want) || len(table.Rows) != 2 ||
		table.Rows[0].Cells[3] != kind+"/db" {
		t.Errorf("table: columns %v (want %v), rows %v", cols, want, table.Rows)
	}

	// A watch sends the new TenantSecret, not the Secrets created before
	// it that are none.
	w, err := use.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreate(t, ctx, secret(alice, rel+"-other-2", rel, nil), secret(alice, rel+"-backup-credentials-2", "", nil),
		secret(alice, rel+"-new", rel, map[string]string{published: "true"}))
	select {
	case ev := <-w.ResultChan():
		u, _ := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Added || u == nil || u.GetName() != rel+"-new" || u.GetKind() != core.TenantSecretKind {
			t.Errorf("first watch event: %s %v, want ADDED TenantSecret %s-new", ev.Type, ev.Object, rel)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
}

// TestTenantsReadNoRawSecrets (contract K5, "Tenant roles"): a driver's
// copy of the platform's object-store credentials in tenant-alice (as the
// CNPG driver projects them, "<cluster>-backup-credentials" and a
// restore's "<release>-recovery-credentials") is readable by no group of
// alice nor of bob (get, list, watch on Secrets,
// SubjectAccessReview); TenantSecrets are readable from use up in one's own
// namespace only, and a request of bob's use group for alice's is refused
// 403 by kube-apiserver.
func TestTenantsReadNoRawSecrets(t *testing.T) {
	start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The CNPG driver's two copies: the Cluster's archive credentials and
	// a restore's recovery credentials ("<release>-recovery-credentials").
	for _, copyName := range []string{"postgres-db-backup-credentials", "postgres-db2-recovery-credentials"} {
		mustCreate(t, ctx, secret(alice, copyName, "", nil))
		checkNoRawRead(t, ctx, copyName)
	}
	for _, group := range []string{v1alpha1.TenantGroup(bob, v1alpha1.TenantLevelUse), v1alpha1.TenantGroup(bob, v1alpha1.TenantLevelSuperAdmin), v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelView)} {
		_, err := as(t, group).Resource(tsGVR).Namespace(alice).List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("list tenantsecrets in %s as %s: %v, want 403 Forbidden", alice, group, err)
		}
	}
	if _, err := as(t, v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelAdmin)).Resource(corev1.SchemeGroupVersion.WithResource("secrets")).
		Namespace(alice).Get(ctx, "postgres-db-backup-credentials", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("get secret postgres-db-backup-credentials as %s-admin: %v, want 403 Forbidden", alice, err)
	}
}

// checkNoRawRead: no group of alice or bob may get, list or watch Secrets
// in alice's namespace (copyName for get); TenantSecrets only alice's use
// and above.
func checkNoRawRead(t *testing.T, ctx context.Context, copyName string) {
	t.Helper()
	for _, home := range []string{alice, bob} {
		for _, level := range v1alpha1.TenantLevels {
			group := v1alpha1.TenantGroup(home, level)
			for _, verb := range []string{"get", "list", "watch"} {
				name := ""
				if verb == "get" {
					name = copyName
				}
				ok, err := review(ctx, group, alice, "", "secrets", verb, name)
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					t.Errorf("%s may %s secrets %s in %s: tenants read Secrets only as TenantSecrets (k5-cozy-lib.md, Tenant roles)", group, verb, name, alice)
				}
				ok, err = review(ctx, group, alice, core.GroupName, core.TenantSecretsResource, verb, name)
				if err != nil {
					t.Fatal(err)
				}
				if want := home == alice && level != v1alpha1.TenantLevelView; ok != want {
					t.Errorf("%s may %s tenantsecrets in %s: %v, want %v", group, verb, alice, ok, want)
				}
			}
		}
	}
}
