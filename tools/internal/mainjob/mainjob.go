package mainjob

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"oras.land/oras-go/v2/registry/remote"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/contracts/conformance"
	"cozystack.io/contracts/crds"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/localcp"
	"cozystack.io/tools/internal/chartlib"
)

// Config is where the job runs.
type Config struct {
	// RepoRoot holds platform/, catalogs/services and
	// catalogs/virtualization: the catalog directories published.
	RepoRoot string
	// Kube is an admin configuration of the cluster.
	Kube *rest.Config
	// Registry is host:port of the OCI registry catalogs are pushed to,
	// over plain HTTP (a loopback registry).
	Registry string
	// Out receives the progress lines.
	Out io.Writer
	// Timeout bounds each wait; 0 means 5 minutes.
	Timeout time.Duration
	// StartProcess starts a long-running process beside the control plane
	// (a catalog's backup driver), which must outlive Run, and returns once
	// healthURL answers 200; an already running one is left as it is.
	StartProcess func(ctx context.Context, name, binary string, args []string, healthURL string) error
	// BinDir holds the backup drivers' binaries, named after their
	// components (cnpg-backup-driver, velero-backup-driver; `make api`).
	BinDir string
	// WorkDir receives the drivers' kubeconfigs (mode 0600).
	WorkDir string
}

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

// Tenant and applications the job creates as a tenant.
const (
	RootNamespace = "tenant-root"
	TenantName    = "demo"
	TenantNS      = "tenant-demo"
	PostgresName  = "db"
	VMName        = "vm"
)

var (
	tenantsGVR  = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "tenants"}
	postgresGVR = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "postgreses"}
	vmGVR       = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "vminstances"}

	// The upstream objects the application charts render: real API objects
	// of the operators' CRDs, which no operator reconciles here.
	cnpgClusterGVR = schema.GroupVersionResource{Group: "postgresql.cnpg.io", Version: "v1", Resource: "clusters"}
	kubevirtVMGVR  = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	fieldManager   = client.FieldOwner("cozystack-main-job")
)

// Run runs the job. It is idempotent: objects are applied server-side, and
// a second run finds everything in place.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	j := &job{cfg: cfg, tags: map[string]string{}}
	scheme := localcp.Scheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	if err := backupsv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	var err error
	if j.c, err = client.New(cfg.Kube, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if j.dyn, err = dynamic.NewForConfig(cfg.Kube); err != nil {
		return err
	}
	for _, step := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"install the cozystack.io CRDs", j.installCRDs},
		{"publish the catalogs", j.publish},
		{"install the catalogs", j.install},
		{"set the cluster values and the root tenant", j.clusterValues},
		{"wait for the catalogs", j.waitCatalogs},
		{"wait for the application kinds", j.waitKinds},
		{"create a tenant", j.createTenant},
		{"create a Postgres as the tenant", j.createPostgres},
		{"create a VMInstance as the tenant", j.createVM},
		{"start the catalogs' backup drivers as their ServiceAccounts", j.startDrivers},
		{"configure the BackupClasses the catalogs ship", j.configureBackups},
		{"back up and restore as the tenant", j.backupsAndRestores},
		{"check the objects the charts created", j.checkObjects},
	} {
		start := time.Now()
		j.printf("%s", step.name)
		if err := step.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		j.printf("  done in %s", time.Since(start).Round(time.Millisecond))
	}
	j.summary()
	return nil
}

type job struct {
	cfg     Config
	c       client.Client
	dyn     dynamic.Interface
	tags    map[string]string // catalog name -> the tag publish pushed
	rows    []row             // the summary, one row per application
	backups []backupRow       // the summary's backups and restores
}

// row is one application in the summary table.
type row struct {
	kind, name, ready, version string
	installer                  string // the identity helm-controller installed it as
	objects                    []string
}

