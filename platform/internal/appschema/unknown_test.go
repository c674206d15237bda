package appschema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Unknown reports what UnknownFields does, with each field's value and the
// object keys a JSON merge patch names it by (none below an array).
func TestUnknownValuesAndKeys(t *testing.T) {
	s := mustCompile(t, testSchema)
	spec := obj(t, `
typo: 128Mi
gone: null
users: {bob: {password: x, admin: true}}
databases: [{name: a, extra: 1}]
`)
	type row struct {
		Path  string
		Keys  []string
		Value any
	}
	var got []row
	for _, u := range s.Unknown(spec) {
		got = append(got, row{u.Path.String(), u.Keys, u.Value})
	}
	want := []row{
		{"spec.databases[0].extra", nil, int64(1)},
		{"spec.gone", []string{"gone"}, nil},
		{"spec.typo", []string{"typo"}, "128Mi"},
		{"spec.users[bob].admin", []string{"users", "bob", "admin"}, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unknown (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(s.UnknownFields(spec), []string{"spec.databases[0].extra", "spec.gone", "spec.typo", "spec.users[bob].admin"}); diff != "" {
		t.Errorf("UnknownFields disagrees (-got +want):\n%s", diff)
	}
}
