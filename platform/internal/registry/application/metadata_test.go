package application

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

func TestReservedKey(t *testing.T) {
	for _, tc := range []struct {
		key      string
		reserved bool
	}{
		{"app.kubernetes.io/managed-by", true},
		{"cozystack.io/package", true},
		{"cozystack.io/component", true},
		{"apps.cozystack.io/application.kind", true},
		{"apps.cozystack.io/managed-fields", true},
		{"namespace.cozystack.io/host", true},
		{"Cozystack.IO/x", true},
		{"helm.toolkit.fluxcd.io/name", true},
		{"reconcile.fluxcd.io/watch", true},
		{"sharding.fluxcd.io/key", true},
		{"kustomize.toolkit.fluxcd.io/ssa", true},
		{"meta.helm.sh/release-name", true},
		{"helm.sh/resource-policy", true},
		{"reconcile.fluxcd.io/requestedAt", false},
		{"reconcile.fluxcd.io/resetAt", false},
		{"reconcile.fluxcd.io/forceAt", false},
		{"app.kubernetes.io/name", false},
		{"kubectl.kubernetes.io/last-applied-configuration", false},
		{"team", false},
		{"example.com/owner", false},
		{"notcozystack.io/x", false},
		{"cozystack.io.example.com/x", false},
	} {
		if got := ReservedKey(tc.key); got != tc.reserved {
			t.Errorf("ReservedKey(%q) = %v, want %v", tc.key, got, tc.reserved)
		}
	}
	for _, tc := range []struct {
		name     string
		reserved bool
	}{
		{"finalizers.fluxcd.io", true},
		{"cozystack.io/cleanup", true},
		{"helm.sh/x", true},
		{"example.com/keep", false},
		{"foregroundDeletion", false},
		{"kubernetes", false},
	} {
		if got := ReservedFinalizer(tc.name); got != tc.reserved {
			t.Errorf("ReservedFinalizer(%q) = %v, want %v", tc.name, got, tc.reserved)
		}
	}
}

// Each key the platform or Flux acts on is refused on create, naming the
// key; the Flux annotations K1 allows are stored on the HelmRelease.
func TestReservedMetadataOnCreate(t *testing.T) {
	f := newFixture(t, storageKind(t))
	for i, tc := range []struct {
		meta    string
		refused string // the field path of the 422, "" when accepted
	}{
		{`labels: {app.kubernetes.io/managed-by: cozystack-operator}`, "metadata.labels[app.kubernetes.io/managed-by]"},
		{`labels: {cozystack.io/package: main}`, "metadata.labels[cozystack.io/package]"},
		{`labels: {cozystack.io/component: db}`, "metadata.labels[cozystack.io/component]"},
		{`annotations: {cozystack.io/package: main}`, "metadata.annotations[cozystack.io/package]"},
		{`annotations: {helm.toolkit.fluxcd.io/name: x}`, "metadata.annotations[helm.toolkit.fluxcd.io/name]"},
		{`annotations: {sharding.fluxcd.io/key: shard1}`, "metadata.annotations[sharding.fluxcd.io/key]"},
		{`annotations: {reconcile.fluxcd.io/watch: Enabled}`, "metadata.annotations[reconcile.fluxcd.io/watch]"},
		{`annotations: {meta.helm.sh/release-name: other}`, "metadata.annotations[meta.helm.sh/release-name]"},
		{`annotations: {apps.cozystack.io/managed-fields: "[]"}`, "metadata.annotations[apps.cozystack.io/managed-fields]"},
		{`finalizers: [finalizers.fluxcd.io]`, "metadata.finalizers[0]"},
		{`annotations: {reconcile.fluxcd.io/requestedAt: "1", reconcile.fluxcd.io/forceAt: "1", reconcile.fluxcd.io/resetAt: "1"}`, ""},
		{`labels: {app.kubernetes.io/name: db}`, ""},
		// A tenant's own finalizer would hold its namespace's deletion.
		{`finalizers: [example.com/keep]`, "metadata.finalizers[0]"},
		{`finalizers: [kubernetes.io/pv-protection]`, "metadata.finalizers[0]"},
	} {
		t.Run(tc.meta, func(t *testing.T) {
			name := fmt.Sprintf("m%d", i)
			_, err := f.rest.Create(f.ctx, f.newApp(name, `{metadata: {`+tc.meta+`}, spec: {}}`), nil, &metav1.CreateOptions{})
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				return
			}
			if got := causes(t, err); len(got) != 1 || got[0] != tc.refused {
				t.Fatalf("causes = %v, want [%s]", got, tc.refused)
			}
			if !strings.Contains(err.Error(), "belong to the platform") || !strings.Contains(err.Error(), "remove it") {
				t.Errorf("message does not state the rule and the fix: %v", err)
			}
			if _, err := f.helmRelease(name); !apierrors.IsNotFound(err) {
				t.Errorf("HelmRelease written for a refused application: %v", err)
			}
		})
	}
	hr := f.mustHelmRelease("m10")
	if hr.Annotations["reconcile.fluxcd.io/forceAt"] != "1" {
		t.Errorf("allowed Flux annotations not on the HelmRelease: %v", hr.Annotations)
	}
}