func (j *job) printf(format string, args ...any) {
	fmt.Fprintf(j.cfg.Out, "main job: "+format+"\n", args...)
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

func (j *job) createTenant(ctx context.Context) error {
	if err := j.createApp(ctx, tenantsGVR, "Tenant", RootNamespace, TenantName, map[string]any{}); err != nil {
		return err
	}
	if err := j.waitApp(ctx, tenantsGVR, RootNamespace, TenantName); err != nil {
		return err
	}
	// The tenant's namespace carries its values once cozystack-controller
	// has projected them.
	return j.poll(ctx, func() (bool, error) {
		cm := &corev1.ConfigMap{}
		err := j.c.Get(ctx, client.ObjectKey{Namespace: TenantNS, Name: v1alpha1.ValuesName}, cm)
		return err == nil, nil
	})
}

func (j *job) createPostgres(ctx context.Context) error {
	if err := j.createApp(ctx, postgresGVR, "Postgres", TenantNS, PostgresName, map[string]any{"replicas": int64(1)}); err != nil {
		return err
	}
	return j.waitApp(ctx, postgresGVR, TenantNS, PostgresName)
}

func (j *job) createVM(ctx context.Context) error {
	if err := j.createApp(ctx, vmGVR, "VMInstance", TenantNS, VMName, map[string]any{}); err != nil {
		return err
	}
	return j.waitApp(ctx, vmGVR, TenantNS, VMName)
}

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

// summary prints the applications the job created as a table.
func (j *job) summary() {
	w := tabwriter.NewWriter(j.cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAMESPACE\tNAME\tREADY\tCHART VERSION\tINSTALLED AS\tOBJECTS")
	for _, r := range j.rows {
		objs := strings.Join(r.objects, ",")
		if objs == "" {
			objs = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.kind, r.namespace(), r.name, r.ready, r.version, r.installer, objs)
	}
	_ = w.Flush()
	if len(j.backups) == 0 {
		return
	}
	fmt.Fprintln(j.cfg.Out)
	w = tabwriter.NewWriter(j.cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAMESPACE\tNAME\tAPPLICATION\tDRIVER\tSTATUS\tBACKEND OBJECT")
	for _, b := range j.backups {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.kind, TenantNS, b.name, b.application, b.driver, b.phase, b.backend)
	}
	_ = w.Flush()
}

func (r row) namespace() string {
	if r.kind == "Tenant" {
		return RootNamespace
	}
	return TenantNS
}

func (j *job) createApp(ctx context.Context, gvr schema.GroupVersionResource, kind, ns, name string, spec map[string]any) error {
	var err error
	// The kind is served as soon as cozystack-api has read its AD.
	pollErr := j.poll(ctx, func() (bool, error) {
		_, err = j.dyn.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.cozystack.io/v1alpha1", "kind": kind,
			"metadata": map[string]any{"name": name}, "spec": spec,
		}}, metav1.CreateOptions{FieldManager: string(fieldManager)})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err == nil, nil
	})
	if pollErr != nil {
		return fmt.Errorf("create %s %s/%s: %v", kind, ns, name, err)
	}
	j.printf("  %s %s/%s created", kind, ns, name)
	return nil
}

// waitApp waits for the application's Ready condition.
func (j *job) waitApp(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) error {
	last, kind, version := "not found", "", ""
	err := j.poll(ctx, func() (bool, error) {
		u, err := j.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		kind = u.GetKind()
		version, _, _ = unstructured.NestedString(u.Object, "status", "version")
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Ready" {
				last = fmt.Sprintf("Ready=%v %v: %v", m["status"], m["reason"], m["message"])
				return m["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("%s %s/%s never Ready (last: %s)", gvr.Resource, ns, name, last)
	}
	j.printf("  %s %s/%s: %s", gvr.Resource, ns, name, last)
	j.rows = append(j.rows, row{kind: kind, name: name, ready: "True", version: version})
	return nil
}

func (j *job) poll(ctx context.Context, f func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	defer cancel()
	for {
		ok, err := f()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Summary is what the job leaves for a person to look at.
func Summary() string {
	return strings.Join([]string{
		"kubectl get packagesources,packages",
		"kubectl get tenants -n " + RootNamespace,
		"kubectl get postgreses,vminstances -n " + TenantNS,
		"kubectl get clusters.postgresql.cnpg.io,virtualmachines.kubevirt.io -n " + TenantNS,
		"kubectl get plans,backupjobs,backups,restorejobs -n " + TenantNS,
		"kubectl get backupclasses,backupdrivers",
		"kubectl get helmreleases -A",
	}, "\n")
}

func ptr[T any](v T) *T { return &v }
