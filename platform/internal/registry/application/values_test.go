package application

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestWrittenSpec(t *testing.T) {
	m := func(s string) map[string]any {
		t.Helper()
		out := map[string]any{}
		if err := yaml.Unmarshal([]byte(s), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		reason string
		spec   string
		stored string
		read   string
		want   string
	}{
		{
			name:   "sent back as read",
			reason: "a spec sent back as read stores what was stored: defaults added by the read stay out (K1: values hold what the user wrote)",
			spec:   `{a: 1, d: x, o: {p: 1, q: 2}}`,
			stored: `{a: 1, o: {p: 1}}`,
			read:   `{a: 1, d: x, o: {p: 1, q: 2}}`,
			want:   `{a: 1, o: {p: 1}}`,
		},
		{
			name:   "a changed field",
			reason: "a field the request changed takes the request's value",
			spec:   `{a: 2, d: x}`,
			stored: `{a: 1}`,
			read:   `{a: 1, d: x}`,
			want:   `{a: 2}`,
		},
		{
			name:   "a default changed by the user",
			reason: "a default the user changed is written, as the user wrote it",
			spec:   `{a: 1, d: y}`,
			stored: `{a: 1}`,
			read:   `{a: 1, d: x}`,
			want:   `{a: 1, d: y}`,
		},
		{
			name:   "a removed field",
			reason: "a field the request removed is removed",
			spec:   `{d: x}`,
			stored: `{a: 1}`,
			read:   `{a: 1, d: x}`,
			want:   `{}`,
		},
		{
			name:   "a new field",
			reason: "a new field the request adds is written",
			spec:   `{a: 1, n: 5}`,
			stored: `{a: 1}`,
			read:   `{a: 1}`,
			want:   `{a: 1, n: 5}`,
		},
		{
			name:   "inside a defaulted object",
			reason: "inside an object reading defaulted, only the member the user changed is written",
			spec:   `{o: {p: 1, q: 3}}`,
			stored: `{}`,
			read:   `{o: {p: 1, q: 2}}`,
			want:   `{o: {q: 3}}`,
		},
		{
			name:   "inside a stored object",
			reason: "inside a stored object, the changed member is the request's and the read-added one stays out",
			spec:   `{o: {p: 5, q: 2}}`,
			stored: `{o: {p: 1}}`,
			read:   `{o: {p: 1, q: 2}}`,
			want:   `{o: {p: 5}}`,
		},
		{
			name:   "a defaulted object emptied",
			reason: "an object the user emptied is written empty, not dropped",
			spec:   `{o: {}}`,
			stored: `{}`,
			read:   `{o: {p: 1}}`,
			want:   `{o: {}}`,
		},
		{
			name:   "arrays are atomic",
			reason: "arrays are atomic: an array sent back as read keeps its stored value",
			spec:   `{l: [{n: a, b: v}]}`,
			stored: `{l: [{n: a}]}`,
			read:   `{l: [{n: a, b: v}]}`,
			want:   `{l: [{n: a}]}`,
		},
		{
			name:   "a changed array",
			reason: "a changed array is the request's as a whole",
			spec:   `{l: [{n: b, b: v}]}`,
			stored: `{l: [{n: a}]}`,
			read:   `{l: [{n: a, b: v}]}`,
			want:   `{l: [{n: b, b: v}]}`,
		},
		{
			name:   "nothing stored",
			reason: "with nothing stored, defaults sent back are not written",
			spec:   `{d: x}`,
			stored: `{}`,
			read:   `{d: x}`,
			want:   `{}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := writtenSpec(m(tc.spec), m(tc.stored), m(tc.read))
			if d := cmp.Diff(m(tc.want), got); d != "" {
				t.Errorf("%s: writtenSpec (-want +got) (%s):\n%s", tc.name, tc.reason, d)
			}
		})
	}
}