// What the platform or Flux set on the HelmRelease survives updates that
// leave it out, may be sent back unchanged, and may not be changed.
func TestReservedMetadataOnUpdate(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("main", `{spec: {}}`)
	hr := f.mustHelmRelease("main")
	// A user's finalizer from before the rule, and helm-controller's.
	hr.Finalizers = append(hr.Finalizers, "example.com/keep", "finalizers.fluxcd.io")
	hr.Annotations = map[string]string{"sharding.fluxcd.io/key": "shard1"}
	if err := f.c.Update(context.Background(), hr); err != nil {
		t.Fatal(err)
	}
	update := func(mutate func(u *unstructured.Unstructured)) error {
		_, _, err := f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			u := old.(*unstructured.Unstructured).DeepCopy()
			mutate(u)
			return u, nil
		}), nil, nil, false, &metav1.UpdateOptions{})
		return err
	}
	// Sent back as read: accepted.
	if err := update(func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"team": "a"}) }); err != nil {
		t.Fatalf("update with the reserved metadata as read: %v", err)
	}
	// Left out (a PUT built from an older read): kept.
	if err := update(func(u *unstructured.Unstructured) {
		u.SetFinalizers(nil)
		u.SetAnnotations(nil)
	}); err != nil {
		t.Fatalf("update leaving reserved metadata out: %v", err)
	}
	hr = f.mustHelmRelease("main")
	if fmt.Sprint(hr.Finalizers) != "[finalizers.fluxcd.io]" || hr.Annotations["sharding.fluxcd.io/key"] != "shard1" {
		t.Errorf("finalizers %v annotations %v: the platform's were dropped (or the user's kept)", hr.Finalizers, hr.Annotations)
	}
	// Changed: refused.
	for path, mutate := range map[string]func(u *unstructured.Unstructured){
		"metadata.annotations[sharding.fluxcd.io/key]": func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"sharding.fluxcd.io/key": "shard2"})
		},
		"metadata.finalizers[1]": func(u *unstructured.Unstructured) {
			u.SetFinalizers(append(u.GetFinalizers(), "cozystack.io/hold"))
		},
		"metadata.labels[cozystack.io/package]": func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"cozystack.io/package": "x"})
		},
	} {
		if got := causes(t, update(mutate)); len(got) != 1 || got[0] != path {
			t.Errorf("causes = %v, want [%s]", got, path)
		}
	}
	// A finalizer of the tenant's own, added by an update: refused too.
	err := update(func(u *unstructured.Unstructured) { u.SetFinalizers(append(u.GetFinalizers(), "example.com/hold")) })
	if got := causes(t, err); len(got) != 1 || got[0] != "metadata.finalizers[1]" || !strings.Contains(err.Error(), "a tenant adds none") {
		t.Errorf("update adding finalizer example.com/hold: causes %v, err %v", got, err)
	}
}

// Owner references an application adds are checked with the requester's
// rights: get on the owner, and update of its finalizers for
// blockOwnerDeletion.
func TestOwnerReferencesNeedTheRequestersRights(t *testing.T) {
	f := newFixture(t, storageKind(t))
	var asked []string
	f.rest.strategy.authorizer = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		asked = append(asked, fmt.Sprintf("%s %s %s/%s %s/%s", a.GetUser().GetName(), a.GetVerb(), a.GetResource(), a.GetSubresource(), a.GetNamespace(), a.GetName()))
		if a.GetUser().GetName() == "admin" || (a.GetVerb() == "get" && a.GetResource() == "configmaps") {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "RBAC: no rule", nil
	})
	ctx := func(name string) context.Context {
		return genericapirequest.WithUser(f.ctx, &user.DefaultInfo{Name: name})
	}
	block := true
	owned := func(name, kind, apiVersion string, blockDeletion bool) *unstructured.Unstructured {
		u := f.newApp(name, `{spec: {}}`)
		ref := metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "owner", UID: "0a1b2c3d-0000-0000-0000-000000000001"}
		if blockDeletion {
			ref.BlockOwnerDeletion = &block
		}
		u.SetOwnerReferences([]metav1.OwnerReference{ref})
		return u
	}
	for _, tc := range []struct {
		name, user, kind, apiVersion string
		block                        bool
		refused                      string
	}{
		{"readable", "tenant", "ConfigMap", "v1", false, ""},
		{"block needs finalizers", "tenant", "ConfigMap", "v1", true, "may not update its finalizers"},
		{"unreadable", "tenant", "Secret", "v1", false, "may not get it"},
		{"unknown kind", "tenant", "Nothing", "example.com/v1", false, "not served by this cluster"},
		{"admin", "admin", "ClusterRole", "rbac.authorization.k8s.io/v1", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.rest.Create(ctx(tc.user), owned("o-"+strings.ReplaceAll(tc.name, " ", "-"), tc.kind, tc.apiVersion, tc.block), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				return
			}
			if got := causes(t, err); len(got) != 1 || got[0] != "metadata.ownerReferences[0]" || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("causes %v, err %v; want metadata.ownerReferences[0] and %q", got, err, tc.refused)
			}
		})
	}
	if !strings.Contains(strings.Join(asked, "\n"), "tenant get configmaps/ "+f.ns+"/owner") {
		t.Errorf("the namespaced owner was not checked in the application's namespace:\n%s", strings.Join(asked, "\n"))
	}
}

