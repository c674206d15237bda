package packagereconciler

import (
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/operator/rbac"
)

// releaseInterval is how often helm-controller re-checks an installed
// release (drift, and retries after a failure).
const releaseInterval = 10 * time.Minute

// ownerMeta returns the metadata marking an object as Package p's (and
// component's, when not empty): p's controller reference, which alone
// makes the object p's (see ownership.go), and the labels and annotation
// the operator selects and describes its objects by.
func ownerMeta(p *v1alpha1.Package, component string) metav1.ObjectMeta {
	m := markMeta(p.Name, component)
	m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(p, packageGVK)}
	return m
}

// markMeta returns the labels and annotation of an object of Package pkg
// (and component's, when not empty), without an owner reference.
func markMeta(pkg, component string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Labels: map[string]string{
			v1alpha1.LabelManagedBy: v1alpha1.ManagedByOperator,
			names.LabelPackage:      names.LabelValue(pkg),
		},
		Annotations: map[string]string{names.AnnotationPackage: pkg},
	}
	if component != "" {
		m.Labels[names.LabelComponent] = component
	}
	return m
}

// desired is every object one component needs, in creation order:
// identity first (helm-controller impersonates it at once), then the
// catalog values, then the HelmRelease.
type desired struct {
	component plannedComponent
	identity  rbac.Identity
	// values is nil when the catalog gives the component no values.
	values  *corev1.ConfigMap
	release *helmv2.HelmRelease
}

// objects returns the component's objects in creation order.
func (d *desired) objects() []client.Object {
	objs := []client.Object{d.identity.ServiceAccount, d.identity.Role, d.identity.RoleBinding, d.identity.StorageRole, d.identity.StorageRoleBinding}
	if d.identity.ClusterRole != nil {
		objs = append(objs, d.identity.ClusterRole, d.identity.ClusterRoleBinding)
	}
	if d.values != nil {
		objs = append(objs, d.values)
	}
	return append(objs, d.release)
}

// build returns the objects of component c of plan p. tenant says whether
// c's namespace is a tenant namespace (labelled v1alpha1.LabelTenant).
//
// Values layer (docs/operator/catalogs.md, "Catalog delivery", "Values";
// contracts/artifact/README.md) as
// chart defaults < catalog values < cluster values (K2) < Package values:
// helm-controller merges valuesFrom in order and spec.values last, so the
// catalog's values come from a ConfigMap the operator writes
// (names.CatalogValues), then the K2 ConfigMap cozystack-values, then the
// Package's values in spec.values.
//
// The K2 reference is required in tenant namespaces: there the projection
// (cozystack-controller) writes it, and a release must wait for it rather
// than render without cluster values (K2's failure story). Elsewhere, such
// as a system component's own namespace, nothing projects K2, so the
// reference is optional: the chart renders without `_cluster`, and any
// cozy-lib helper that needs a key fails the render loudly (K5) instead of
// rendering an empty value.
func build(p *plan, c plannedComponent, tenant bool) *desired {
	m := ownerMeta(p.pkg, c.Name)
	// The identity outlives its HelmRelease's deletion, whoever deletes
	// them (see IdentityFinalizer).
	im := *m.DeepCopy()
	im.Finalizers = []string{IdentityFinalizer}
	d := &desired{component: c, identity: rbac.For(p.pkg.Name, c.PackageComponent, im)}
	if c.Values != nil && len(c.Values.Raw) > 0 && string(c.Values.Raw) != "null" && string(c.Values.Raw) != "{}" {
		// The catalog's values are a JSON object (artifact validation);
		// Helm reads YAML, of which JSON is a subset, but YAML is what a
		// person inspecting the ConfigMap expects.
		doc, err := yaml.JSONToYAML(c.Values.Raw)
		if err != nil {
			doc = c.Values.Raw
		}
		cm := &corev1.ConfigMap{ObjectMeta: *m.DeepCopy(), Data: map[string]string{v1alpha1.ValuesKey: string(doc)}}
		cm.Name, cm.Namespace = names.CatalogValues(p.pkg.Name, c.Name), c.Namespace
		// helm-controller re-renders when a watched ConfigMap changes.
		cm.Labels[v1alpha1.LabelFluxWatch] = v1alpha1.FluxWatchEnabled
		d.values = cm
	}

	hr := &helmv2.HelmRelease{ObjectMeta: *m.DeepCopy()}
	hr.Name, hr.Namespace = c.Release, c.Namespace
	hr.Spec = helmv2.HelmReleaseSpec{
		Interval: metav1.Duration{Duration: releaseInterval},
		ChartRef: &helmv2.CrossNamespaceSourceReference{
			APIVersion: sourcev1.GroupVersion.String(),
			Kind:       sourcev1.ExternalArtifactKind,
			Name:       v1alpha1.ComponentArtifactName(p.source.Name, c.Name),
			Namespace:  v1alpha1.SystemNamespace,
		},
		ServiceAccountName: d.identity.ServiceAccount.Name,
		StorageNamespace:   d.identity.StorageRole.Namespace,
		DependsOn:          c.DependsOn,
		Suspend:            p.held,
		// DisableTakeOwnership: helm-controller v1.4 otherwise adopts
		// objects another release owns (Helm's --take-ownership), and
		// uninstalling this release would then delete them.
		// DisableHooks: Helm creates hook objects outside the release's
		// ownership checks (a before-hook-creation hook deletes whatever
		// holds its name), so no hook runs (docs/operator/catalogs.md, "Catalog
		// delivery", "What a third-party catalog gets").
		Install: &helmv2.Install{
			CRDs:                 helmv2.Create,
			DisableTakeOwnership: true,
			DisableHooks:         true,
			Remediation:          &helmv2.InstallRemediation{Retries: 0},
		},
		Upgrade: &helmv2.Upgrade{
			CRDs:                 helmv2.CreateReplace,
			DisableTakeOwnership: true,
			DisableHooks:         true,
		},
		Rollback:  &helmv2.Rollback{DisableHooks: true},
		Uninstall: &helmv2.Uninstall{KeepHistory: false, DisableHooks: true},
	}
	if d.values != nil {
		hr.Spec.ValuesFrom = append(hr.Spec.ValuesFrom, meta.ValuesReference{
			Kind: "ConfigMap", Name: d.values.Name, ValuesKey: v1alpha1.ValuesKey,
		})
	}
	hr.Spec.ValuesFrom = append(hr.Spec.ValuesFrom, v1alpha1.ValuesReference(v1alpha1.ValuesSourceConfigMap, !tenant))
	if c.PackageValues != nil && len(c.PackageValues.Raw) > 0 && string(c.PackageValues.Raw) != "null" {
		hr.Spec.Values = c.PackageValues.DeepCopy()
	}
	if len(hr.Spec.DependsOn) == 0 {
		hr.Spec.DependsOn = nil
	}
	d.release = hr
	return d
}

// namespace returns the Namespace the operator creates for a component
// whose namespace does not exist, labelled as Package pkg's; claimMeta
// adds the claim (namespaces.go). It carries no owner reference (the
// garbage collector would delete it, and whatever others put there, with
// the Package), and the operator never deletes it: the claim outlives the
// Package, so only a reinstall of its catalog takes it over.
func namespace(pkg, name string) *corev1.Namespace {
	m := markMeta(pkg, "")
	m.Name = name
	return &corev1.Namespace{ObjectMeta: m}
}
