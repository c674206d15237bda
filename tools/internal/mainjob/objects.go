package mainjob

import (
	"context"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/conformance"
)

// checkObjects checks that the application charts rendered their objects
// (the tenant's Namespace; the upstream operators' CNPG Cluster and KubeVirt
// VirtualMachine) and notes them in the summary.
func (j *job) checkObjects(ctx context.Context) error {
	for i := range j.rows {
		r := &j.rows[i]
		if err := j.checkInstaller(ctx, r); err != nil {
			return err
		}
		var gvr schema.GroupVersionResource
		switch r.kind {
		case "Tenant":
			if err := j.c.Get(ctx, client.ObjectKey{Name: TenantNS}, &corev1.Namespace{}); err != nil {
				return fmt.Errorf("Tenant %s: its namespace %s: %w", r.name, TenantNS, err)
			}
			r.objects = []string{"Namespace/" + TenantNS}
			continue
		case "Postgres":
			gvr = cnpgClusterGVR
		case "VMInstance":
			gvr = kubevirtVMGVR
		default:
			continue
		}
		list, err := j.dyn.Resource(gvr).Namespace(TenantNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("%s %s: list %s: %w", r.kind, r.name, gvr.GroupResource(), err)
		}
		for _, o := range list.Items {
			// Each application's objects are named after its release,
			// <prefix>-<name>: db's are not db-restored's.
			if strings.HasSuffix(o.GetName(), "-"+r.name) {
				r.objects = append(r.objects, fmt.Sprintf("%s/%s", o.GetKind(), o.GetName()))
			}
		}
		if len(r.objects) == 0 {
			return fmt.Errorf("%s %s/%s is Ready but no %s exists in %s", r.kind, TenantNS, r.name, gvr.GroupResource(), TenantNS)
		}
		j.printf("  %s %s: %s", r.kind, r.name, strings.Join(r.objects, ", "))
	}
	return nil
}

// kindCatalogs are the PackageSources serving the kinds the job creates
// (but the Tenant's).
var kindCatalogs = map[string]string{"Postgres": "services", "VMInstance": "virtualization"}

// checkInstaller checks that the HelmRelease of r installs as its
// tenant's installer ServiceAccount (contract K5, "Tenant roles"): the
// Tenant as the parent namespace's cozy-tenant-installer, every other
// application as its catalog's installer in its namespace,
// cozy-installer-<PackageSource>; helm-controller runs with
// --default-service-account, so none installs as helm-controller.
func (j *job) checkInstaller(ctx context.Context, r *row) error {
	var list helmv2.HelmReleaseList
	if err := j.c.List(ctx, &list, client.InNamespace(r.namespace()), client.MatchingLabels{
		conformance.LabelApplicationKind: r.kind, conformance.LabelApplicationName: r.name,
	}); err != nil {
		return err
	}
	if len(list.Items) != 1 {
		return fmt.Errorf("%s %s/%s: %d HelmReleases, want 1", r.kind, r.namespace(), r.name, len(list.Items))
	}
	want := v1alpha1.CatalogInstallerServiceAccount(kindCatalogs[r.kind])
	if r.kind == "Tenant" {
		want = v1alpha1.TenantInstallerServiceAccount
	}
	hr := list.Items[0]
	if hr.Spec.ServiceAccountName != want {
		return fmt.Errorf("%s %s/%s: HelmRelease %s installs as %q, want the tenant's installer %q",
			r.kind, r.namespace(), r.name, hr.Name, hr.Spec.ServiceAccountName, want)
	}
	r.installer = "system:serviceaccount:" + hr.Namespace + ":" + want
	return nil
}