// A change of metadata alone leaves the stored values byte for byte as
// they were, though the client sends back the spec it read (with the
// schema's defaults); a spec change stores what the user changed, never
// the defaults the read added.
func TestValuesHoldWhatTheUserWrote(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("main", `{spec: {replicas: 3, users: {app: {}}}}`)
	hr := f.mustHelmRelease("main")
	// The platform's injected values, in an order json.Marshal would not
	// write, so a rewrite shows.
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"users":{"app":{}},"replicas":3,"_cluster":{"host":"example.org"}}`)}
	if err := f.c.Update(context.Background(), hr); err != nil {
		t.Fatal(err)
	}
	before := string(f.mustHelmRelease("main").Spec.Values.Raw)

	read := f.get("main") // with the defaults size, version
	read.SetAnnotations(map[string]string{"note": "x"})
	if _, _, err := f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(read), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	hr = f.mustHelmRelease("main")
	if got := string(hr.Spec.Values.Raw); got != before {
		t.Errorf("metadata-only update rewrote the values:\n got %s\nwant %s", got, before)
	}
	if hr.Annotations["note"] != "x" {
		t.Errorf("annotation not stored: %v", hr.Annotations)
	}
	// A patch (the handler applies it to the object as read, defaults
	// included) of metadata alone.
	patch := rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		u := old.(*unstructured.Unstructured).DeepCopy()
		u.SetLabels(map[string]string{"team": "db"})
		return u, nil
	})
	if _, _, err := f.rest.Update(f.ctx, "main", patch, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := string(f.mustHelmRelease("main").Spec.Values.Raw); got != before {
		t.Errorf("metadata-only patch rewrote the values:\n got %s\nwant %s", got, before)
	}

	read = f.get("main")
	_ = unstructured.SetNestedField(read.Object, int64(4), "spec", "replicas")
	if _, _, err := f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(read), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	v := values(t, f.mustHelmRelease("main"))
	if fmt.Sprint(v) != "map[_cluster:map[host:example.org] replicas:4 users:map[app:map[]]]" {
		t.Errorf("values after a spec change = %v, want replicas 4 and no defaults (size, version)", v)
	}
}

// Managed fields live in an annotation of the HelmRelease, which shares
// kube-apiserver's 256 KiB budget with the application's annotations: a
// write that would pass it is refused first, saying which part takes what.
func TestAnnotationBudget(t *testing.T) {
	f := newFixture(t, storageKind(t))
	u := f.newApp("big", `{spec: {}}`)
	u.SetAnnotations(map[string]string{"big": strings.Repeat("x", totalAnnotationBudget-1000)})
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps.cozystack.io/v1alpha1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:` + strings.Repeat("x", 2000) + `":{}}}`)}}})
	_, err := f.rest.Create(f.ctx, u, nil, &metav1.CreateOptions{})
	if got := causes(t, err); len(got) != 1 || got[0] != "metadata.annotations" || !strings.Contains(err.Error(), AnnotationManagedFields) {
		t.Fatalf("causes %v err %v", got, err)
	}
}

// An application never takes a release name cozystack-operator reserves
// for Package components: a tenant pre-creating a component's future
// release name would stall the Package on Conflict (docs/operator/catalogs.md, "Catalog
// delivery", "Names").
func TestReservedReleaseNames(t *testing.T) {
	r := NewREST(storageKind(t), Backend{}) // release prefix "postgres-"
	for _, tc := range []struct {
		name    string
		refused bool
	}{
		{"db", false},
		{"db-0123456789", false},
		{"a--b", false},
		{"db--0123456789", true},
		{"db--0123456789-x", true},
		{"db--0123456789a", false},
	} {
		msgs := r.strategy.validateName(tc.name, false)
		if refused := len(msgs) > 0; refused != tc.refused {
			t.Errorf("validateName(%q) = %v, refused want %v", tc.name, msgs, tc.refused)
		}
		if tc.refused && !strings.Contains(strings.Join(msgs, ""), "reserved for the releases of Package components") {
			t.Errorf("validateName(%q) = %v: no reason", tc.name, msgs)
		}
	}
	for i := 0; i < 200; i++ {
		if name := r.strategy.generateName("db--01234"); len(r.strategy.validateName(name, false)) > 0 {
			t.Fatalf("generateName made %s, which validateName refuses", name)
		}
	}
}
