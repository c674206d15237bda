package packagereconciler

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

// claimed returns Namespace name claimed by claims (the owner first).
func claimed(name string, claims ...claim) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	claimMeta(ns, claims)
	return ns
}

func shares(namespace string, pkgs ...string) *v1alpha1.PackageSpec {
	return &v1alpha1.PackageSpec{SharedNamespaces: []v1alpha1.SharedNamespace{{Namespace: namespace, Packages: pkgs}}}
}

// TestNamespaceOwner is the table of namespaceOwner's rules (docs/operator/catalogs.md,
// "Catalog delivery", "Ownership").
func TestNamespaceOwner(t *testing.T) {
	me := claim{Package: "b", UID: "uid-b", Catalog: "cat-b"}
	a := claim{Package: "a", UID: "uid-a", Catalog: "cat-a"}
	// The Packages that exist, as lookup returns them.
	liveA := &other{uid: "uid-a", catalog: "cat-a", spec: shares("x", "b"), declares: true}
	type world map[string]*other
	for _, tc := range []struct {
		name    string
		ns      string
		storage bool
		have    *corev1.Namespace
		spec    *v1alpha1.PackageSpec
		live    world
		// refusal: substrings of the refusal, none for an accepted claim
		refusal []string
		claims  []claim
	}{
		{name: "absent is claimable", ns: "x", claims: []claim{me}},
		{name: "ours", ns: "x", have: claimed("x", me), claims: []claim{me}},
		{name: "tenant- prefix", ns: "tenant-demo", refusal: []string{`beginning with "tenant-"`, "privileged or not"}},
		{name: "tenant-root", ns: "tenant-root", refusal: []string{"root tenant"}},
		{name: "release storage of another Package", ns: names.StorageNamespace("later"), refusal: []string{`"cozy-releases-"`}},
		{name: "own release storage", ns: names.StorageNamespace("b"), storage: true, claims: []claim{me}},
		{name: "kube-", ns: "kube-system", refusal: []string{`"kube-"`}},
		{name: "default", ns: "default", refusal: []string{"namespace default is reserved"}},
		{name: "flux", ns: "flux-system", refusal: []string{"Flux"}},
		{name: "tenant label", ns: "x", have: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{v1alpha1.LabelTenant: "t"}}},
			refusal: []string{`belongs to the tenant "t"`}},
		{name: "made by hand", ns: "x", have: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, refusal: []string{"belongs to nobody through the platform"}},
		{name: "live other, no consent", ns: "x", have: claimed("x", a), live: world{"a": {uid: "uid-a", catalog: "cat-a", spec: &v1alpha1.PackageSpec{}, declares: true}},
			spec: &v1alpha1.PackageSpec{},
			refusal: []string{"namespace x belongs to Package a (catalog cat-a)", "both consent",
				"on Package b (this one) spec.sharedNamespaces: [{namespace: x, packages: [a]}]", "on Package a spec.sharedNamespaces: [{namespace: x, packages: [b]}]"}},
		{name: "live other, only this one consents", ns: "x", have: claimed("x", a), live: world{"a": {uid: "uid-a", catalog: "cat-a", spec: shares("x", "c"), declares: true}},
			spec: shares("x", "a"), refusal: []string{"on Package a spec.sharedNamespaces: [{namespace: x, packages: [b]}]"}},
		{name: "live other, consent for another namespace", ns: "x", have: claimed("x", a), live: world{"a": liveA}, spec: shares("y", "a"),
			refusal: []string{"on Package b (this one)"}},
		{name: "live other, both consent", ns: "x", have: claimed("x", a), live: world{"a": liveA}, spec: shares("x", "a"), claims: []claim{a, me}},
		{name: "live other whose catalog does not declare it", ns: "x", have: claimed("x", a),
			live: world{"a": {uid: "uid-a", catalog: "cat-a", spec: shares("x", "b"), declares: false}}, spec: shares("x", "a"),
			refusal: []string{"Package a", "declares no component there"}},
		{name: "already shared, a third needs both", ns: "x", have: claimed("x", a, claim{"c", "uid-c", "cat-c"}),
			live: world{"a": liveA, "c": {uid: "uid-c", catalog: "cat-c", spec: &v1alpha1.PackageSpec{}, declares: true}}, spec: shares("x", "a"),
			refusal: []string{"belongs to Package c", "on Package b (this one) spec.sharedNamespaces: [{namespace: x, packages: [c]}]"}},
		{name: "deleted Package of another catalog", ns: "x", have: claimed("x", a), spec: &v1alpha1.PackageSpec{},
			refusal: []string{"namespace x belongs to Package a (deleted), of catalog cat-a", "only a Package of that catalog"}},
		{name: "deleted Package replaced by one of the same name, other catalog", ns: "x", have: claimed("x", a),
			live: world{"a": {uid: "uid-a2", catalog: "cat-z", spec: &v1alpha1.PackageSpec{}}}, spec: &v1alpha1.PackageSpec{},
			refusal: []string{"Package a (deleted), of catalog cat-a"}},
		{name: "own release storage left by a deleted Package of that name, other catalog", ns: names.StorageNamespace("b"), storage: true,
			have: claimed(names.StorageNamespace("b"), claim{"b", "uid-b-old", "cat-z"}), claims: []claim{me}},
		{name: "reinstall of the same catalog", ns: "x", have: claimed("x", claim{"old", "uid-old", "cat-b"}), claims: []claim{me}},
		{name: "a sharer stays when the owner is deleted", ns: "x", have: claimed("x", a, me), claims: []claim{a, me}},
		{name: "name-only claim of a Package that exists (migration)", ns: "x",
			have: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{names.AnnotationPackage: "b"}}},
			live: world{"b": {uid: "uid-b", catalog: "cat-b"}}, claims: []claim{me}},
		{name: "name-only claim of another Package that exists", ns: "x",
			have: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{names.AnnotationPackage: "a"}}},
			live: world{"a": {uid: "uid-a", catalog: "cat-a", spec: &v1alpha1.PackageSpec{}, declares: true}}, spec: &v1alpha1.PackageSpec{},
			refusal: []string{"belongs to Package a (catalog cat-a)"}},
		{name: "name-only claim of a deleted Package, same name", ns: "x",
			have: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{names.AnnotationPackage: "b"}}}, claims: []claim{me}},
		{name: "name-only claim of a deleted Package, other name", ns: "x",
			have:    &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{names.AnnotationPackage: "a"}}},
			refusal: []string{"Package a (deleted), of an unknown catalog"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if spec == nil {
				spec = &v1alpha1.PackageSpec{}
			}
			lookup := func(name string) *other { return tc.live[name] }
			v := namespaceOwner(me, spec, tc.ns, tc.storage, tc.have, lookup)
			if len(tc.refusal) == 0 {
				if v.refusal != "" {
					t.Fatalf("refused: %s", v.refusal)
				}
				if !slices.Equal(v.claims, tc.claims) {
					t.Errorf("claims %v, want %v", v.claims, tc.claims)
				}
				if v.exists != (tc.have != nil) {
					t.Errorf("exists %v, want %v", v.exists, tc.have != nil)
				}
				return
			}
			if v.refusal == "" {
				t.Fatalf("accepted with claims %v, want a refusal with %q", v.claims, tc.refusal)
			}
			for _, want := range tc.refusal {
				if !strings.Contains(v.refusal, want) {
					t.Errorf("refusal %q does not contain %q", v.refusal, want)
				}
			}
		})
	}
}

