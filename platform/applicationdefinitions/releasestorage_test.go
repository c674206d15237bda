package applicationdefinitions_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/controller/tenantrbac"
)

// fingerprint is what a Secret is: UID, resourceVersion and a hash of its
// data.
func fingerprint(t *testing.T, ctx context.Context, c client.Client, ns, name string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatalf("Secret %s/%s: %v", ns, name, err)
	}
	h := sha256.New()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.Data {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(h, "%s=%x;", k, s.Data[k])
	}
	return fmt.Sprintf("%s/%s/%s", s.UID, s.ResourceVersion, hex.EncodeToString(h.Sum(nil)))
}

// waitStorage waits until tenant namespace ns holds the release storage
// namespace of catalog source, bound to that catalog's installer.
func waitStorage(t *testing.T, ctx context.Context, c client.Client, ns, source string) string {
	t.Helper()
	storage := v1alpha1.ApplicationReleaseStorageNamespace(ns, source)
	eventually(t, ctx, "release storage "+storage+" of "+source+" in "+ns, func() error {
		sns := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: storage}, sns); err != nil {
			return err
		}
		if sns.Annotations[v1alpha1.AnnotationPackageSource] != source || len(sns.OwnerReferences) != 1 || sns.OwnerReferences[0].Name != ns {
			return fmt.Errorf("namespace %s: annotations %v, owners %v", storage, sns.Annotations, sns.OwnerReferences)
		}
		return c.Get(ctx, client.ObjectKey{Namespace: storage, Name: v1alpha1.CatalogInstallerServiceAccount(source)}, &rbacv1.RoleBinding{})
	})
	return storage
}

// readyRelease waits until HelmRelease ns/name is Ready at Helm revision
// version.
func readyRelease(t *testing.T, ctx context.Context, c client.Client, ns, name string, version int) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{}
	eventually(t, ctx, fmt.Sprintf("HelmRelease %s/%s Ready at revision %d", ns, name, version), func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, hr); err != nil {
			return err
		}
		cond := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition)
		if cond == nil || cond.Status != metav1.ConditionTrue || len(hr.Status.History) == 0 || hr.Status.History[0].Version != version {
			return fmt.Errorf("ready %+v, history %d", cond, len(hr.Status.History))
		}
		return nil
	})
	return hr
}

