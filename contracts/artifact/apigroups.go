package artifact

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v2"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// CRD groups (README.md, "CRD groups"): a catalog declares the API groups
// of the CRDs it ships in provides.apiGroups, and every CRD of its charts
// is of one of them; a group belongs to the catalog that ships it first
// (the operator refuses a second). The rules a catalog declares name only
// the groups of Kubernetes and the platform (under their own allow-lists),
// its own groups, or groups a catalog it depends on shares
// (provides.sharedAPIGroups).

// platformGroup reports whether g is a group of Kubernetes or of the
// platform, which no catalog declares: the core group, Kubernetes' built-in
// groups (apps, batch, autoscaling, policy, k8s.io and *.k8s.io), the
// platform's (cozystack.io) and Flux's. Rules on them are checked by the
// allow-lists of tenantrules.go, not here.
func platformGroup(g string) bool {
	return slices.Contains(builtinGroups, g) || reservedGroup(g)
}

// reservedGroup reports whether g is Kubernetes', Flux's or the
// platform's: no catalog may ship a CRD of it.
func reservedGroup(g string) bool {
	for _, d := range []string{"k8s.io", "cozystack.io", "fluxcd.io", fluxOperatorGroup} {
		if g == d || strings.HasSuffix(g, "."+d) {
			return true
		}
	}
	return false
}

// validateProvidedGroups checks provides.apiGroups and sharedAPIGroups:
// DNS subdomains with a dot (what a CRD's spec.group must be), none
// reserved, unique; sharedAPIGroups a subset of apiGroups.
func validateProvidedGroups(p *field.Path, groups, shared []string) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, g := range groups {
		gp := p.Child("apiGroups").Index(i)
		for _, msg := range validation.IsDNS1123Subdomain(g) {
			errs = append(errs, field.Invalid(gp, g, msg))
		}
		switch {
		case !strings.Contains(g, "."):
			errs = append(errs, field.Invalid(gp, g, "a CRD's API group has at least one dot, e.g. postgresql.cnpg.io"))
		case reservedGroup(g):
			errs = append(errs, field.Invalid(gp, g, "is a group of Kubernetes (k8s.io), Flux (fluxcd.io, fluxcd.controlplane.io) or the platform (cozystack.io): no catalog ships CRDs of it"))
		case seen[g]:
			errs = append(errs, field.Duplicate(gp, g))
		}
		seen[g] = true
	}
	for i, g := range shared {
		if !slices.Contains(groups, g) {
			errs = append(errs, field.Invalid(p.Child("sharedAPIGroups").Index(i), g, "is not in provides.apiGroups: a catalog shares only groups it ships; add it there or remove it"))
		}
	}
	return errs
}

// GroupUse is a rule's use of an API group that is not the catalog's own
// nor Kubernetes' or the platform's: it must be shared by one of
// Dependencies (provides.sharedAPIGroups), which the platform's operator
// checks against the served catalogs before it publishes anything.
type GroupUse struct {
	// Group is the API group; Field the rule's field path, e.g.
	// "applications[0].tenantRoles.admin[1].apiGroups".
	Group string
	Field string
	// Dependencies are the catalogs that could grant it: the dependsOn of
	// the component's variant, or of every variant for an application.
	Dependencies []string
}

// ForeignGroups returns the uses of API groups in c's rules
// (components[].rules and clusterRules, applications[].rules and
// tenantRoles) that are neither Kubernetes' or the platform's nor in
// c's provides.apiGroups, in field order. Validate refuses such a use
// when Dependencies is empty; the rest the operator checks.
func (c *Catalog) ForeignGroups() []GroupUse {
	var out []GroupUse
	add := func(p *field.Path, rules []rbacv1.PolicyRule, deps []string) {
		for i, r := range rules {
			for _, g := range r.APIGroups {
				if g == "*" || platformGroup(g) || slices.Contains(c.Provides.APIGroups, g) {
					continue
				}
				out = append(out, GroupUse{Group: g, Field: p.Index(i).Child("apiGroups").String(), Dependencies: deps})
			}
		}
	}
	var allDeps []string
	for i, v := range c.Variants {
		for _, d := range v.DependsOn {
			if !slices.Contains(allDeps, d) {
				allDeps = append(allDeps, d)
			}
		}
		for j, comp := range v.Components {
			cp := field.NewPath("variants").Index(i).Child("components").Index(j)
			add(cp.Child("rules"), comp.Rules, v.DependsOn)
			add(cp.Child("clusterRules"), comp.ClusterRules, v.DependsOn)
		}
	}
	for i, app := range c.Applications {
		ap := field.NewPath("applications").Index(i)
		add(ap.Child("rules"), app.Rules, allDeps)
		for _, level := range app.TenantRoles.Levels() {
			add(ap.Child("tenantRoles").Child(levelField(level.Level)), level.Rules, allDeps)
		}
	}
	return out
}

// validateRuleGroups refuses the uses of ForeignGroups that no declared
// dependency could grant.
func validateRuleGroups(c *Catalog) field.ErrorList {
	var errs field.ErrorList
	for _, u := range c.ForeignGroups() {
		if len(u.Dependencies) > 0 {
			continue
		}
		errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: u.Field, BadValue: u.Group, Detail: fmt.Sprintf(
			"is not in provides.apiGroups and the catalog depends on no catalog: add it there if the catalog ships its CRDs, or add the catalog that ships them (and lists it in provides.sharedAPIGroups) to variants[].dependsOn")})
	}
	for i, v := range c.Variants {
		for j, comp := range v.Components {
			for k, name := range comp.ConversionWebhooks {
				if _, group, _ := strings.Cut(name, "."); !slices.Contains(c.Provides.APIGroups, group) {
					errs = append(errs, field.Invalid(field.NewPath("variants").Index(i).Child("components").Index(j).Child("conversionWebhooks").Index(k), name,
						fmt.Sprintf("is not a CRD of this catalog's groups (provides.apiGroups %v): a component gives only its catalog's own CRDs a conversion webhook", c.Provides.APIGroups)))
				}
			}
		}
	}
	return errs
}

