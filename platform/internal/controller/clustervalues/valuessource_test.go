package clustervalues

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
)

func TestRetarget(t *testing.T) {
	other := helmv2.ValuesReference{Kind: "ConfigMap", Name: "extra", ValuesKey: "values.yaml"}
	cm := helmv2.ValuesReference{Kind: "ConfigMap", Name: "cozystack-values", ValuesKey: "values.yaml"}
	secret := helmv2.ValuesReference{Kind: "Secret", Name: "cozystack-values", ValuesKey: "values.yaml"}
	legacyCluster := helmv2.ValuesReference{Kind: "Secret", Name: "cozystack-values", ValuesKey: "_cluster", TargetPath: "_cluster"}
	legacyNamespace := helmv2.ValuesReference{Kind: "Secret", Name: "cozystack-values", ValuesKey: "_namespace", TargetPath: "_namespace"}
	for _, tc := range []struct {
		name string
		from []helmv2.ValuesReference
		kind string
		want []helmv2.ValuesReference
		move bool
	}{
		{"no values entry", []helmv2.ValuesReference{other}, "ConfigMap", []helmv2.ValuesReference{other}, false},
		{"already on the ConfigMap", []helmv2.ValuesReference{cm, other}, "ConfigMap", []helmv2.ValuesReference{cm, other}, false},
		{"already on the Secret", []helmv2.ValuesReference{legacyCluster, legacyNamespace}, "Secret", []helmv2.ValuesReference{legacyCluster, legacyNamespace}, false},
		{"legacy two-entry Secret to ConfigMap", []helmv2.ValuesReference{other, legacyNamespace, legacyCluster}, "ConfigMap", []helmv2.ValuesReference{other, cm}, true},
		{"Secret to ConfigMap", []helmv2.ValuesReference{secret}, "ConfigMap", []helmv2.ValuesReference{cm}, true},
		{"ConfigMap back to Secret", []helmv2.ValuesReference{cm, other}, "Secret", []helmv2.ValuesReference{secret, other}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]helmv2.ValuesReference(nil), tc.from...)
			got, move := retarget(tc.from, tc.kind)
			if move != tc.move {
				t.Errorf("move = %v, want %v", move, tc.move)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.from); diff != "" {
				t.Errorf("retarget modified its input:\n%s", diff)
			}
		})
	}
}
