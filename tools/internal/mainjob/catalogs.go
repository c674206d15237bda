package mainjob

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"oras.land/oras-go/v2/registry/remote"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/contracts/crds"
	"cozystack.io/sdk/localcp"
	"cozystack.io/tools/internal/chartlib"
)

// The catalogs the job publishes, by PackageSource name, with the
// directory under RepoRoot, whether a Package installs their system
// components, and the components it leaves out.
var catalogs = []struct {
	name, dir string
	install   bool
	disabled  []string
}{
	{"platform", "platform", false, nil},
	{"services", "catalogs/services", true, nil},
	// LINSTOR's CRDs come only from a mirror directory (no Go module ships
	// them, catalogs/virtualization/crds.yaml), which a fresh checkout
	// lacks, and its chart creates a LinstorCluster.
	{"virtualization", "catalogs/virtualization", true, []string{"piraeus-operator"}},
}

func (j *job) installCRDs(ctx context.Context) error {
	list, err := crds.All()
	if err != nil {
		return err
	}
	return localcp.ApplyCRDs(ctx, j.cfg.Kube, list...)
}

// ChartsRepository is where the main job publishes the platform's
// library charts on registry (host:port): cozy-lib (K5) is the Helm OCI
// chart oci://<ChartsRepository>/cozy-lib:<version>, and a catalog chart
// names oci://<ChartsRepository> as its cozy-lib dependency's repository
// (contracts/schemas/v1alpha1/k5-cozy-lib.md). With `cozystack-local up`'s
// fixed ports registry is 127.0.0.1:15000.
func ChartsRepository(registry string) string { return registry + "/cozystack/charts" }

// publish pushes cozy-lib, the platform's library chart (K5), as the Helm
// OCI chart ChartsRepository/cozy-lib:<version> that catalogs pin,
// and builds each catalog directory into an OCI artifact pushed to
// <registry>/cozystack/<name>:<version>.
func (j *job) publish(ctx context.Context) error {
	lib, err := chartlib.Package(filepath.Join(j.cfg.RepoRoot, "platform", "charts", "cozy-lib"))
	if err != nil {
		return fmt.Errorf("cozy-lib: %w", err)
	}
	libRef := ChartsRepository(j.cfg.Registry) + "/" + lib.Name
	libRepo, err := remote.NewRepository(libRef)
	if err != nil {
		return err
	}
	libRepo.PlainHTTP = true
	desc, err := chartlib.Push(ctx, lib, libRepo)
	if err != nil {
		return fmt.Errorf("cozy-lib: %w", err)
	}
	j.printf("  pushed %s:%s %s", libRef, lib.Version, desc.Digest)
	for _, cat := range catalogs {
		repo, err := remote.NewRepository(fmt.Sprintf("%s/cozystack/%s", j.cfg.Registry, cat.name))
		if err != nil {
			return err
		}
		repo.PlainHTTP = true
		res, err := build.Build(ctx, filepath.Join(j.cfg.RepoRoot, cat.dir), repo, build.Options{})
		if err != nil {
			return fmt.Errorf("catalog %s: %w", cat.name, err)
		}
		j.tags[cat.name] = res.Tag
		j.printf("  pushed %s/cozystack/%s:%s %s", j.cfg.Registry, cat.name, res.Tag, res.Manifest.Digest)
	}
	return nil
}

// install creates a PackageSource per catalog and a Package for those with
// system components (privileged operators, so allowPrivileged).
func (j *job) install(ctx context.Context) error {
	for _, cat := range catalogs {
		ps := &v1alpha1.PackageSource{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "PackageSource"},
			ObjectMeta: metav1.ObjectMeta{Name: cat.name},
			Spec: v1alpha1.PackageSourceSpec{OCI: &v1alpha1.OCISource{
				Repository: fmt.Sprintf("%s/cozystack/%s", j.cfg.Registry, cat.name), Tag: j.tags[cat.name], PlainHTTP: true,
			}},
		}
		if err := j.c.Patch(ctx, ps, client.Apply, fieldManager, client.ForceOwnership); err != nil {
			return fmt.Errorf("PackageSource %s: %w", cat.name, err)
		}
		if !cat.install {
			continue
		}
		p := &v1alpha1.Package{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Package"},
			ObjectMeta: metav1.ObjectMeta{Name: cat.name},
			Spec:       v1alpha1.PackageSpec{SourceRef: v1alpha1.PackageSourceReference{Name: cat.name}, AllowPrivileged: true},
		}
		for _, c := range cat.disabled {
			if p.Spec.Components == nil {
				p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{}
			}
			p.Spec.Components[c] = v1alpha1.PackageComponentSettings{Enabled: ptr(false)}
		}
		if cat.name == "services" {
			// The cluster operator points the shipped CNPG BackupClass at
			// an object store.
			raw, err := json.Marshal(serviceValues())
			if err != nil {
				return err
			}
			if p.Spec.Components == nil {
				p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{}
			}
			p.Spec.Components[backupDrivers[0].component] = v1alpha1.PackageComponentSettings{Values: &apiextensionsv1.JSON{Raw: raw}}
		}
		if err := j.c.Patch(ctx, p, client.Apply, fieldManager, client.ForceOwnership); err != nil {
			return fmt.Errorf("Package %s: %w", cat.name, err)
		}
	}
	return nil
}

