package artifact

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

var (
	// K3 property names: dot-separated lowerCamel segments, e.g.
	// "network.stableVMAddress".
	propertyPattern = regexp.MustCompile(`^[a-z][A-Za-z0-9-]*(\.[a-z][A-Za-z0-9-]*)*$`)
	// Kinds are CamelCase, as in ApplicationDefinition spec.application.kind.
	kindPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	// Chart paths: portable file-name characters only.
	chartPathPattern = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
	// CRD names: <plural>.<group>, lowercase DNS.
	crdNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
)

// Validate checks catalog.yaml's rules and returns every violation at once,
// each naming its field path and the fix, e.g.
// `variants[0].components[1].dependsOn[0]: Not found: "db"`. The rules:
//   - apiVersion is CatalogAPIVersion, kind is CatalogKind;
//   - name is a DNS subdomain; version and minPlatformVersion are SemVer
//     2.0 (MAJOR.MINOR.PATCH, no leading "v");
//   - requiredProperties are dotted lowerCamel names, kinds in provides are
//     CamelCase; no duplicates;
//   - library and chart paths are clean relative paths inside the catalog
//     directory (no "..", no leading "/"); a library is not a component;
//   - at least one variant, or at least one application; variant and component names are DNS labels,
//     unique; each variant has at least one component;
//   - a component's namespace is a DNS label and not reserved
//     (v1alpha1.ReservedNamespace: default, cozy-system, flux-system,
//     kube-*, cozy-releases-*, tenant-*), privileged or not; its
//     dependsOn names other
//     components of its variant and has no cycle; a variant's dependsOn
//     names other catalogs;
//   - clusterRules need privileged: true; rules follow Kubernetes RBAC's
//     PolicyRule validation (verbs; apiGroups and resources, or
//     nonResourceURLs in clusterRules only);
//   - values are a JSON object;
//   - a component name used in several variants names the same chart in
//     each (one published chart artifact per name);
//   - application names are DNS labels, unique and distinct from every
//     component name; their charts are chart paths, not libraries; a kind,
//     when given, is one of provides.applicationKinds, for one
//     application;
//   - provides.apiGroups are DNS subdomains with a dot, none of
//     Kubernetes', Flux's or the platform's; sharedAPIGroups a subset;
//     conversionWebhooks only on privileged components, naming CRDs of
//     those groups; every group a rule names is the core group, a
//     Kubernetes or platform group, one of provides.apiGroups, or (with a
//     variant dependsOn) left to the operator to find shared by a
//     dependency (ForeignGroups; apigroups.go).
//   - at most MaxComponents distinct component names and MaxApplications
//     applications (bounds.go).
//
// That every component's and application's chart exists is checked where
// the charts are: build.Build (the chart directory) and Pull (a layer).
func (c *Catalog) Validate() error {
	return c.validate(false).ToAggregate()
}

// ValidateBuilt checks the config blob of a built artifact: Validate's
// rules, and every library carries the name and version the build filled
// in.
func (c *Catalog) ValidateBuilt() error {
	return c.validate(true).ToAggregate()
}

func (c *Catalog) validate(built bool) field.ErrorList {
	var errs field.ErrorList
	if c.APIVersion != CatalogAPIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{CatalogAPIVersion}))
	}
	if c.Kind != CatalogKind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{CatalogKind}))
	}
	errs = append(errs, validateInfo(&c.CatalogInfo)...)

	libPaths := map[string]bool{}
	for i, lib := range c.Libraries {
		p := field.NewPath("libraries").Index(i)
		errs = append(errs, validateChartPath(p.Child("path"), lib.Path)...)
		if libPaths[lib.Path] {
			errs = append(errs, field.Duplicate(p.Child("path"), lib.Path))
		}
		libPaths[lib.Path] = true
		if built || lib.Name != "" {
			errs = append(errs, validateChartName(p.Child("name"), lib.Name)...)
		}
		if built || lib.Version != "" {
			errs = append(errs, validateSemver(p.Child("version"), lib.Version)...)
		}
	}

	// A catalog of applications only (the platform's own, whose charts
	// only ApplicationDefinitions install) needs no variant.
	if len(c.Variants) == 0 && len(c.Applications) == 0 {
		errs = append(errs, field.Required(field.NewPath("variants"), "a catalog has at least one variant, e.g. {name: default, components: [...]}, or at least one application"))
	}
	variantNames := map[string]bool{}
	for i := range c.Variants {
		v := &c.Variants[i]
		p := field.NewPath("variants").Index(i)
		errs = append(errs, validateLabel(p.Child("name"), v.Name)...)
		if variantNames[v.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), v.Name))
		}
		variantNames[v.Name] = true
		errs = append(errs, validateCatalogDeps(p.Child("dependsOn"), v.DependsOn, c.Name)...)
		errs = append(errs, validateComponents(p.Child("components"), v.Components, libPaths)...)
	}
	errs = append(errs, validateComponentCharts(c.Variants)...)
	errs = append(errs, validateApplications(c, libPaths)...)
	errs = append(errs, validateRuleGroups(c)...)
	errs = append(errs, validateBounds(c)...)
	return errs
}

