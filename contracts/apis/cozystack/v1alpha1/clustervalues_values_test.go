package v1alpha1_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

func TestNamespaceKeys(t *testing.T) {
	long := strings.Repeat("a", 60) + ".example.org"
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        map[string]any
		wantErr     string
	}{
		{
			name: "every key from labels",
			labels: map[string]string{
				v1alpha1.LabelTenant: "foo", v1alpha1.LabelHost: "foo.example.org", v1alpha1.LabelIngress: "tenant-root",
				v1alpha1.LabelMonitoring: "tenant-root", v1alpha1.LabelEtcd: "tenant-foo", v1alpha1.LabelSeaweedFS: "tenant-root",
				v1alpha1.LabelGateway: "tenant-foo", v1alpha1.LabelSchedulingClass: "gpu",
			},
			want: map[string]any{
				"host": "foo.example.org", "ingress": "tenant-root", "monitoring": "tenant-root", "etcd": "tenant-foo",
				"seaweedfs": "tenant-root", "gateway": "tenant-foo", "schedulingClass": "gpu",
			},
		},
		{
			name:   "empty label means absent",
			labels: map[string]string{v1alpha1.LabelHost: "foo.example.org", v1alpha1.LabelEtcd: ""},
			want:   map[string]any{"host": "foo.example.org"},
		},
		{
			name:        "annotation wins over label",
			labels:      map[string]string{v1alpha1.LabelHost: "short.example.org"},
			annotations: map[string]string{v1alpha1.LabelHost: long},
			want:        map[string]any{"host": long},
		},
		{
			name:    "no host",
			labels:  map[string]string{v1alpha1.LabelTenant: "foo", v1alpha1.LabelEtcd: "tenant-root"},
			wantErr: v1alpha1.LabelHost,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v1alpha1.NamespaceKeys(tc.labels, tc.annotations)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterKeysOmitsUnset(t *testing.T) {
	spec := v1alpha1.ClusterValuesSpec{
		RootHost: "example.org", APIServerEndpoint: "https://192.0.2.1:6443",
		Publishing: v1alpha1.ClusterValuesPublishing{ExposedServices: []string{"dashboard", "api"}, ExternalIPs: []v1alpha1.IPAddress{"192.0.2.1", "192.0.2.2"}},
		Branding:   v1alpha1.ClusterValuesBranding{TitleText: "Cloud"},
	}
	want := map[string]any{
		"root-host": "example.org", "api-server-endpoint": "https://192.0.2.1:6443",
		"expose-services": "dashboard,api", "expose-external-ips": "192.0.2.1,192.0.2.2",
		"oidc-enabled": "false", "gateway-api": "false",
		"branding": map[string]any{"titleText": "Cloud"},
	}
	if diff := cmp.Diff(want, v1alpha1.ClusterKeys(&spec)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestValuesSource(t *testing.T) {
	for _, tc := range []struct {
		value, want, kind string
		wantErr           bool
	}{
		{"", v1alpha1.ValuesSourceConfigMap, "ConfigMap", false},
		{"configmap", v1alpha1.ValuesSourceConfigMap, "ConfigMap", false},
		{"secret", v1alpha1.ValuesSourceSecret, "Secret", false},
		{"Secret", "", "", true},
	} {
		got, err := v1alpha1.ValuesSource(map[string]string{v1alpha1.AnnotationValuesSource: tc.value})
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ValuesSource(%q) = %q, %v; want %q (error %v)", tc.value, got, err, tc.want, tc.wantErr)
		}
		if !tc.wantErr && v1alpha1.ValuesKind(got) != tc.kind {
			t.Errorf("ValuesKind(%q) = %q, want %q", got, v1alpha1.ValuesKind(got), tc.kind)
		}
	}
}