// demoKinds are the application kinds the job creates, each installed by
// its catalog's PackageSource (the ApplicationDefinitions travel in the
// catalog artifact).
var demoKinds = []string{"Tenant", "Postgres", "VMInstance"}

// waitKinds waits until cozystack-operator has installed the
// ApplicationDefinitions of demoKinds from the catalogs and cozystack-api
// serves them (condition Served).
func (j *job) waitKinds(ctx context.Context) error {
	last := map[string]string{}
	for _, k := range demoKinds {
		last[k] = "no ApplicationDefinition of this kind yet (cozystack-operator installs it from its catalog)"
	}
	err := j.poll(ctx, func() (bool, error) {
		var list v1alpha1.ApplicationDefinitionList
		if err := j.c.List(ctx, &list); err != nil {
			return false, nil
		}
		for _, ad := range list.Items {
			if _, ok := last[ad.Spec.Application.Kind]; !ok {
				continue
			}
			c := apimeta.FindStatusCondition(ad.Status.Conditions, v1alpha1.ConditionServed)
			switch {
			case c == nil:
				last[ad.Spec.Application.Kind] = fmt.Sprintf("ApplicationDefinition %s has no %s condition yet (is cozystack-api running?)", ad.Name, v1alpha1.ConditionServed)
			case c.Status == metav1.ConditionTrue:
				delete(last, ad.Spec.Application.Kind)
			default:
				last[ad.Spec.Application.Kind] = fmt.Sprintf("ApplicationDefinition %s: %s=%s %s: %s", ad.Name, c.Type, c.Status, c.Reason, c.Message)
			}
		}
		return len(last) == 0, nil
	})
	if err != nil {
		var msgs []string
		for _, k := range demoKinds {
			if m, ok := last[k]; ok {
				msgs = append(msgs, k+": "+m)
			}
		}
		return fmt.Errorf("kinds not served: %s", strings.Join(msgs, "; "))
	}
	j.printf("  served: %s", strings.Join(demoKinds, ", "))
	return nil
}

// clusterValues sets the ClusterValues singleton and creates the root
// tenant's namespace: what a platform install configures once.
func (j *job) clusterValues(ctx context.Context) error {
	cv := &v1alpha1.ClusterValues{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ClusterValues"},
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterValuesName},
		Spec: v1alpha1.ClusterValuesSpec{
			RootHost: "example.org", APIServerEndpoint: j.cfg.Kube.Host,
		},
	}
	if err := j.c.Patch(ctx, cv, client.Apply, fieldManager, client.ForceOwnership); err != nil {
		return fmt.Errorf("ClusterValues: %w", err)
	}
	root := &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: RootNamespace, Labels: map[string]string{
			v1alpha1.LabelTenant: "root", v1alpha1.LabelHost: "example.org",
		}},
	}
	return j.c.Patch(ctx, root, client.Apply, fieldManager, client.ForceOwnership)
}

// waitCatalogs waits for every PackageSource and Package to be Ready.
func (j *job) waitCatalogs(ctx context.Context) error {
	for _, cat := range catalogs {
		if err := j.waitReady(ctx, "PackageSource", &v1alpha1.PackageSource{}, cat.name); err != nil {
			return err
		}
		if cat.install {
			if err := j.waitReady(ctx, "Package", &v1alpha1.Package{}, cat.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitReady waits for the Ready condition of the cluster-scoped object name.
func (j *job) waitReady(ctx context.Context, kind string, obj client.Object, name string) error {
	last := "not found"
	err := j.poll(ctx, func() (bool, error) {
		if err := j.c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			last = err.Error()
			return false, nil
		}
		var conds []metav1.Condition
		switch o := obj.(type) {
		case *v1alpha1.PackageSource:
			conds = o.Status.Conditions
		case *v1alpha1.Package:
			conds = o.Status.Conditions
		}
		c := apimeta.FindStatusCondition(conds, "Ready")
		if c == nil {
			last = "no Ready condition yet"
			return false, nil
		}
		last = fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		return c.Status == metav1.ConditionTrue && c.ObservedGeneration >= obj.GetGeneration(), nil
	})
	if err != nil {
		return fmt.Errorf("%s %s never Ready (last: %s)", kind, name, last)
	}
	j.printf("  %s %s: %s", kind, name, last)
	return nil
}
