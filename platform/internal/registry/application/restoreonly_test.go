package application

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

const restoreOnlySchema = `{
  "type": "object",
  "properties": {
    "size": {"type": "string"},
    "bootstrap": {"type": "object", "properties": {"recovery": {"type": "object", "x-cozystack-restore-only": true,
      "properties": {"destinationPath": {"type": "string"}, "serverName": {"type": "string"}}}}},
    "sources": {"type": "array", "items": {"type": "object", "properties": {"from": {"type": "string", "x-cozystack-restore-only": true}}}}
  }
}`

// The restore-only rule (K1, "Restore-only fields"): a request sets or
// changes a marked field to a non-empty value only as the backup core's
// identity; clearing it, leaving it as it was and empty defaults are free.
func TestRestoreOnlyRule(t *testing.T) {
	s := &strategy{kind: compileKind(t, postgresAD(restoreOnlySchema)), restorers: []string{"core"}}
	for _, tc := range []struct {
		name, user, spec, old string
		reason                string
		refused               []string
	}{
		{
			name:   "nothing set",
			reason: "a request leaving the restore-only fields out is free",
			user:   "tenant",
			spec:   `{size: 1Gi}`,
		},
		{
			name:   "empty object",
			reason: "an empty object sets nothing, so it is free",
			user:   "tenant",
			spec:   `{bootstrap: {recovery: {}}}`,
		},
		{
			name:   "empty strings",
			reason: "empty strings (the defaults) are free",
			user:   "tenant",
			spec:   `{bootstrap: {recovery: {destinationPath: ""}}}`,
		},
		{
			name:    "set on create",
			reason:  "a tenant setting a restore-only field on create is refused: only the backup core restores",
			user:    "tenant",
			spec:    `{bootstrap: {recovery: {destinationPath: s3://b/tenant-bob, serverName: postgres-db}}}`,
			refused: []string{"spec.bootstrap.recovery"},
		},
		{
			name:   "set by the core",
			reason: "the backup core's identity may set restore-only fields",
			user:   "core",
			spec:   `{bootstrap: {recovery: {destinationPath: s3://b/tenant-bob}}}`,
		},
		{
			name:    "in a list",
			reason:  "a marked field inside a list item is checked, and only the non-empty one is refused",
			user:    "tenant",
			spec:    `{sources: [{from: ""}, {from: x}]}`,
			refused: []string{"spec.sources[1].from"},
		},
		{
			name:   "unchanged on update",
			reason: "an update leaving a restore-only field as it was is free",
			user:   "tenant",
			spec:   `{size: 2Gi, bootstrap: {recovery: {destinationPath: s3://b/a}}}`,
			old:    `{size: 1Gi, bootstrap: {recovery: {destinationPath: s3://b/a}}}`,
		},
		{
			name:   "cleared on update",
			reason: "clearing a restore-only field is free",
			user:   "tenant",
			spec:   `{size: 2Gi}`,
			old:    `{bootstrap: {recovery: {destinationPath: s3://b/a}}}`,
		},
		{
			name:    "changed on update",
			reason:  "a tenant changing a restore-only field on update is refused",
			user:    "tenant",
			spec:    `{bootstrap: {recovery: {destinationPath: s3://b/tenant-bob}}}`,
			old:     `{bootstrap: {recovery: {destinationPath: s3://b/a}}}`,
			refused: []string{"spec.bootstrap.recovery"},
		},
		{
			name:    "added on update",
			reason:  "a tenant adding a restore-only field on update is refused",
			user:    "tenant",
			spec:    `{bootstrap: {recovery: {serverName: x}}}`,
			old:     `{size: 1Gi}`,
			refused: []string{"spec.bootstrap.recovery"},
		},
		{
			name:    "no user",
			reason:  "a request without a user is refused: the core's identity is never assumed",
			spec:    `{bootstrap: {recovery: {serverName: x}}}`,
			refused: []string{"spec.bootstrap.recovery"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.user != "" {
				ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: tc.user, Groups: []string{"tenant-a-admin"}})
			}
			var old *unstructured.Unstructured
			if tc.old != "" {
				old = app(t, `{spec: `+tc.old+`}`)
			}
			errs := s.validateRestoreOnly(ctx, app(t, `{spec: `+tc.spec+`}`), old)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
				if !strings.Contains(e.Error(), "x-cozystack-restore-only") || !strings.Contains(e.Error(), "k1-application.md") || !strings.Contains(e.Error(), "RestoreJob") {
					t.Errorf("%s: %s: the message does not name the rule and the way out (%s): %s", tc.name, e.Field, tc.reason, e.Error())
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.refused, ",") {
				t.Errorf("%s: refused %v, want %v (%s)", tc.name, got, tc.refused, tc.reason)
			}
		})
	}
}
