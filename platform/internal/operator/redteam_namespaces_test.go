package operator_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"oras.land/oras-go/v2/content/oci"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/tenantaccess"
)

// The namespace-claim attack, as a third-party catalog author makes
// it: claim namespaces before they exist (another Package's release
// storage namespace, a tenant's name, a fresh one a privileged catalog
// will use), then act as the other Package's ServiceAccounts there.
const (
	nsOwner  = "rtnsa"              // non-privileged, claims sharedNS first
	nsJoiner = "rtnsb"              // privileged, declares sharedNS later
	sharedNS = "e2e-rtns-shared"    // the namespace both declare
	leftNS   = "e2e-rtns-left"      // claimed by a Package that is deleted
	laterPkg = "rtnslater"          // a Package installed after the attack
	tenantNS = "tenant-rtns-victim" // a tenant's name
)

// nsCatalog is a catalog name with one component "web" in namespace,
// privileged or not, whose chart renders a ConfigMap and a ServiceAccount
// <release>-worker. rules are added to the component's (YAML list items).
func nsCatalog(t *testing.T, name, namespace string, privileged bool, rules string) string {
	t.Helper()
	extra := ""
	if privileged {
		extra = "\n        privileged: true"
	}
	return writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %s
version: 1.0.0
minPlatformVersion: 0.1.0
variants:
  - name: default
    components:
      - name: web
        chart: charts/web
        namespace: %s%s`+configMapRule+`
          - apiGroups: [""]
            resources: [serviceaccounts]
            verbs: [get, list, watch, create, update, patch, delete]%s
`, name, namespace, extra, rules), chart{dir: "charts/web", values: "greeting: " + name + "\n", templates: map[string]string{
		"configmap.yaml": valuesConfigMap,
		"sa.yaml":        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ .Release.Name }}-worker\n",
	}})
}

// setShared sets Package name's spec.sharedNamespaces to share namespace
// with others.
func setShared(t *testing.T, name, namespace string, others ...string) {
	t.Helper()
	c := k(t)
	p := &v1alpha1.Package{}
	if err := c.Get(ctxT(t), client.ObjectKey{Name: name}, p); err != nil {
		t.Fatal(err)
	}
	orig := p.DeepCopy()
	p.Spec.SharedNamespaces = []v1alpha1.SharedNamespace{{Namespace: namespace, Packages: others}}
	if err := c.Patch(ctxT(t), p, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// claimOf returns the claim annotations of Namespace name.
func claimOf(t *testing.T, name string) map[string]string {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := k(t).Get(ctxT(t), client.ObjectKey{Name: name}, ns); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range []string{names.AnnotationPackage, names.AnnotationPackageUID, names.AnnotationCatalog, names.AnnotationSharedWith, names.AnnotationSharedReleases} {
		if v, ok := ns.Annotations[a]; ok {
			out[a] = v
		}
	}
	return out
}

// TestNamespacesOwnedBeforeTheyExist (docs/operator/catalogs.md, "Catalog delivery",
// "Ownership" and "What a third-party catalog gets"):
// reserved names are refused for every component when a catalog is built
// and again when it is pulled; a namespace belongs to the Package that
// claims it first, privileged or not; two Packages share one only by
// mutual consent; in a shared namespace no Package runs Pods as, or gets
// tokens of, another's ServiceAccounts; a deleted Package's namespace is
// taken over only by a reinstall of its catalog.
func TestNamespacesOwnedBeforeTheyExist(t *testing.T) {
	start(t)
	c := k(t)
	if err := tenantaccess.Apply(ctxT(t), c); err != nil {
		t.Fatal(err)
	}

	t.Run("reserved names", func(t *testing.T) {
		const name = "rtnsreserved"
		storage := names.StorageNamespace(laterPkg)
		// The build refuses them.
		dir := writeCatalog(t, fmt.Sprintf(`apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: %s
version: 1.0.0
minPlatformVersion: 0.1.0
variants:
  - name: default
    components:
      - name: grab
        chart: charts/web
        namespace: %s
      - name: tenant
        chart: charts/web
        namespace: %s
        privileged: true
`, name, storage, tenantNS), chart{dir: "charts/web"})
		store, err := oci.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, err = build.Build(ctxT(t), dir, store, build.Options{Tag: "1.0.0"})
		if err == nil {
			t.Fatal("the build accepted components in reserved namespaces")
		}
		mustContain(t, "build error", err.Error(),
			`variants[0].components[0].namespace: Invalid value: "`+storage+`": namespace names beginning with "cozy-releases-" are reserved for Packages' release storage namespaces`,
			`variants[0].components[1].namespace: Invalid value: "`+tenantNS+`": namespace names beginning with "tenant-" are reserved for tenant namespaces`,
			"privileged or not")

		// Forged past the build, the pull refuses them.
		ok := nsCatalog(t, name, "e2e-"+name, true, "")
		layout := forge(t, ok, "1.0.0", func(cat map[string]any) {
			comps := cat["variants"].([]any)[0].(map[string]any)["components"].([]any)
			first := comps[0].(map[string]any)
			first["namespace"] = storage
			second := map[string]any{}
			for k, v := range first {
				second[k] = v
			}
			second["name"], second["namespace"] = "tenant", tenantNS
			cat["variants"].([]any)[0].(map[string]any)["components"] = append(comps, second)
		}, nil)
		create(t, layoutSource(name, layout, "1.0.0"))
		ps := waitSource(t, name, "InvalidArtifact", sourceReady(False, v1alpha1.ReasonInvalidArtifact))
		mustContain(t, "source message", ready(ps.Status.Conditions).Message,
			"variants[0].components[0].namespace", "cozy-releases-", "variants[0].components[1].namespace", "tenant-")
		expectNothingPublished(t, ps)
		create(t, newPackage(name, name, "", true))
		waitPackage(t, name, "SourceNotReady", packageReady(False, v1alpha1.ReasonSourceNotReady))
		expectNothingInstalled(t, name)
		for _, ns := range []string{storage, tenantNS} {
			if err := c.Get(ctxT(t), client.ObjectKey{Name: ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
				t.Errorf("namespace %s exists (%v)", ns, err)
			}
		}

		// The Package installed later gets its storage namespace, claimed
		// for it alone.
		push(t, simpleCatalog(t, laterPkg, "1.0.0", "e2e-"+laterPkg, "x"), "e2e/"+laterPkg, "1.0.0")
		create(t, ociSource(laterPkg, "e2e/"+laterPkg, "1.0.0"))
		create(t, newPackage(laterPkg, laterPkg, "", false))
		p := waitPackage(t, laterPkg, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
		if got := claimOf(t, storage); got[names.AnnotationPackageUID] != string(p.UID) || got[names.AnnotationCatalog] != laterPkg {
			t.Errorf("storage namespace %s claims %v, want Package %s (%s) of catalog %s", storage, got, laterPkg, p.UID, laterPkg)
		}
	})

	// The owner: a Package that is not privileged claims a fresh
	// namespace; its chart makes a ServiceAccount there.
	push(t, nsCatalog(t, nsOwner, sharedNS, false, `
          - apiGroups: [""]
            resources: [pods]
            verbs: [create]`), "e2e/"+nsOwner, "1.0.0")
	create(t, ociSource(nsOwner, "e2e/"+nsOwner, "1.0.0"))
	create(t, newPackage(nsOwner, nsOwner, "", false))
	owner := waitPackage(t, nsOwner, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
	if got := claimOf(t, sharedNS); got[names.AnnotationPackage] != nsOwner || got[names.AnnotationPackageUID] != string(owner.UID) || got[names.AnnotationCatalog] != nsOwner {
		t.Fatalf("namespace %s claims %v, want Package %s (%s) of catalog %s", sharedNS, got, nsOwner, owner.UID, nsOwner)
	}

	// The joiner: privileged, allowed, with the rights to mint tokens and
	// start Pods in the namespace it declares.
	tokenRules := `
          - apiGroups: [""]
            resources: [pods, secrets, serviceaccounts/token]
            verbs: [create]
          - apiGroups: [apps]
            resources: [deployments, statefulsets]
            verbs: [create]
          - apiGroups: [batch]
            resources: [jobs, cronjobs]
            verbs: [create]`
	push(t, nsCatalog(t, nsJoiner, sharedNS, true, tokenRules), "e2e/"+nsJoiner, "1.0.0")
	create(t, ociSource(nsJoiner, "e2e/"+nsJoiner, "1.0.0"))

	outer := t // the joiner lives until the end of the test
	t.Run("privileged into a claimed namespace", func(t *testing.T) {
		before := fingerprint(t, nsOwner, sharedNS)
		create(outer, newPackage(nsJoiner, nsJoiner, "", true))
		p := waitPackage(t, nsJoiner, "NamespaceNotAllowed", packageReady(False, v1alpha1.ReasonNamespaceNotAllowed))
		mustContain(t, "message", ready(p.Status.Conditions).Message,
			"component web: namespace "+sharedNS+" belongs to Package "+nsOwner+" (catalog "+nsOwner+")",
			"both consent",
			"on Package "+nsJoiner+" (this one) spec.sharedNamespaces: [{namespace: "+sharedNS+", packages: ["+nsOwner+"]}]",
			"on Package "+nsOwner+" spec.sharedNamespaces: [{namespace: "+sharedNS+", packages: ["+nsJoiner+"]}]")
		expectNothingInstalled(t, nsJoiner)
		if err := c.Get(ctxT(t), client.ObjectKey{Name: names.StorageNamespace(nsJoiner)}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			t.Errorf("the refused Package's storage namespace exists (%v)", err)
		}
		// A refusal is final: the refused Package retries meanwhile.
		time.Sleep(3 * time.Second)
		expectUnchanged(t, "Package "+nsOwner, before, fingerprint(t, nsOwner, sharedNS))

		// Consent on one side only is not enough.
		setShared(t, nsJoiner, sharedNS, nsOwner)
		p = waitPackage(t, nsJoiner, "NamespaceNotAllowed, asking the owner", func(p *v1alpha1.Package) bool {
			c := ready(p.Status.Conditions)
			return packageReady(False, v1alpha1.ReasonNamespaceNotAllowed)(p) && !strings.Contains(c.Message, "(this one)")
		})
		mustContain(t, "message", ready(p.Status.Conditions).Message, "on Package "+nsOwner+" spec.sharedNamespaces: [{namespace: "+sharedNS+", packages: ["+nsJoiner+"]}]")
		expectNothingInstalled(t, nsJoiner)
		expectUnchanged(t, "Package "+nsOwner, before, fingerprint(t, nsOwner, sharedNS))
	})

	t.Run("shared by mutual consent", func(t *testing.T) {
		setShared(t, nsOwner, sharedNS, nsJoiner)
		joiner := waitPackage(t, nsJoiner, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
		waitPackage(t, nsOwner, "still Installed", packageReady(True, v1alpha1.ReasonInstalled))
		got := claimOf(t, sharedNS)
		if got[names.AnnotationPackageUID] != string(owner.UID) {
			t.Errorf("the owner changed: %v", got)
		}
		mustContain(t, "sharers", got[names.AnnotationSharedWith], `"package":"`+nsJoiner+`"`, `"uid":"`+string(joiner.UID)+`"`)
		mustContain(t, "releases", got[names.AnnotationSharedReleases], names.HelmRelease(nsJoiner, "web")+"="+nsJoiner)
	})

	t.Run("ServiceAccounts of a shared namespace", func(t *testing.T) {
		ownerSA := names.HelmRelease(nsOwner, "web") + "-worker"
		joinerSA := names.HelmRelease(nsJoiner, "web") + "-worker"
		for _, sa := range []string{ownerSA, joinerSA} {
			eventually(t, "ServiceAccount "+sa, func() error {
				return c.Get(ctxT(t), client.ObjectKey{Namespace: sharedNS, Name: sa}, &corev1.ServiceAccount{})
			})
		}
		// as returns a client acting as ServiceAccount sa of the shared
		// namespace (an installer, as helm-controller impersonates it).
		as := func(sa string) client.Client {
			cfg := rest.CopyConfig(env.Config)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + sharedNS + ":" + sa,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + sharedNS, "system:authenticated"}}
			cl, err := client.New(cfg, client.Options{Scheme: controllermanager.Scheme()})
			if err != nil {
				t.Fatal(err)
			}
			return cl
		}
		pod := func(sa string) *corev1.Pod {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "rtns-", Namespace: sharedNS},
				Spec: corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "c", Image: "example.invalid/x"}}}}
		}
		deployment := func(sa string) *appsv1.Deployment {
			labels := map[string]string{"app": "rtns"}
			return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{GenerateName: "rtns-", Namespace: sharedNS},
				Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod(sa).Spec}}}
		}
		statefulSet := func(sa string) *appsv1.StatefulSet {
			d := deployment(sa)
			return &appsv1.StatefulSet{ObjectMeta: d.ObjectMeta, Spec: appsv1.StatefulSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template}}
		}
		job := func(sa string) batchv1.JobSpec {
			spec := pod(sa).Spec
			spec.RestartPolicy = corev1.RestartPolicyNever
			return batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: spec}}
		}
		cronJob := func(sa string) *batchv1.CronJob {
			return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{GenerateName: "rtns-", Namespace: sharedNS},
				Spec: batchv1.CronJobSpec{Schedule: "@daily", JobTemplate: batchv1.JobTemplateSpec{Spec: job(sa)}}}
		}
		tokenSecret := func(sa string) *corev1.Secret {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{GenerateName: "rtns-", Namespace: sharedNS,
				Annotations: map[string]string{corev1.ServiceAccountNameKey: sa}}, Type: corev1.SecretTypeServiceAccountToken}
		}
		dry := client.DryRunAll
		joiner := as(names.Installer(nsJoiner, "web"))
		ownerInstaller := as(names.Installer(nsOwner, "web"))

		// What each may do with its own ServiceAccount.
		for what, err := range map[string]error{
			"the joiner's Pod as its own ServiceAccount":                joiner.Create(ctxT(t), pod(joinerSA), dry),
			"the joiner's Deployment as its own ServiceAccount":         joiner.Create(ctxT(t), deployment(joinerSA), dry),
			"the joiner's CronJob as its own ServiceAccount":            joiner.Create(ctxT(t), cronJob(joinerSA), dry),
			"the owner's Pod as the namespace's default ServiceAccount": ownerInstaller.Create(ctxT(t), pod(""), dry),
			"the joiner's token Secret of its own":                      joiner.Create(ctxT(t), tokenSecret(joinerSA), dry),
			"the joiner's token of its own ServiceAccount": joiner.SubResource("token").Create(ctxT(t),
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sharedNS, Name: joinerSA}}, &authenticationv1.TokenRequest{}, client.DryRunAll),
		} {
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		}
		// The attack: the joiner, privileged, acts as the owner's
		// ServiceAccount; the owner as the joiner's.
		for what, err := range map[string]error{
			"a Pod of " + nsJoiner + " as " + ownerSA:         joiner.Create(ctxT(t), pod(ownerSA), dry),
			"a Deployment of " + nsJoiner + " as " + ownerSA:  joiner.Create(ctxT(t), deployment(ownerSA), dry),
			"a StatefulSet of " + nsJoiner + " as " + ownerSA: joiner.Create(ctxT(t), statefulSet(ownerSA), dry),
			"a Job of " + nsJoiner + " as " + ownerSA: joiner.Create(ctxT(t),
				&batchv1.Job{ObjectMeta: metav1.ObjectMeta{GenerateName: "rtns-", Namespace: sharedNS}, Spec: job(ownerSA)}, dry),
			"a CronJob of " + nsJoiner + " as " + ownerSA:                         joiner.Create(ctxT(t), cronJob(ownerSA), dry),
			"a Pod of " + nsJoiner + " as the namespace's default ServiceAccount": joiner.Create(ctxT(t), pod(""), dry),
			"a token Secret of " + ownerSA:                                        joiner.Create(ctxT(t), tokenSecret(ownerSA), dry),
			"a TokenRequest for " + ownerSA: joiner.SubResource("token").Create(ctxT(t),
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sharedNS, Name: ownerSA}}, &authenticationv1.TokenRequest{}, client.DryRunAll),
			"a ServiceAccount of " + nsJoiner + " named as " + nsOwner + "'s": joiner.Create(ctxT(t),
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sharedNS, Name: names.HelmRelease(nsOwner, "web") + "-stolen"}}, dry),
		} {
			if err == nil {
				t.Errorf("%s was allowed", what)
				continue
			}
			mustContain(t, what, err.Error(), "shared-namespace-identities.cozystack.io", "belongs to Package "+nsOwner, "(Package "+nsJoiner+")")
		}
		if err := ownerInstaller.Create(ctxT(t), pod(joinerSA), dry); err == nil {
			t.Errorf("a Pod of %s as %s was allowed", nsOwner, joinerSA)
		} else {
			mustContain(t, "the owner's Pod", err.Error(), "belongs to Package "+nsJoiner, "(Package "+nsOwner+")")
		}
	})

	t.Run("a deleted Package's namespace", func(t *testing.T) {
		const gone, stranger = "rtnsgone", "rtnsstranger"
		push(t, simpleCatalog(t, gone, "1.0.0", leftNS, "x"), "e2e/"+gone, "1.0.0")
		create(t, ociSource(gone, "e2e/"+gone, "1.0.0"))
		p := newPackage(gone, gone, "", false)
		create(t, p)
		first := waitPackage(t, gone, "Installed", packageReady(True, v1alpha1.ReasonInstalled))
		if err := c.Delete(ctxT(t), p); err != nil {
			t.Fatal(err)
		}
		waitGone(t, &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: gone}})
		if got := claimOf(t, leftNS); got[names.AnnotationPackageUID] != string(first.UID) {
			t.Fatalf("namespace %s claims %v after its Package went, want the claim kept", leftNS, got)
		}
		before := fingerprint(t, gone, leftNS)

		// Another catalog, privileged and allowed, is refused.
		push(t, privilegedCatalog(t, stranger, "1.0.0", leftNS, "x"), "e2e/"+stranger, "1.0.0")
		create(t, ociSource(stranger, "e2e/"+stranger, "1.0.0"))
		create(t, newPackage(stranger, stranger, "", true))
		sp := waitPackage(t, stranger, "NamespaceNotAllowed", packageReady(False, v1alpha1.ReasonNamespaceNotAllowed))
		mustContain(t, "message", ready(sp.Status.Conditions).Message,
			"namespace "+leftNS+" belongs to Package "+gone+" (deleted), of catalog "+gone, "only a Package of that catalog")
		expectNothingInstalled(t, stranger)
		expectUnchanged(t, "the deleted Package "+gone, before, fingerprint(t, gone, leftNS))

		// A reinstall of the same catalog, under another name, takes it.
		create(t, newPackage(gone+"2", gone, "", false))
		again := waitPackage(t, gone+"2", "Installed", packageReady(True, v1alpha1.ReasonInstalled))
		if got := claimOf(t, leftNS); got[names.AnnotationPackage] != gone+"2" || got[names.AnnotationPackageUID] != string(again.UID) {
			t.Errorf("namespace %s claims %v, want the reinstall %s (%s)", leftNS, got, gone+"2", again.UID)
		}
	})
}