// TestClaimMetaRoundTrip: the claims written on a Namespace are read back
// as written, the owner first.
func TestClaimMetaRoundTrip(t *testing.T) {
	claims := []claim{{"a", "uid-a", "cat-a"}, {"b", "uid-b", "cat-b"}}
	ns := claimed("x", claims...)
	if got := namespaceClaims(ns, func(string) *other { return nil }); !slices.Equal(got, claims) {
		t.Errorf("read %v, want %v", got, claims)
	}
	var shared []claim
	if err := json.Unmarshal([]byte(ns.Annotations[names.AnnotationSharedWith]), &shared); err != nil || len(shared) != 1 {
		t.Errorf("%s = %q (%v), want the one sharer", names.AnnotationSharedWith, ns.Annotations[names.AnnotationSharedWith], err)
	}
	claimMeta(ns, claims[:1])
	if _, ok := ns.Annotations[names.AnnotationSharedWith]; ok {
		t.Errorf("%s kept with one claim", names.AnnotationSharedWith)
	}
}

// TestSetSharedReleases: the release map keeps the other claimants'
// entries, replaces the Package's own, drops those of Packages no longer
// claiming, and goes when only one Package claims.
func TestSetSharedReleases(t *testing.T) {
	ns := claimed("x", claim{"a", "uid-a", "cat-a"})
	ns.Annotations[names.AnnotationSharedReleases] = "a-web--0000000000=a b-old--1111111111=b gone-x--2222222222=gone"
	claims := []claim{{"a", "uid-a", "cat-a"}, {"b", "uid-b", "cat-b"}}
	setSharedReleases(ns, "b", []string{"b-web--3333333333"}, claims)
	if got, want := ns.Annotations[names.AnnotationSharedReleases], "a-web--0000000000=a b-web--3333333333=b"; got != want {
		t.Errorf("releases %q, want %q", got, want)
	}
	setSharedReleases(ns, "a", nil, claims[:1])
	if _, ok := ns.Annotations[names.AnnotationSharedReleases]; ok {
		t.Errorf("release map kept on an unshared namespace")
	}
}
