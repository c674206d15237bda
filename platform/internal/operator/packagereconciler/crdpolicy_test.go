package packagereconciler

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// crdPolicy: none without a privileged component; with one, it matches
// the ServiceAccounts of every component namespace of the Package, allows
// the catalog's groups and consented webhooks, and names the groups'
// owners.
func TestCRDPolicy(t *testing.T) {
	p := &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: "db", UID: "u1"}}
	comps := []v1alpha1.PackageComponent{{Name: "op", Namespace: "cozy-op", Privileged: true}, {Name: "ui", Namespace: "cozy-ui"}}
	if pol, b := crdPolicy(p, "db", []string{"db.example.org"}, comps, nil, nil); pol != nil || b != nil {
		t.Fatalf("a Package without privileged components got a policy")
	}
	want := []v1alpha1.PrivilegedComponent{{Name: "op", Namespace: "cozy-op", ConversionWebhooks: []string{"things.db.example.org"}}}
	pol, b := crdPolicy(p, "db", []string{"db.example.org"}, comps, want, map[string]string{"other.example.org": "catalog other (PackageSource other)"})
	if pol.Name != "cozystack-package-crds.db" || b.Spec.PolicyName != pol.Name || metav1.GetControllerOf(pol).UID != "u1" || metav1.GetControllerOf(b).UID != "u1" {
		t.Errorf("policy %s, binding to %s, owners %v %v", pol.Name, b.Spec.PolicyName, pol.OwnerReferences, b.OwnerReferences)
	}
	match := pol.Spec.MatchConditions[0].Expression
	for _, ns := range []string{"cozy-op", "cozy-ui"} {
		if !strings.Contains(match, `"system:serviceaccount:`+ns+`:"`) {
			t.Errorf("match %s does not cover namespace %s", match, ns)
		}
	}
	vars := map[string]string{}
	for _, v := range pol.Spec.Variables {
		vars[v.Name] = v.Expression
	}
	if vars["allowed"] != `["db.example.org"]` || vars["webhooks"] != `["things.db.example.org"]` || vars["owners"] != `{"other.example.org": "catalog other (PackageSource other)"}` {
		t.Errorf("variables %v", vars)
	}
	if got := crdPolicyName(strings.Repeat("a", 250)); len(got) > 253 {
		t.Errorf("name of a long Package is %d characters", len(got))
	}
}
