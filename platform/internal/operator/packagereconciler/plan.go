package packagereconciler

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/depgraph"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/operator/requirements"
	"cozystack.io/platform/internal/status"
)

// view is what one Package would install, derived from its spec and its
// source's status alone: the input of the cross-package checks.
type view struct {
	pkg     *v1alpha1.Package
	source  *v1alpha1.PackageSource
	variant *v1alpha1.PackageVariant
	// enabled are the variant's enabled components, in variant order.
	enabled []v1alpha1.PackageComponent
}

// catalog is the name of the catalog the view installs.
func (v *view) catalog() string { return v.source.Status.Catalog.Name }

// node names a component in the dependency graph.
func node(pkg, component string) string { return pkg + "/" + component }

// plannedComponent is one HelmRelease to create.
type plannedComponent struct {
	v1alpha1.PackageComponent
	// Release is the HelmRelease name (names.HelmRelease).
	Release string
	// ChartDigest is the digest of the component's chart archive in the
	// served revision; the HelmRelease is current once helm-controller
	// has attempted it.
	ChartDigest string
	// PackageValues are the Package's values for the component (the top
	// layer), or nil.
	PackageValues *apiextensionsv1.JSON
	// DependsOn are the HelmReleases to wait for.
	DependsOn []helmv2.DependencyReference
}

// plan is what a Package installs now.
type plan struct {
	view
	components []plannedComponent
	// held is true when spec.version pins another version than the
	// source serves: existing HelmReleases are suspended, nothing new is
	// created.
	held bool
}

// newView checks everything that depends on the Package and its source
// only, in the order a person would fix it, and returns the view or the
// result to report. src is nil when the PackageSource does not exist.
func newView(p *v1alpha1.Package, src *v1alpha1.PackageSource, platform requirements.Platform) (*view, *status.Result) {
	stalled := func(reason, format string, args ...any) (*view, *status.Result) {
		return nil, &status.Result{State: status.StateStalled, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	if src == nil {
		return stalled(v1alpha1.ReasonSourceMissing,
			"PackageSource %q does not exist: create it, or point spec.sourceRef.name at an existing one; the HelmReleases installed so far are kept",
			p.Spec.SourceRef.Name)
	}
	if src.Status.Artifact == nil || src.Status.Catalog == nil {
		return nil, &status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonSourceNotReady,
			Message: fmt.Sprintf("PackageSource %q has not served a revision yet: see its Ready condition", src.Name)}
	}
	if ready := apimeta.FindStatusCondition(src.Status.Conditions, meta.ReadyCondition); ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != src.Generation {
		// All or nothing (docs/operator/catalogs.md, "Catalog delivery", "Refusals leave
		// nothing behind"): a source that refused its revision
		// (a conflict, a bad declaration) installs nothing of it.
		msg := "no Ready condition yet"
		if ready != nil {
			msg = fmt.Sprintf("Ready=%s %s: %s", ready.Status, ready.Reason, ready.Message)
		}
		return nil, &status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonSourceNotReady,
			Message: fmt.Sprintf("PackageSource %q is not Ready (%s): nothing is installed from it until it is; the HelmReleases installed so far are kept", src.Name, msg)}
	}
	if err := requirements.Check(*src.Status.Catalog, platform); err != nil {
		return stalled(v1alpha1.ReasonRequirementsNotMet, "%v", err)
	}
	variantName := p.Spec.Variant
	if variantName == "" {
		variantName = "default"
	}
	var variant *v1alpha1.PackageVariant
	var available []string
	for i := range src.Status.Variants {
		available = append(available, src.Status.Variants[i].Name)
		if src.Status.Variants[i].Name == variantName {
			variant = &src.Status.Variants[i]
		}
	}
	if variant == nil {
		return stalled(v1alpha1.ReasonVariantMissing, "spec.variant %q is not a variant of catalog %s %s (PackageSource %s); available: %s",
			variantName, src.Status.Catalog.Name, src.Status.Catalog.Version, src.Name, strings.Join(available, ", "))
	}
	byName := map[string]v1alpha1.PackageComponent{}
	var compNames []string
	for _, c := range variant.Components {
		byName[c.Name] = c
		compNames = append(compNames, c.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Spec.Components)) {
		if _, ok := byName[name]; ok {
			continue
		}
		if slices.ContainsFunc(src.Status.Applications, func(a v1alpha1.PackageApplication) bool { return a.Name == name }) {
			return stalled(v1alpha1.ReasonComponentMissing, "spec.components[%q]: %s is an application of catalog %s, which tenants install through its ApplicationDefinition, never a Package: remove it from spec.components; the variant's components: %s",
				name, name, src.Status.Catalog.Name, strings.Join(compNames, ", "))
		}
		return stalled(v1alpha1.ReasonComponentMissing, "spec.components[%q]: variant %s has no such component; its components: %s",
			name, variant.Name, strings.Join(compNames, ", "))
	}
	v := &view{pkg: p, source: src, variant: variant}
	var privileged []string
	for _, c := range variant.Components {
		if !p.Spec.Components[c.Name].IsEnabled() {
			continue
		}
		v.enabled = append(v.enabled, c)
		if c.Privileged {
			privileged = append(privileged, c.Name)
		}
	}
	for _, c := range v.enabled {
		for _, d := range c.DependsOn {
			if !p.Spec.Components[d].IsEnabled() {
				return nil, &status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonDependencyNotReady,
					Message: fmt.Sprintf("component %s depends on component %s, which spec.components[%q].enabled turns off: enable %s or disable %s", c.Name, d, d, d, c.Name)}
			}
		}
	}
	if len(privileged) > 0 && !p.Spec.AllowPrivileged {
		return stalled(v1alpha1.ReasonPrivilegeNotAllowed,
			"components %s are privileged and ask for: %s; set spec.allowPrivileged: true to install them, or disable them in spec.components; nothing was installed",
			strings.Join(privileged, ", "), describeRequest(requested(v)))
	}
	return v, nil
}