// forceUpgrade makes helm-controller upgrade HelmRelease ns/name once
// (meta.ForceRequestAnnotation).
func forceUpgrade(t *testing.T, ctx context.Context, c client.Client, ns, name string) {
	t.Helper()
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, hr); err != nil {
		t.Fatal(err)
	}
	orig := hr.DeepCopy()
	at := time.Now().Format(time.RFC3339Nano)
	if hr.Annotations == nil {
		hr.Annotations = map[string]string{}
	}
	hr.Annotations[meta.ReconcileRequestAnnotation], hr.Annotations[meta.ForceRequestAnnotation] = at, at
	if err := c.Patch(ctx, hr, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// reviewUser says whether user (a ServiceAccount's name) may verb
// resource in ns.
func reviewUser(t *testing.T, ctx context.Context, c client.Client, user, verb, resource, ns string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: []string{"system:serviceaccounts", "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: resource},
	}}
	if err := c.Create(ctx, sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}

// hasSecret says whether Secret ns/name exists.
func hasSecret(t *testing.T, ctx context.Context, c client.Client, ns, name string) bool {
	t.Helper()
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestLookupReadsNoOtherCatalogsSecrets (docs/operator/tenants.md, "Tenants: who may do
// what"; contracts/artifact/README.md, "Application rights"): a
// third-party catalog's chart (snoopapps' Snoop) installed beside an
// application whose chart renders credentials (vaultapps' Vault, which
// declares Secrets, as the services catalog does for Postgres) looks up
// the credentials Secret, every Secret of the tenant namespace, and the
// victim's Helm release record in vaultapps' release storage namespace.
// Its installer holds no Secret right in either (Helm's records are in
// snoopapps' own storage namespace), so its render fails with forbidden,
// it writes nothing, and the victim's Secret is unchanged. The victim
// installs, upgrades and uninstalls with its records in its storage
// namespace, never in the tenant namespace.
func TestLookupReadsNoOtherCatalogsSecrets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	const ns = "tenant-vaulted"
	if err := createTenant(ctx, dyn)("tenant-root", "vaulted", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ctx, c, ns)
	vaultStorage := waitStorage(t, ctx, c, ns, "vaultapps")
	snoopStorage := waitStorage(t, ctx, c, ns, "snoopapps")

	createApp(t, ctx, dyn, vaults, ns, "victim")
	hr := readyRelease(t, ctx, c, ns, "vault-victim", 1)
	if hr.Spec.StorageNamespace != vaultStorage {
		t.Errorf("HelmRelease vault-victim: storageNamespace %q, want %q", hr.Spec.StorageNamespace, vaultStorage)
	}
	if !hasSecret(t, ctx, c, vaultStorage, "sh.helm.release.v1.vault-victim.v1") || hasSecret(t, ctx, c, ns, "sh.helm.release.v1.vault-victim.v1") {
		t.Errorf("the release record of vault-victim is not (only) in %s", vaultStorage)
	}
	before := fingerprint(t, ctx, c, ns, "vault-victim-creds")

	createApp(t, ctx, dyn, snoops, ns, "x")
	eventually(t, ctx, "Snoop x fails with forbidden", func() error {
		ready, msg, err := readyOf(ctx, dyn, snoops, ns, "x")
		if err != nil {
			return err
		}
		if strings.HasPrefix(ready, "True") {
			t.Fatalf("Snoop x is Ready: its lookups read Secrets of another catalog (%s)", msg)
		}
		if !strings.Contains(msg, "forbidden") {
			return fmt.Errorf("Ready %s: %s", ready, msg)
		}
		// Its first lookup, of the credentials in the tenant namespace.
		for _, want := range []string{`secrets "vault-victim-creds"`, "system:serviceaccount:" + ns + ":cozy-installer-snoopapps"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Snoop x: message %q lacks %q", msg, want)
			}
		}
		return nil
	})
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "snoop-x-loot"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap snoop-x-loot: %v, want NotFound (the lookups must find nothing)", err)
	}
	// Its own records are in its own storage namespace, where it alone
	// holds Helm's storage.
	if hr := getRelease(t, ctx, c, ns, "snoop-x"); hr.Spec.StorageNamespace != snoopStorage {
		t.Errorf("HelmRelease snoop-x: storageNamespace %q, want %q", hr.Spec.StorageNamespace, snoopStorage)
	}
	for _, tc := range []struct {
		sa, ns string
		want   bool
	}{
		{"cozy-installer-snoopapps", ns, false},
		{"cozy-installer-snoopapps", vaultStorage, false},
		{"cozy-installer-snoopapps", snoopStorage, true},
		{"cozy-installer-vaultapps", vaultStorage, true},
		{"cozy-installer-vaultapps", snoopStorage, false},
		// What vaultapps declares, and nothing more (the honest limit).
		{"cozy-installer-vaultapps", ns, true},
	} {
		if got := reviewUser(t, ctx, c, "system:serviceaccount:"+ns+":"+tc.sa, "list", "secrets", tc.ns); got != tc.want {
			t.Errorf("%s may list Secrets in %s: %v, want %v", tc.sa, tc.ns, got, tc.want)
		}
	}
	for _, level := range v1alpha1.TenantLevels {
		if reviewGroup(t, ctx, c, v1alpha1.TenantGroup(ns, level), "list", "secrets", vaultStorage) {
			t.Errorf("group %s may list Secrets in %s", v1alpha1.TenantGroup(ns, level), vaultStorage)
		}
	}

	// The victim still upgrades and uninstalls, its records where they are.
	forceUpgrade(t, ctx, c, ns, "vault-victim")
	readyRelease(t, ctx, c, ns, "vault-victim", 2)
	if !hasSecret(t, ctx, c, vaultStorage, "sh.helm.release.v1.vault-victim.v2") {
		t.Errorf("no record of revision 2 of vault-victim in %s", vaultStorage)
	}
	after := fingerprint(t, ctx, c, ns, "vault-victim-creds")
	if before != after {
		t.Errorf("Secret vault-victim-creds changed: %s, then %s", before, after)
	}
	if err := dyn.Resource(vaults).Namespace(ns).Delete(ctx, "victim", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "vault-victim uninstalled", func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vault-victim"}, &helmv2.HelmRelease{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("HelmRelease vault-victim: %v", err)
		}
		var records corev1.SecretList
		if err := c.List(ctx, &records, client.InNamespace(vaultStorage), client.MatchingLabels{"name": "vault-victim", "owner": "helm"}); err != nil {
			return err
		}
		if len(records.Items) > 0 || hasSecret(t, ctx, c, ns, "vault-victim-creds") {
			return fmt.Errorf("%d records left, or the credentials Secret", len(records.Items))
		}
		return nil
	})
}

