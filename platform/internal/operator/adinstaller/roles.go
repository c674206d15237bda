package adinstaller

import (
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
)

// TenantRoleName is the ClusterRole holding the rules catalog source
// grants tenant users at level: "cozy:catalog:<source>:tenant-<level>".
func TenantRoleName(source, level string) string {
	return "cozy:catalog:" + source + ":tenant-" + level
}

// InstallerRoleName is the ClusterRole holding what the application charts
// of catalog source may create in a tenant namespace, and Helm's release
// storage: "cozy:catalog:<source>:installer". Every tenant namespace binds
// it to v1alpha1.CatalogInstallerServiceAccount(source), which those
// charts' releases install as.
func InstallerRoleName(source string) string { return "cozy:catalog:" + source + ":installer" }

// Roles returns the ClusterRoles of catalog c served by PackageSource
// source (contract K5, k5-cozy-lib.md, "Tenant roles"): one per tenant
// access level with rules, labelled v1alpha1.TenantRoleAggregationLabel
// (so installing the catalog extends the platform's tenant roles with its
// kinds), and, when the catalog has applications, InstallerRoleName with
// every application's rules (none may be), labelled
// v1alpha1.InstallerRoleLabel (what the catalog's installer may create in
// a tenant namespace). The rules are checked again here
// (artifact.CheckApplicationRules, artifact.CheckTenantRoleRules against
// the plurals of defs, the catalog's ApplicationDefinitions): the error
// names the field, and no role is returned.
func Roles(c *artifact.Catalog, source string, defs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	plurals := map[string]bool{}
	for _, d := range defs {
		if d.GetKind() != "ApplicationDefinition" {
			continue
		}
		if p, _, _ := unstructured.NestedString(d.Object, "spec", "application", "plural"); p != "" {
			plurals[p] = true
		}
	}
	var errs field.ErrorList
	var installer []rbacv1.PolicyRule
	byLevel := map[string][]rbacv1.PolicyRule{}
	for i, app := range c.Applications {
		p := field.NewPath("applications").Index(i)
		errs = append(errs, artifact.CheckApplicationRules(p.Child("rules"), app.Rules)...)
		errs = append(errs, artifact.CheckTenantRoleRules(p.Child("tenantRoles"), app.TenantRoles, plurals)...)
		installer = append(installer, app.Rules...)
		for _, l := range app.TenantRoles.Levels() {
			byLevel[l.Level] = append(byLevel[l.Level], l.Rules...)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("catalog %s: %w", c.Name, errs.ToAggregate())
	}
	var out []*unstructured.Unstructured
	add := func(name, label string, rules []rbacv1.PolicyRule) error {
		if rules == nil {
			return nil
		}
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{label: "true"}}, Rules: rules}
		role.APIVersion, role.Kind = rbacv1.SchemeGroupVersion.String(), "ClusterRole"
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(role)
		if err != nil {
			return err
		}
		out = append(out, &unstructured.Unstructured{Object: u})
		return nil
	}
	var convErrs []error
	for _, level := range v1alpha1.TenantLevels {
		convErrs = append(convErrs, add(TenantRoleName(source, level), v1alpha1.TenantRoleAggregationLabel(level), byLevel[level]))
	}
	if len(c.Applications) > 0 {
		// Helm's storage is not here: the release records of the
		// catalog's applications live in their own namespace
		// (v1alpha1.ApplicationReleaseStorageNamespace), where
		// cozystack-controller grants it. The role exists even with no
		// rules: it is what makes each tenant namespace hold the
		// catalog's installer.
		if installer == nil {
			installer = []rbacv1.PolicyRule{}
		}
		convErrs = append(convErrs, add(InstallerRoleName(source), v1alpha1.InstallerRoleLabel, installer))
	}
	return out, errors.Join(convErrs...)
}
