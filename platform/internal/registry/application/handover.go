package application

import (
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// AnnotationHandover is the annotation a cluster administrator sets on an
// application's HelmRelease to let the application move to the chart of
// the catalog that now serves its kind; its value is the name of the
// ApplicationDefinition serving the kind. The next write of the
// application moves it and removes the annotation (contract K1, "Who
// serves a kind"). Tenants cannot set it: the key is reserved (ReservedKey)
// and tenants have no rights on HelmReleases.
const AnnotationHandover = "apps.cozystack.io/handover-to"

// checkHandover refuses to rewrite current, the HelmRelease of an
// application of kind k, into desired when that moves the application to
// another catalog's chart: the installer identity (spec.serviceAccountName,
// one per catalog: v1alpha1.CatalogInstallerServiceAccount) changes. That
// happens only when the catalog that installed the application no longer
// serves its kind and another one does; an application then keeps its
// chart, readable and deletable, until a cluster administrator hands it
// over with AnnotationHandover (K1 "Who serves a kind", contracts/schemas/v1alpha1/k1-application.md). A HelmRelease written
// before installers existed (no serviceAccountName) gets one on its next
// write. The error is a Forbidden naming both identities and the command
// that hands the application over.
func checkHandover(gr schema.GroupResource, k *appkinds.Kind, current, desired *helmv2.HelmRelease) error {
	from, to := current.Spec.ServiceAccountName, desired.Spec.ServiceAccountName
	if from == "" || from == to || current.Annotations[AnnotationHandover] == k.Definition {
		return nil
	}
	return apierrors.NewForbidden(gr, current.Labels[v1alpha1.LabelApplicationName], fmt.Errorf(
		"this %s was installed by another catalog's chart (as %s), and kind %s is now served by ApplicationDefinition %s, whose chart installs as %s: "+
			"an application never moves to another catalog's chart by itself; it can be read and deleted meanwhile. "+
			"A cluster administrator hands it over with: kubectl annotate helmrelease -n %s %s %s=%s",
		k.Kind, from, k.Kind, k.Definition, to, current.Namespace, current.Name, AnnotationHandover, k.Definition))
}
