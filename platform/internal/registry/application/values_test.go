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
		spec   string
		stored string
		read   string
		want   string
	}{
		{
			name:   "sent back as read",
			spec:   `{a: 1, d: x, o: {p: 1, q: 2}}`,
			stored: `{a: 1, o: {p: 1}}`,
			read:   `{a: 1, d: x, o: {p: 1, q: 2}}`,
			want:   `{a: 1, o: {p: 1}}`,
		},
		{
			name:   "a changed field",
			spec:   `{a: 2, d: x}`,
			stored: `{a: 1}`,
			read:   `{a: 1, d: x}`,
			want:   `{a: 2}`,
		},
		{
			name:   "a default changed by the user",
			spec:   `{a: 1, d: y}`,
			stored: `{a: 1}`,
			read:   `{a: 1, d: x}`,
			want:   `{a: 1, d: y}`,
		},
		{
			name:   "a removed field",
			spec:   `{d: x}`,
			stored: `{a: 1}`,
			read:   `{a: 1, d: x}`,
			want:   `{}`,
		},
		{
			name:   "a new field",
			spec:   `{a: 1, n: 5}`,
			stored: `{a: 1}`,
			read:   `{a: 1}`,
			want:   `{a: 1, n: 5}`,
		},
		{
			name:   "inside a defaulted object",
			spec:   `{o: {p: 1, q: 3}}`,
			stored: `{}`,
			read:   `{o: {p: 1, q: 2}}`,
			want:   `{o: {q: 3}}`,
		},
		{
			name:   "inside a stored object",
			spec:   `{o: {p: 5, q: 2}}`,
			stored: `{o: {p: 1}}`,
			read:   `{o: {p: 1, q: 2}}`,
			want:   `{o: {p: 5}}`,
		},
		{
			name:   "a defaulted object emptied",
			spec:   `{o: {}}`,
			stored: `{}`,
			read:   `{o: {p: 1}}`,
			want:   `{o: {}}`,
		},
		{
			name:   "arrays are atomic",
			spec:   `{l: [{n: a, b: v}]}`,
			stored: `{l: [{n: a}]}`,
			read:   `{l: [{n: a, b: v}]}`,
			want:   `{l: [{n: a}]}`,
		},
		{
			name:   "a changed array",
			spec:   `{l: [{n: b, b: v}]}`,
			stored: `{l: [{n: a}]}`,
			read:   `{l: [{n: a, b: v}]}`,
			want:   `{l: [{n: b, b: v}]}`,
		},
		{
			name:   "nothing stored",
			spec:   `{d: x}`,
			stored: `{}`,
			read:   `{d: x}`,
			want:   `{}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := writtenSpec(m(tc.spec), m(tc.stored), m(tc.read))
			if d := cmp.Diff(m(tc.want), got); d != "" {
				t.Errorf("writtenSpec (-want +got):\n%s", d)
			}
		})
	}
}
