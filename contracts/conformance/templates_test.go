package conformance

import (
	"fmt"
	"slices"
	"testing"

	"cozystack.io/contracts/helmtemplate"
)

// Every way a template reads a "_" value that the scanner follows.
func TestScanTemplateReads(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string // object.key.sub@line
	}{
		{"field", `{{ .Values._cluster.x }}`, []string{"_cluster.x@1"}},
		{"root variable", `{{ range .Values.list }}{{ $.Values._namespace.host }}{{ end }}`, []string{"_namespace.host@1"}},
		{"nested key", `{{ .Values._cluster.scheduling.defaultSchedulingClass }}`, []string{"_cluster.scheduling.defaultSchedulingClass@1"}},
		{"index with keys", "\n{{ index .Values \"_cluster\" \"root-host\" }}", []string{"_cluster.root-host@2"}},
		{"index of the object", `{{ index .Values._namespace "etcd" }}`, []string{"_namespace.etcd@1"}},
		{"index of an index", `{{ index (index .Values "_cluster") "issuer-name" }}`, []string{"_cluster.issuer-name@1"}},
		{"get and hasKey", `{{ get .Values._cluster "a" }}{{ if hasKey .Values._cluster "b" }}{{ end }}`, []string{"_cluster.a@1", "_cluster.b@1"}},
		{"dig", `{{ dig "_cluster" "oidc-enabled" "false" .Values }}`, []string{"_cluster.oidc-enabled@1"}},
		{"with", "{{ with .Values._namespace }}\n{{ .ingress }}{{ end }}", []string{"_namespace.ingress@2"}},
		{"with else keeps dot", `{{ with .Values.x }}{{ else }}{{ .Values._cluster.y }}{{ end }}`, []string{"_cluster.y@1"}},
		{"range resets dot", `{{ with .Values._cluster }}{{ range .list }}{{ .name }}{{ end }}{{ end }}`, []string{"_cluster.list@1"}},
		{"variable", "{{ $c := .Values._cluster }}\n{{ $c.gateway }}", []string{"_cluster.gateway@2"}},
		{"required variable", `{{ $ns := required "m" (index .Values "_namespace") }}{{ $ns.host }}`, []string{"_namespace.host@1"}},
		{"piped default", `{{ $ns := .Values._namespace | default dict }}{{ $ns.monitoring }}`, []string{"_namespace.monitoring@1"}},
		{"chain", `{{ (.Values._cluster).branding }}`, []string{"_cluster.branding@1"}},
		{"cozy-lib reader", `{{ include "cozy-lib.namespace.optional" (list "seaweedfs" $) }}`, []string{"_namespace.seaweedfs@1"}},
		{"cozy-lib reader with a variable key", `{{ $k := "x" }}{{ include "cozy-lib.cluster.required" (list $k $) }}`, nil},
		{"define body", "{{ define \"x\" }}\n{{ .Values._cluster.root }}{{ end }}", []string{"_cluster.root@2"}},
		{"other object", `{{ .Values._tenant }}{{ .Values._tenant.name }}`, []string{"_tenant.name@1", "_tenant@1"}},
		{"ordinary values", `{{ .Values.size }}{{ index .Values "users" }}{{ .Release.Name }}`, nil},
		{"variable key", `{{ $k := "x" }}{{ index .Values._cluster $k }}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trees, err := parseTemplate("t", tc.text)
			if err != nil {
				t.Fatal(err)
			}
			reads, _ := scanTemplate(&helmtemplate.File{Name: "t", Text: tc.text, Trees: trees})
			var got []string
			for _, r := range reads {
				got = append(got, fmt.Sprintf("%s@%d", readPath(r), r.line))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("reads %v, want %v", got, tc.want)
			}
		})
	}
}

func TestScanTemplateIncludes(t *testing.T) {
	text := "{{ include \"cozy-lib.image\" (list \"x\" $) }}\n{{ template \"cozy-lib.internal.read\" . }}\n{{ $name := \"x\" }}{{ include $name . }}"
	trees, err := parseTemplate("t", text)
	if err != nil {
		t.Fatal(err)
	}
	_, includes := scanTemplate(&helmtemplate.File{Name: "t", Text: text, Trees: trees})
	var got []string
	for _, inc := range includes {
		got = append(got, fmt.Sprintf("%s@%d", inc.name, inc.line))
	}
	if want := []string{"cozy-lib.image@1", "cozy-lib.internal.read@2"}; !slices.Equal(got, want) {
		t.Errorf("includes %v, want %v", got, want)
	}
}