// TestReleaseWithRecordsInTheTenantNamespaceStillUpgrades: a HelmRelease
// of a catalog's application created before release storage namespaces
// (no spec.storageNamespace, so Helm's records are in the tenant
// namespace) gives its catalog's installer Helm's storage there
// (tenantrbac.LegacyStorageBinding) while it exists: it installs,
// upgrades and uninstalls; then the binding goes, and with it the
// installer's Secret rights in the tenant namespace.
func TestReleaseWithRecordsInTheTenantNamespaceStillUpgrades(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	const ns = "tenant-olden"
	if err := createTenant(ctx, dyn)("tenant-root", "olden", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ctx, c, ns)
	sa := "system:serviceaccount:" + ns + ":" + v1alpha1.CatalogInstallerServiceAccount(testSource)
	if reviewUser(t, ctx, c, sa, "list", "secrets", ns) {
		t.Errorf("%s may list Secrets in %s with no release keeping its records there", sa, ns)
	}
	// As cozystack-api wrote it before: no storageNamespace. Suspended
	// until its installer's rights are there.
	old := newStall(t, ctx, dyn, ns, "old")
	old.Spec.Suspend = true
	if err := c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "Helm's storage in "+ns+" for "+sa, func() error {
		if !reviewUser(t, ctx, c, sa, "list", "secrets", ns) {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	orig := old.DeepCopy()
	old.Spec.Suspend = false
	if err := c.Patch(ctx, old, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	readyRelease(t, ctx, c, ns, old.Name, 1)
	forceUpgrade(t, ctx, c, ns, old.Name)
	readyRelease(t, ctx, c, ns, old.Name, 2)
	if !hasSecret(t, ctx, c, ns, "sh.helm.release.v1."+old.Name+".v2") {
		t.Errorf("no record of revision 2 of %s in %s", old.Name, ns)
	}
	if err := c.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, old.Name+" uninstalled and the binding gone", func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: old.Name}, &helmv2.HelmRelease{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("HelmRelease %s: %v", old.Name, err)
		}
		if hasSecret(t, ctx, c, ns, "sh.helm.release.v1."+old.Name+".v1") || hasSecret(t, ctx, c, ns, "sh.helm.release.v1."+old.Name+".v2") {
			return fmt.Errorf("records left")
		}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: tenantrbac.LegacyStorageBinding(testSource)}, &rbacv1.RoleBinding{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("RoleBinding %s: %v", tenantrbac.LegacyStorageBinding(testSource), err)
		}
		return nil
	})
}

// newStall returns the HelmRelease of a Stall named name in ns as
// cozystack-api creates it, without spec.storageNamespace: made by a dry
// run through cozystack-api, so it is what the registry writes.
func newStall(t *testing.T, ctx context.Context, dyn dynamic.Interface, ns, name string) *helmv2.HelmRelease {
	t.Helper()
	createApp(t, ctx, dyn, stalls, ns, name+"-model")
	c := platformClient
	model := getRelease(t, ctx, c, ns, "stall-"+name+"-model")
	if err := dyn.Resource(stalls).Namespace(ns).Delete(ctx, name+"-model", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Its chart's ConfigMap is free again once it is gone.
	eventually(t, ctx, "stall-"+name+"-model gone", func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: model.Name}, &helmv2.HelmRelease{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("HelmRelease %s: %v", model.Name, err)
		}
		return nil
	})
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "stall-" + name, Namespace: ns, Labels: model.Labels}, Spec: *model.Spec.DeepCopy()}
	hr.Spec.StorageNamespace = ""
	return hr
}

func getRelease(t *testing.T, ctx context.Context, c client.Client, ns, name string) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, hr); err != nil {
		t.Fatal(err)
	}
	return hr
}
