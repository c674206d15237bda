package packagesourcereconciler

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
)

// Publish on demand (docs/operator/catalogs.md, "Catalog delivery", "What a third-party
// catalog gets"): a source publishes the chart of a component only while
// a Package of it enables that component, so a catalog nobody installs
// creates no ExternalArtifact for its components, however many it
// declares (artifact.MaxComponents bounds them too). Applications' charts
// are published whenever the source is Ready: its ApplicationDefinitions
// install them, per tenant, with no Package.

// wantedCharts maps the ExternalArtifact name of every chart PackageSource
// source publishes for catalog c to the chart's path: each application,
// and each component some Package of the source enables (demanded).
func wantedCharts(c *artifact.Catalog, source string, demanded map[string]bool) map[string]string {
	charts := map[string]string{}
	for name, path := range c.PublishedCharts() {
		if _, isApp := c.Application(name); isApp || demanded[name] {
			charts[v1alpha1.ComponentArtifactName(source, name)] = path
		}
	}
	return charts
}

// demanded returns the components of c that a Package of PackageSource
// source enables: those of its spec.variant ("default" when empty) that
// spec.components does not turn off. A Package being deleted still
// counts until it is gone.
func (r *Reconciler) demanded(ctx context.Context, source string, c *artifact.Catalog) (map[string]bool, error) {
	var list v1alpha1.PackageList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for i := range list.Items {
		p := &list.Items[i]
		if p.Spec.SourceRef.Name != source {
			continue
		}
		name := p.Spec.Variant
		if name == "" {
			name = "default"
		}
		v, ok := c.Variant(name)
		if !ok {
			continue
		}
		for _, comp := range v.Components {
			if p.Spec.Components[comp.Name].IsEnabled() {
				out[comp.Name] = true
			}
		}
	}
	return out, nil
}

// packageSource maps a Package to the PackageSource it names (on an
// update, controller-runtime maps the old and the new object, so a moved
// sourceRef reconciles both sources).
func packageSource(_ context.Context, obj client.Object) []reconcile.Request {
	if p, ok := obj.(*v1alpha1.Package); ok && p.Spec.SourceRef.Name != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: p.Spec.SourceRef.Name}}}
	}
	return nil
}