// newPlan resolves v's dependencies against the views of all Packages
// (others, keyed by Package name, v included) and returns the plan or the
// result to report: a cycle (DependencyCycle) or a catalog no Package
// installs (DependencyNotReady).
func newPlan(v *view, others map[string]*view) (*plan, *status.Result) {
	// Packages installing each catalog, for variants[].dependsOn.
	byCatalog := map[string][]*view{}
	for _, o := range others {
		if o.pkg.DeletionTimestamp.IsZero() {
			byCatalog[o.catalog()] = append(byCatalog[o.catalog()], o)
		}
	}
	var g depgraph.Graph
	for _, o := range others {
		var catalogDeps []string
		for _, cat := range o.variant.DependsOn {
			for _, dep := range byCatalog[cat] {
				for _, dc := range dep.enabled {
					catalogDeps = append(catalogDeps, node(dep.pkg.Name, dc.Name))
				}
			}
		}
		for _, c := range o.enabled {
			g.Add(node(o.pkg.Name, c.Name), catalogDeps...)
			for _, d := range c.DependsOn {
				g.Add(node(o.pkg.Name, c.Name), node(o.pkg.Name, d))
			}
		}
	}
	var starts []string
	for _, c := range v.enabled {
		starts = append(starts, node(v.pkg.Name, c.Name))
	}
	if cycle := g.Cycle(starts...); cycle != nil {
		return nil, &status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonDependencyCycle,
			Message: fmt.Sprintf("dependsOn forms a cycle (<package>/<component>): %s; break it in a catalog's dependsOn or uninstall one of these Packages; nothing was installed", depgraph.Format(cycle))}
	}

	var catalogDeps []helmv2.DependencyReference
	for _, cat := range v.variant.DependsOn {
		deps := byCatalog[cat]
		if len(deps) == 0 {
			return nil, &status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonDependencyNotReady,
				Message: fmt.Sprintf("variant %s depends on catalog %s, which no Package installs: create a Package from a PackageSource serving catalog %s", v.variant.Name, cat, cat)}
		}
		for _, dep := range deps {
			for _, dc := range dep.enabled {
				catalogDeps = append(catalogDeps, helmv2.DependencyReference{Name: names.HelmRelease(dep.pkg.Name, dc.Name), Namespace: dc.Namespace})
			}
		}
	}

	charts := map[string]string{}
	for _, c := range v.source.Status.Artifact.Charts {
		charts[c.Path] = c.Digest
	}
	byName := map[string]v1alpha1.PackageComponent{}
	for _, c := range v.enabled {
		byName[c.Name] = c
	}
	p := &plan{view: *v}
	for _, c := range v.enabled {
		pc := plannedComponent{
			PackageComponent: c,
			Release:          names.HelmRelease(v.pkg.Name, c.Name),
			ChartDigest:      charts[c.Chart],
			PackageValues:    v.pkg.Spec.Components[c.Name].Values,
			DependsOn:        slices.Clone(catalogDeps),
		}
		for _, d := range c.DependsOn {
			pc.DependsOn = append(pc.DependsOn, helmv2.DependencyReference{Name: names.HelmRelease(v.pkg.Name, d), Namespace: byName[d].Namespace})
		}
		p.components = append(p.components, pc)
	}
	if pin := v.pkg.Spec.Version; pin != "" && pin != v.source.Status.Catalog.Version {
		p.held = true
	}
	return p, nil
}
