package application

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// DefaultRestoreIdentity is the user the backup core (cozystack-controller)
// acts as in a platform install, and the default of cozystack-api's
// --restore-identity: its restore reconciler
// (platform/internal/backup/restore) creates a restored
// application through this API with its own credentials.
const DefaultRestoreIdentity = "system:serviceaccount:cozy-system:cozystack-controller"

// validateRestoreOnly refuses a create or an update that sets a field
// marked x-cozystack-restore-only (contract K1, k1-application.md,
// "Restore-only fields") to a non-empty value, or changes its non-empty
// value, unless the request's user is one of s.restorers: such a field
// (Postgres bootstrap.recovery, MariaDB bootstrapFrom) points the
// application at backup data, which only the core's restore may do, after
// it has checked the Backup's BackupGrant; a tenant writing it would read
// another tenant's backup. Clearing such a field, or leaving it as it is,
// is allowed to everyone. app's spec is the one to store (defaults
// applied, validateSpec).
func (s *strategy) validateRestoreOnly(ctx context.Context, app, old *unstructured.Unstructured) field.ErrorList {
	if s.kind.Schema == nil {
		return nil
	}
	spec, _, _ := unstructured.NestedMap(app.Object, "spec")
	set := s.kind.Schema.RestoreOnly(spec)
	if len(set) == 0 {
		return nil
	}
	if u, ok := genericapirequest.UserFrom(ctx); ok && slices.Contains(s.restorers, u.GetName()) {
		return nil
	}
	before := map[string]any{}
	if old != nil {
		oldSpec, _, _ := unstructured.NestedMap(old.Object, "spec")
		for _, f := range s.kind.Schema.RestoreOnly(oldSpec) {
			before[f.Path.String()] = f.Value
		}
	}
	var errs field.ErrorList
	for _, f := range set {
		if prev, ok := before[f.Path.String()]; ok && equality.Semantic.DeepEqual(prev, f.Value) {
			continue
		}
		errs = append(errs, field.Forbidden(f.Path, fmt.Sprintf(
			"is restore-only (x-cozystack-restore-only; contract K1, k1-application.md, \"Restore-only fields\"): only the backup core sets it, from a Backup it has checked the BackupGrant of; restore through a RestoreJob (backups.cozystack.io) with target.mode NewApplication, and leave %s out of the spec", f.Path)))
	}
	return errs
}