// ChartFile is one file of a chart: its path inside the chart archive
// (or chart directory), e.g. "postgres-operator/crds/clusters.yaml", and
// its bytes.
type ChartFile struct {
	Name string
	Data []byte
}

// crdCandidate reports whether name (a path inside a chart archive, first
// element the chart's directory) is a file Helm may install as a CRD: a
// manifest under crds/ of the chart or of a subchart (charts/<sub>/), or
// a manifest in templates/ (checked only when it holds no template
// action).
func crdCandidate(name string) (crd, tmpl bool) {
	ext := path.Ext(name)
	if ext != ".yaml" && ext != ".yml" && ext != ".json" {
		return false, false
	}
	parts := strings.Split(name, "/")
	// Strip "<chart>/" and any "charts/<sub>/" prefixes.
	parts = parts[1:]
	for len(parts) > 2 && parts[0] == "charts" {
		parts = parts[2:]
	}
	if len(parts) < 2 {
		return false, false
	}
	return parts[0] == "crds", parts[0] == "templates"
}

// CheckChartCRDs checks the CRDs of chart chartPath's files: every
// CustomResourceDefinition in crds/ (of the chart or a subchart), and
// in a templates/ file that holds no template action, is of a group in
// c's provides.apiGroups. Files that are not CRD candidates are ignored.
// The error names each file, the CRD and the field to fix.
func CheckChartCRDs(c *Catalog, chartPath string, files []ChartFile) error {
	var errs []error
	for _, f := range files {
		crd, tmpl := crdCandidate(f.Name)
		if !crd && !(tmpl && !bytes.Contains(f.Data, []byte("{{"))) {
			continue
		}
		groups, err := crdGroups(f.Data)
		if err != nil {
			if crd {
				errs = append(errs, fmt.Errorf("chart %s: %s: %v: Helm could not install it either; fix the file", chartPath, f.Name, err))
			}
			continue
		}
		for _, g := range groups {
			if !slices.Contains(c.Provides.APIGroups, g.group) {
				errs = append(errs, fmt.Errorf("chart %s: %s: CustomResourceDefinition %s has spec.group %q, which is not in provides.apiGroups %v: add the group to provides.apiGroups in %s (a group belongs to the catalog that ships it first), or remove the CRD",
					chartPath, f.Name, g.name, g.group, c.Provides.APIGroups, CatalogFile))
			}
		}
	}
	return errors.Join(errs...)
}

type crdGroup struct{ name, group string }

// crdGroups returns the name and spec.group of each
// CustomResourceDefinition among the YAML (or JSON) documents of data.
func crdGroups(data []byte) ([]crdGroup, error) {
	var out []crdGroup
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		// Decoded by the YAML parser sigs.k8s.io/yaml (Helm's) uses, straight
		// into these fields: the rest of the document (a CRD's schema, most
		// of its bytes) is parsed but never converted to JSON and back.
		// Keys match exactly, as Kubernetes reads them ("Group" is not
		// spec.group).
		var obj struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
			Spec struct {
				Group string `yaml:"group"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return out, err
		}
		if obj.Kind == "CustomResourceDefinition" && strings.HasPrefix(obj.APIVersion, "apiextensions.k8s.io/") {
			out = append(out, crdGroup{obj.Metadata.Name, obj.Spec.Group})
		}
	}
}

// maxNestedCharts bounds how deep ChartCRDFiles follows chart archives
// inside charts/ (Helm loads them as subcharts and installs their CRDs).
const maxNestedCharts = 4

// ChartCRDFiles reads a chart archive (gzipped tar, as Helm packages it)
// from r to its end and returns the files CheckChartCRDs checks: the
// manifests under crds/ and templates/ of the chart and of its subcharts,
// including subchart archives in charts/. Each file is read up to
// maxFile bytes (a larger one is an error naming it); others are skipped
// unread. r is always read to its end, so a tee sees every byte.
func ChartCRDFiles(r io.Reader, maxFile int64) ([]ChartFile, error) {
	files, err := chartCRDFiles(r, "", maxFile, 0)
	_, _ = io.Copy(io.Discard, r)
	return files, err
}

func chartCRDFiles(r io.Reader, prefix string, maxFile int64, depth int) ([]ChartFile, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a gzipped chart archive: %w", err)
	}
	tr := tar.NewReader(zr)
	var out []ChartFile
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if hd.Typeflag != tar.TypeReg {
			continue
		}
		name := prefix + strings.TrimPrefix(path.Clean(hd.Name), "/")
		dir, base := path.Split(name)
		if (strings.HasSuffix(base, ".tgz") || strings.HasSuffix(base, ".tar.gz")) && strings.HasSuffix(dir, "/charts/") {
			if depth >= maxNestedCharts {
				return out, fmt.Errorf("%s: subcharts nest deeper than %d", name, maxNestedCharts)
			}
			sub, err := chartCRDFiles(io.LimitReader(tr, maxFile), dir, maxFile, depth+1)
			out = append(out, sub...)
			if err != nil {
				return out, fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		crd, tmpl := crdCandidate(name)
		if !crd && !tmpl {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxFile+1))
		if err != nil {
			return out, fmt.Errorf("%s: %w", name, err)
		}
		if int64(len(data)) > maxFile {
			return out, fmt.Errorf("%s: larger than %d bytes", name, maxFile)
		}
		out = append(out, ChartFile{Name: name, Data: data})
	}
}
