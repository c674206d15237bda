package quotatree

import (
	"encoding/json"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// Limits come as the schema allows them (integers or quantity strings),
// in whatever number type a decoder gives.
func TestParseLimits(t *testing.T) {
	got, err := ParseLimits(map[string]any{
		"cpu": json.Number("2"), "memory": "8Gi", "count/pods": float64(5), "requests.cpu": int64(1), "gpu": 3, "x": "500m",
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"cpu": "2", "memory": "8Gi", "count/pods": "5", "requests.cpu": "1", "gpu": "3", "x": "500m"} {
		q := got[corev1.ResourceName(name)]
		if q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("%s = %s, want %s", name, q.String(), want)
		}
	}
	for _, bad := range []any{"cpu", map[string]any{"cpu": "lots"}, map[string]any{"cpu": true}} {
		if _, err := ParseLimits(bad); err == nil {
			t.Errorf("ParseLimits(%v) accepted", bad)
		}
	}
	if l, err := ParseLimits(nil); err != nil || len(l) != 0 {
		t.Errorf("ParseLimits(nil) = %v, %v, want no limits", l, err)
	}
}

// A Tenant's HelmRelease values give its limits; Given sums them and
// names the holders.
func TestFromReleaseAndGiven(t *testing.T) {
	release := func(name, values string) *helmv2.HelmRelease {
		return &helmv2.HelmRelease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-p", Name: "tenant-" + name, Labels: map[string]string{v1alpha1.LabelApplicationName: name}},
			Spec:       helmv2.HelmReleaseSpec{Values: &apiextensionsv1.JSON{Raw: []byte(values)}},
		}
	}
	a := FromRelease(release("a", `{"resourceQuotas":{"cpu":"600m","count/pods":2},"_namespace":{}}`))
	b := FromRelease(release("b", `{"resourceQuotas":{"cpu":1}}`))
	c := FromRelease(release("c", `{}`))
	bad := FromRelease(release("d", `{"resourceQuotas":{"cpu":"many"}}`))
	if a.Err != nil || b.Err != nil || c.Err != nil || bad.Err == nil {
		t.Fatalf("errors: %v %v %v %v", a.Err, b.Err, c.Err, bad.Err)
	}
	if a.String() != "tenant-p/a" {
		t.Errorf("String() = %s", a)
	}
	sum, who := Given([]Tenant{a, b, c}, "cpu")
	if sum.Cmp(resource.MustParse("1600m")) != 0 || who != "a: 600m, b: 1" {
		t.Errorf("Given cpu = %s (%s), want 1600m (a: 600m, b: 1)", sum.String(), who)
	}
	if sum, who := Given([]Tenant{a, b, c}, "count/pods"); sum.Cmp(resource.MustParse("2")) != 0 || who != "a: 2" {
		t.Errorf("Given count/pods = %s (%s)", sum.String(), who)
	}
}
