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
		name   string
		reason string
		text   string
		want   []string // object.key.sub@line
	}{
		{
			name:   "field",
			reason: "a field of a platform object is read",
			text:   `{{ .Values._cluster.x }}`,
			want:   []string{"_cluster.x@1"},
		},
		{
			name:   "root variable",
			reason: "$ reaches the root inside range",
			text:   `{{ range .Values.list }}{{ $.Values._namespace.host }}{{ end }}`,
			want:   []string{"_namespace.host@1"},
		},
		{
			name:   "nested key",
			reason: "a nested key is read as its whole path",
			text:   `{{ .Values._cluster.scheduling.defaultSchedulingClass }}`,
			want:   []string{"_cluster.scheduling.defaultSchedulingClass@1"},
		},
		{
			name:   "index with keys",
			reason: "index with constant keys is a read, line counted",
			text:   "\n{{ index .Values \"_cluster\" \"root-host\" }}",
			want:   []string{"_cluster.root-host@2"},
		},
		{
			name:   "index of the object",
			reason: "index of the object itself names the key",
			text:   `{{ index .Values._namespace "etcd" }}`,
			want:   []string{"_namespace.etcd@1"},
		},
		{
			name:   "index of an index",
			reason: "index of an index is followed key by key",
			text:   `{{ index (index .Values "_cluster") "issuer-name" }}`,
			want:   []string{"_cluster.issuer-name@1"},
		},
		{
			name:   "get and hasKey",
			reason: "get and hasKey read keys, each one reported",
			text:   `{{ get .Values._cluster "a" }}{{ if hasKey .Values._cluster "b" }}{{ end }}`,
			want:   []string{"_cluster.a@1", "_cluster.b@1"},
		},
		{
			name:   "dig",
			reason: "dig reads its key path from the root",
			text:   `{{ dig "_cluster" "oidc-enabled" "false" .Values }}`,
			want:   []string{"_cluster.oidc-enabled@1"},
		},
		{
			name:   "with",
			reason: "with binds dot to the object, so .ingress is its key",
			text:   "{{ with .Values._namespace }}\n{{ .ingress }}{{ end }}",
			want:   []string{"_namespace.ingress@2"},
		},
		{
			name:   "with else keeps dot",
			reason: "with's else keeps the outer dot",
			text:   `{{ with .Values.x }}{{ else }}{{ .Values._cluster.y }}{{ end }}`,
			want:   []string{"_cluster.y@1"},
		},
		{
			name:   "range resets dot",
			reason: "range resets dot: a key of the item is not a key of the object",
			text:   `{{ with .Values._cluster }}{{ range .list }}{{ .name }}{{ end }}{{ end }}`,
			want:   []string{"_cluster.list@1"},
		},
		{
			name:   "variable",
			reason: "a variable holding the object is followed",
			text:   "{{ $c := .Values._cluster }}\n{{ $c.gateway }}",
			want:   []string{"_cluster.gateway@2"},
		},
		{
			name:   "required variable",
			reason: "required passes its value through to the variable",
			text:   `{{ $ns := required "m" (index .Values "_namespace") }}{{ $ns.host }}`,
			want:   []string{"_namespace.host@1"},
		},
		{
			name:   "piped default",
			reason: "default passes the object through to the variable",
			text:   `{{ $ns := .Values._namespace | default dict }}{{ $ns.monitoring }}`,
			want:   []string{"_namespace.monitoring@1"},
		},
		{
			name:   "chain",
			reason: "parentheses around a field chain are followed",
			text:   `{{ (.Values._cluster).branding }}`,
			want:   []string{"_cluster.branding@1"},
		},
		{
			name:   "cozy-lib reader",
			reason: "cozy-lib's reader helpers read the key given as their first argument",
			text:   `{{ include "cozy-lib.namespace.optional" (list "seaweedfs" $) }}`,
			want:   []string{"_namespace.seaweedfs@1"},
		},
		{
			name:   "cozy-lib reader with a variable key",
			reason: "a reader with a variable key cannot be followed and reports nothing",
			text:   `{{ $k := "x" }}{{ include "cozy-lib.cluster.required" (list $k $) }}`,
			want:   nil,
		},
		{
			name:   "define body",
			reason: "reads inside a define body are found",
			text:   "{{ define \"x\" }}\n{{ .Values._cluster.root }}{{ end }}",
			want:   []string{"_cluster.root@2"},
		},
		{
			name:   "other object",
			reason: "any platform object is scanned, and reading the object itself counts",
			text:   `{{ .Values._tenant }}{{ .Values._tenant.name }}`,
			want:   []string{"_tenant.name@1", "_tenant@1"},
		},
		{
			name:   "ordinary values",
			reason: "ordinary values and release fields are not platform reads",
			text:   `{{ .Values.size }}{{ index .Values "users" }}{{ .Release.Name }}`,
			want:   nil,
		},
		{
			name:   "variable key",
			reason: "a variable key cannot be followed and reports nothing",
			text:   `{{ $k := "x" }}{{ index .Values._cluster $k }}`,
			want:   nil,
		},
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
				t.Errorf("%s: reads %v, want %v (%s)", tc.name, got, tc.want, tc.reason)
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
