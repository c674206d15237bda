package adinstaller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

// RoleNames are the names of every ClusterRole Roles may write for
// PackageSource source: its tenant role per level and its installer role.
func RoleNames(source string) []string {
	out := make([]string, 0, len(v1alpha1.TenantLevels)+1)
	for _, level := range v1alpha1.TenantLevels {
		out = append(out, TenantRoleName(source, level))
	}
	return append(out, InstallerRoleName(source))
}

// RemoveGrants deletes the ClusterRoles of PackageSource source, which is
// gone, once none of the ApplicationDefinitions it installed is left
// (docs/operator/catalogs.md, "Catalog delivery", "What a third-party catalog gets": a
// catalog's grants go with it). While one is left (its kind still has
// applications, held by v1alpha1.FinalizerApplications, or nobody deleted
// it) the roles stay, since the catalog's installer uninstalls those
// applications' releases; RemoveGrants then returns the definitions' names
// and deletes nothing. Deleting the installer role makes
// cozystack-controller (package tenantrbac) delete the catalog's installer
// ServiceAccount and RoleBinding in every tenant namespace; deleting the
// tenant roles takes their rules out of the aggregated cozy:tenant:<level>.
//
// A ClusterRole is the source's when it has one of RoleNames(source) and
// the source's exact name in its annotation, the rule of Install's prune;
// a label alone, which anyone creating a ClusterRole may copy, selects but
// never decides.
func RemoveGrants(ctx context.Context, c client.Client, source string) (left []string, deleted []string, err error) {
	var defs v1alpha1.ApplicationDefinitionList
	if err := c.List(ctx, &defs, client.MatchingLabels{names.LabelPackageSource: names.LabelValue(source)}); err != nil {
		return nil, nil, fmt.Errorf("list the ApplicationDefinitions of PackageSource %s: %w", source, err)
	}
	for _, ad := range defs.Items {
		if ad.Annotations[names.AnnotationPackageSource] == source {
			left = append(left, ad.Name)
		}
	}
	if len(left) > 0 {
		return left, nil, nil
	}
	var roles rbacv1.ClusterRoleList
	if err := c.List(ctx, &roles, client.MatchingLabels{names.LabelPackageSource: names.LabelValue(source)}); err != nil {
		return nil, nil, fmt.Errorf("list the ClusterRoles of PackageSource %s: %w", source, err)
	}
	mine := RoleNames(source)
	var errs []error
	for i := range roles.Items {
		role := &roles.Items[i]
		if role.Annotations[names.AnnotationPackageSource] != source || !slices.Contains(mine, role.Name) {
			continue
		}
		if err := c.Delete(ctx, role, client.Preconditions{UID: &role.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete ClusterRole %s of PackageSource %s: %w", role.Name, source, err))
			continue
		}
		deleted = append(deleted, role.Name)
	}
	return nil, deleted, errors.Join(errs...)
}