// componentUse is where a component name is first used.
type componentUse struct {
	path  *field.Path
	chart string
}

// componentUses returns, for every component name, its first use.
func componentUses(variants []v1alpha1.PackageVariant) map[string]componentUse {
	uses := map[string]componentUse{}
	for i, v := range variants {
		for j, comp := range v.Components {
			if _, ok := uses[comp.Name]; !ok {
				uses[comp.Name] = componentUse{field.NewPath("variants").Index(i).Child("components").Index(j), comp.Chart}
			}
		}
	}
	return uses
}

// validateComponentCharts checks that a component name used in several
// variants names the same chart in each: the operator publishes one
// ExternalArtifact per component name, v1alpha1.ComponentArtifactName.
func validateComponentCharts(variants []v1alpha1.PackageVariant) field.ErrorList {
	var errs field.ErrorList
	uses := componentUses(variants)
	for i, v := range variants {
		for j, comp := range v.Components {
			first := uses[comp.Name]
			if comp.Chart != first.chart {
				errs = append(errs, field.Invalid(field.NewPath("variants").Index(i).Child("components").Index(j).Child("chart"), comp.Chart,
					fmt.Sprintf("component %q uses chart %q in %s: a component name names one chart in every variant (the platform publishes one chart artifact per name); use the same chart or rename one of the components",
						comp.Name, first.chart, first.path)))
			}
		}
	}
	return errs
}

// validateApplications checks applications: names are DNS labels, unique
// and no component's name (both name a published chart artifact); charts
// are chart paths, not libraries; a kind is CamelCase, one of
// provides.applicationKinds, and serves one application.
func validateApplications(c *Catalog, libPaths map[string]bool) field.ErrorList {
	var errs field.ErrorList
	uses := componentUses(c.Variants)
	names := map[string]bool{}
	kinds := map[string]bool{}
	for i, app := range c.Applications {
		p := field.NewPath("applications").Index(i)
		errs = append(errs, validateLabel(p.Child("name"), app.Name)...)
		if names[app.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), app.Name))
		}
		names[app.Name] = true
		if use, ok := uses[app.Name]; ok {
			errs = append(errs, field.Invalid(p.Child("name"), app.Name,
				fmt.Sprintf("is also the name of the component %s: components and applications share one name space (the platform publishes one chart artifact per name); rename the application", use.path)))
		}
		errs = append(errs, validateChartPath(p.Child("chart"), app.Chart)...)
		if libPaths[app.Chart] {
			errs = append(errs, field.Invalid(p.Child("chart"), app.Chart, "is a library: Helm cannot install a library chart; point the application at an application chart"))
		}
		errs = append(errs, CheckApplicationRules(p.Child("rules"), app.Rules)...)
		errs = append(errs, CheckTenantRoleRules(p.Child("tenantRoles"), app.TenantRoles, nil)...)
		if app.Kind == "" {
			continue
		}
		kp := p.Child("kind")
		switch {
		case !kindPattern.MatchString(app.Kind):
			errs = append(errs, field.Invalid(kp, app.Kind, "want a CamelCase kind, e.g. Postgres"))
		case !slices.Contains(c.Provides.ApplicationKinds, app.Kind):
			errs = append(errs, field.Invalid(kp, app.Kind, fmt.Sprintf("is not in provides.applicationKinds %v: add it there, or fix the kind", c.Provides.ApplicationKinds)))
		case kinds[app.Kind]:
			errs = append(errs, field.Duplicate(kp, app.Kind))
		}
		kinds[app.Kind] = true
	}
	return errs
}

func validateInfo(info *v1alpha1.CatalogInfo) field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("name")
	if info.Name == "" {
		errs = append(errs, field.Required(name, "the catalog's name, a DNS subdomain such as \"services\""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(info.Name) {
			errs = append(errs, field.Invalid(name, info.Name, msg))
		}
	}
	errs = append(errs, validateSemver(field.NewPath("version"), info.Version)...)
	errs = append(errs, validateSemver(field.NewPath("minPlatformVersion"), info.MinPlatformVersion)...)
	errs = append(errs, validateNames(field.NewPath("requiredProperties"), info.RequiredProperties, propertyPattern,
		"a K3 property: dotted lowerCamel segments, e.g. network.stableVMAddress")...)
	provides := field.NewPath("provides")
	errs = append(errs, validateNames(provides.Child("applicationKinds"), info.Provides.ApplicationKinds, kindPattern,
		"a CamelCase kind, e.g. Postgres")...)
	errs = append(errs, validateNames(provides.Child("backupStrategyKinds"), info.Provides.BackupStrategyKinds, kindPattern,
		"a CamelCase kind, e.g. CNPGBackup")...)
	errs = append(errs, validateProvidedGroups(provides, info.Provides.APIGroups, info.Provides.SharedAPIGroups)...)
	return errs
}

func validateComponents(p *field.Path, comps []v1alpha1.PackageComponent, libPaths map[string]bool) field.ErrorList {
	var errs field.ErrorList
	if len(comps) == 0 {
		return append(errs, field.Required(p, "a variant installs at least one component"))
	}
	names := map[string]bool{}
	for _, comp := range comps {
		names[comp.Name] = true
	}
	seen := map[string]bool{}
	for i, comp := range comps {
		cp := p.Index(i)
		errs = append(errs, validateLabel(cp.Child("name"), comp.Name)...)
		if seen[comp.Name] {
			errs = append(errs, field.Duplicate(cp.Child("name"), comp.Name))
		}
		seen[comp.Name] = true
		errs = append(errs, validateChartPath(cp.Child("chart"), comp.Chart)...)
		if libPaths[comp.Chart] {
			errs = append(errs, field.Invalid(cp.Child("chart"), comp.Chart, "is a library: Helm cannot install a library chart; point the component at an application chart"))
		}
		errs = append(errs, validateLabel(cp.Child("namespace"), comp.Namespace)...)
		if rule := v1alpha1.ReservedNamespace(comp.Namespace); rule != "" {
			errs = append(errs, field.Invalid(cp.Child("namespace"), comp.Namespace,
				rule+": no component, privileged or not, installs there; give the component a namespace of its own, e.g. cozy-<component>"))
		}
		deps := map[string]bool{}
		for j, dep := range comp.DependsOn {
			dp := cp.Child("dependsOn").Index(j)
			switch {
			case dep == comp.Name:
				errs = append(errs, field.Invalid(dp, dep, "a component cannot depend on itself"))
			case !names[dep]:
				errs = append(errs, field.NotFound(dp, dep))
			case deps[dep]:
				errs = append(errs, field.Duplicate(dp, dep))
			}
			deps[dep] = true
		}
		if len(comp.ConversionWebhooks) > 0 && !comp.Privileged {
			errs = append(errs, field.Forbidden(cp.Child("conversionWebhooks"),
				"conversion webhooks need privileged: true on the component (a webhook reads every object of its kind; the cluster operator consents with allowPrivileged)"))
		}
		errs = append(errs, validateNames(cp.Child("conversionWebhooks"), comp.ConversionWebhooks, crdNamePattern,
			"a CRD name <plural>.<group>, e.g. widgets.example.org")...)
		if len(comp.ClusterRules) > 0 && !comp.Privileged {
			errs = append(errs, field.Forbidden(cp.Child("clusterRules"),
				"cluster-wide rules need privileged: true on the component (a Package then installs it only with allowPrivileged: true)"))
		}
		if comp.Privileged {
			for j, r := range comp.Rules {
				errs = append(errs, validateRule(cp.Child("rules").Index(j), r, true)...)
			}
		} else {
			errs = append(errs, CheckComponentRules(cp.Child("rules"), comp.Rules)...)
		}
		for j, r := range comp.ClusterRules {
			errs = append(errs, validateRule(cp.Child("clusterRules").Index(j), r, false)...)
		}
		if comp.Values != nil {
			var obj map[string]any
			if err := json.Unmarshal(comp.Values.Raw, &obj); err != nil || obj == nil {
				errs = append(errs, field.TypeInvalid(cp.Child("values"), string(comp.Values.Raw), "values are a map of chart values (a YAML mapping)"))
			}
		}
	}
	if cycle := findCycle(comps); cycle != nil {
		errs = append(errs, field.Invalid(p, strings.Join(cycle, " -> "), "dependsOn forms a cycle; remove one of these dependencies"))
	}
	return errs
}

// findCycle returns one dependsOn cycle among comps, as the names along it
// with the first repeated at the end, or nil. Unknown names are ignored
// (reported elsewhere).
func findCycle(comps []v1alpha1.PackageComponent) []string {
	deps := map[string][]string{}
	var names []string
	for _, c := range comps {
		deps[c.Name] = c.DependsOn
		names = append(names, c.Name)
	}
	slices.Sort(names)
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = visiting
		stack = append(stack, n)
		for _, d := range deps[n] {
			if _, known := deps[d]; !known {
				continue
			}
			switch state[d] {
			case visiting:
				i := slices.Index(stack, d)
				return append(slices.Clone(stack[i:]), d)
			case unvisited:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, n := range names {
		if state[n] == unvisited {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

// validateRule follows ValidatePolicyRule of k8s.io/kubernetes
// pkg/apis/rbac/validation, so a rule that passes here is one the API
// server accepts in a Role (namespaced) or ClusterRole.
func validateRule(p *field.Path, r rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	if len(r.Verbs) == 0 {
		errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value, e.g. [get, list, watch]"))
	}
	if len(r.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs; move the rule to clusterRules"))
		}
		if len(r.APIGroups) > 0 || len(r.Resources) > 0 {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs; split the rule"))
		}
		return errs
	}
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), `resource rules must supply at least one api group; "" is the core group`))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

func validateCatalogDeps(p *field.Path, deps []string, self string) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, d := range deps {
		dp := p.Index(i)
		for _, msg := range validation.IsDNS1123Subdomain(d) {
			errs = append(errs, field.Invalid(dp, d, msg+" (a catalog name)"))
		}
		if d == self {
			errs = append(errs, field.Invalid(dp, d, "a catalog cannot depend on itself"))
		}
		if seen[d] {
			errs = append(errs, field.Duplicate(dp, d))
		}
		seen[d] = true
	}
	return errs
}

func validateNames(p *field.Path, names []string, re *regexp.Regexp, want string) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, n := range names {
		if !re.MatchString(n) {
			errs = append(errs, field.Invalid(p.Index(i), n, "want "+want))
		}
		if seen[n] {
			errs = append(errs, field.Duplicate(p.Index(i), n))
		}
		seen[n] = true
	}
	return errs
}

func validateLabel(p *field.Path, s string) field.ErrorList {
	if s == "" {
		return field.ErrorList{field.Required(p, "a DNS label: lowercase letters, digits and '-'")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(s) {
		errs = append(errs, field.Invalid(p, s, msg))
	}
	return errs
}

func validateSemver(p *field.Path, s string) field.ErrorList {
	if s == "" {
		return field.ErrorList{field.Required(p, "a SemVer 2.0 version such as 1.2.0")}
	}
	if _, err := semver.StrictNewVersion(s); err != nil {
		return field.ErrorList{field.Invalid(p, s, fmt.Sprintf("not a SemVer 2.0 version (MAJOR.MINOR.PATCH, no leading v): %v", err))}
	}
	return nil
}

// validateChartName follows Helm's rule for chart names (Chart.yaml name):
// non-empty, and no path separators.
func validateChartName(p *field.Path, s string) field.ErrorList {
	if s == "" || strings.ContainsAny(s, `/\`) {
		return field.ErrorList{field.Invalid(p, s, "a chart name from Chart.yaml, without '/'")}
	}
	return nil
}

// validateChartPath accepts a clean, relative, slash-separated path that
// stays inside its root, the form of chart paths and layer titles.
func validateChartPath(p *field.Path, s string) field.ErrorList {
	if err := CheckChartPath(s); err != nil {
		return field.ErrorList{field.Invalid(p, s, err.Error())}
	}
	return nil
}

// CheckChartPath returns an error, saying what to change, unless s is a
// chart path: a clean relative slash-separated path of at most 255 bytes
// in [A-Za-z0-9._/-] with no "." or ".." element, e.g. "charts/postgres".
func CheckChartPath(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("a chart path is required, e.g. charts/postgres")
	case len(s) > 255:
		return fmt.Errorf("is longer than 255 bytes")
	case !chartPathPattern.MatchString(s):
		return fmt.Errorf("may contain only letters, digits, '.', '_', '-' and '/'")
	case strings.HasPrefix(s, "/"):
		return fmt.Errorf("must be relative to the catalog directory, without a leading '/'")
	case path.Clean(s) != s:
		return fmt.Errorf("must be a clean path (no empty, '.' or trailing elements); use %q", path.Clean(s))
	}
	for _, elem := range strings.Split(s, "/") {
		if elem == "." || elem == ".." {
			return fmt.Errorf("must stay inside the catalog directory: no %q elements", elem)
		}
	}
	return nil
}
