package backupe2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/charttest"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
	"cozystack.io/tools/internal/podrun"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

const (
	// The tenant's application: Postgres "db" in appNS, backed up by the
	// BackupClass className.
	appNS     = "tenant-handoff"
	appKind   = "Postgres"
	appName   = "db"
	className = "handoff"

	// The services catalog's CNPG driver as the catalog installs it
	// (catalogs/services/catalog.yaml: component cnpg-backup-driver in
	// namespace cozy-cnpg-backup-driver; the chart's default driverName).
	driverNS      = "cozy-cnpg-backup-driver"
	driverRelease = "cnpg-backup-driver"
	driverName    = "cnpg"
	// catalogVersion is the services catalog's version at release N+1:
	// the handoff list's minVersion, and the version the driver binary
	// is built with (its registration's spec.version).
	catalogVersion = "0.2.0"
	credentials    = "s3-creds"
	destination    = "s3://backups/handoff"
	endpoint       = "https://s3.example.org"

	// jobDriver is the platform's built-in Job driver's BackupDriver name.
	jobDriver = "job"

	timeout = 60 * time.Second
)

// postgresSpec is the tenant's Postgres spec: the HelmRelease's values and
// what the postgres chart renders the Cluster from.
// (int64: unstructured objects hold JSON numbers as int64 or float64.)
var postgresSpec = map[string]any{"replicas": int64(1), "version": "v16", "size": "1Gi"}

// A platform upgrade that hands the strategy kind CNPG to the services
// catalog, end to end with the real binaries of both sides.
//
// Release N: the backup core and the Job driver (cozystack-controller, two
// processes) back Postgres up with strategy Job; job1 is bound to the Job
// driver and running. Release N+1: both processes restart (the Job driver
// as another replica), the core with a handoff list naming CNPG → catalog
// services 0.2.0, and the class now says CNPG. job2 waits with
// DriverNotInstalled naming the catalog and version. The catalog's
// cnpg-backup-driver binary starts as its chart's ServiceAccount, with
// only the chart's RBAC, and registers; job2 binds to it, the driver
// points the application's CNPG Cluster at the object store and creates a
// CNPG Backup. Meanwhile job1 finishes on the Job driver. CNPG completes
// the backup (played here), job2 succeeds with a Ready Backup. Neither job
// ever has two drivers' field managers on its status.
func TestHandoffToCatalogDriver(t *testing.T) {
	testenv.Need(t, env)
	began := time.Now()
	bins := buildBinaries(t)
	t.Logf("built the binaries in %s", time.Since(began).Round(time.Millisecond))
	c := newClient(t, env.Config)
	ctx := testContext(t)
	root := repoRoot(t)

	// What the cluster holds before release N's backups: the
	// backups.cozystack.io CRDs, CNPG's CRDs (the services catalog's
	// cnpg-operator chart ships them), the driver's namespace with the
	// object store's credentials, and the tenant's Postgres: its
	// HelmRelease as cozystack-api stores it and the CNPG Cluster its
	// chart renders (no Helm runs here).
	if err := crds.Apply(ctx, env.Config); err != nil {
		t.Fatal(err)
	}
	cnpgCRDs := filepath.Join(root, "catalogs", "services", "charts", "cnpg-operator", "crds")
	if err := localcp.ApplyCRDFiles(ctx, env.Config,
		filepath.Join(cnpgCRDs, "postgresql.cnpg.io_backups.yaml"),
		filepath.Join(cnpgCRDs, "postgresql.cnpg.io_clusters.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}},
		// As the operator creates a component's namespace: annotated with
		// its Package, which the platform reads to find a driver's catalog
		// (contract k7, "Registration").
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: driverNS, Annotations: map[string]string{"cozystack.io/package": "services"}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: driverNS, Name: credentials},
			Data: map[string][]byte{"ACCESS_KEY_ID": []byte("AKIA"), "ACCESS_SECRET_KEY": []byte("secret")}},
		helmRelease(t),
		postgresCluster(t, root),
	} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}

	// Release N.
	coreN := controller(t, bins.controller, "core-n", "--controllers=backup-core", "--install-crds")
	jobDriverN := controller(t, bins.controller, "job-driver-n", jobDriverArgs("job-driver-0")...)
	createJobClass(t, c)
	job1 := createJob(t, c, "job1")
	eventually(t, "job1 running on the Job driver", func() error {
		j := getJob(t, c, job1)
		if j.Status.Phase != backupsv1alpha1.PhaseRunning || boundTo(j) != jobDriver {
			return fmt.Errorf("phase %q, bound to %q", j.Status.Phase, boundTo(j))
		}
		if n := len(batchJobs(t, c, j.UID)); n != 1 {
			return fmt.Errorf("%d batch Jobs", n)
		}
		return nil
	})
	t.Logf("release N: job1 running on the Job driver (%s)", time.Since(began).Round(time.Millisecond))

	// The upgrade to N+1: cozystack-controller's pods are replaced (no
	// clean shutdown); the new core ships the handoff list; the class is
	// the one N+1 ships, strategy CNPG.
	coreN.kill()
	jobDriverN.kill()
	list := filepath.Join(t.TempDir(), "handoff.yaml")
	entry := fmt.Sprintf("handoff:\n  - {strategyKind: CNPG, catalog: services, minVersion: %s}\n", catalogVersion)
	if err := os.WriteFile(list, []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	controller(t, bins.controller, "core-n+1", "--controllers=backup-core", "--backup-handoff-file="+list)
	controller(t, bins.controller, "job-driver-n+1", jobDriverArgs("job-driver-1")...)
	switchClassToCNPG(t, c)

	// The window: the kind is handed over, the catalog's driver is not
	// there yet.
	job2 := createJob(t, c, "job2")
	eventually(t, "job2 DriverNotInstalled naming services "+catalogVersion, func() error {
		j := getJob(t, c, job2)
		cond := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionDriverBound)
		if cond == nil || cond.Reason != backupsv1alpha1.ReasonDriverNotInstalled || j.Status.Phase != backupsv1alpha1.PhasePending || j.Status.Binding != nil {
			return fmt.Errorf("phase %q, binding %+v, DriverBound %+v", j.Status.Phase, j.Status.Binding, cond)
		}
		if !strings.Contains(cond.Message, "services") || !strings.Contains(cond.Message, catalogVersion) {
			return fmt.Errorf("message %q names no catalog and version", cond.Message)
		}
		return nil
	})
	if j := getJob(t, c, job1); boundTo(j) != jobDriver || j.Status.Phase != backupsv1alpha1.PhaseRunning {
		t.Fatalf("job1 after the upgrade: phase %q, bound to %q; want Running on %s", j.Status.Phase, boundTo(j), jobDriver)
	}
	t.Logf("release N+1: job2 waits for the catalog's driver (%s)", time.Since(began).Round(time.Millisecond))

	// The services catalog's driver is installed: its chart's RBAC, and
	// its binary as the chart's Deployment would run it, as the chart's
	// ServiceAccount.
	installServicesCatalog(t, c, root)
	cnpgDriver := runCatalogDriver(t, c, root, bins.driver)
	eventually(t, "the BackupDriver "+driverName+" registered", func() error {
		d := &backupsv1alpha1.BackupDriver{}
		if err := c.Get(ctx, types.NamespacedName{Name: driverName}, d); err != nil {
			return err
		}
		if d.Spec.Catalog != "services" || d.Spec.Version != catalogVersion || strings.Join(d.Spec.StrategyKinds, ",") != "CNPG" {
			return fmt.Errorf("registered as %+v", d.Spec)
		}
		// The platform found it is the services catalog's component.
		if !apimeta.IsStatusConditionTrue(d.Status.Conditions, backupsv1alpha1.ConditionAccepted) ||
			d.Status.Catalog != "services" || d.Status.Component != driverRelease {
			return fmt.Errorf("not accepted as services/%s: %+v", driverRelease, d.Status)
		}
		return nil
	})
	var cnpgBackup *unstructured.Unstructured
	eventually(t, "job2 bound to "+driverName+", running, with its CNPG Backup", func() error {
		j := getJob(t, c, job2)
		if boundTo(j) != driverName || j.Status.Phase != backupsv1alpha1.PhaseRunning {
			return fmt.Errorf("phase %q, bound to %q", j.Status.Phase, boundTo(j))
		}
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("postgresql.cnpg.io/v1")
		list.SetKind("BackupList")
		if err := c.List(ctx, list, client.InNamespace(appNS), client.MatchingLabels{backupsv1alpha1.LabelRun: string(j.UID)}); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d CNPG Backups of the run", len(list.Items))
		}
		cnpgBackup = &list.Items[0]
		return nil
	})
	if name, _, _ := unstructured.NestedString(cnpgBackup.Object, "spec", "cluster", "name"); name != "postgres-"+appName {
		t.Errorf("the CNPG Backup is of the Cluster %q, want postgres-%s", name, appName)
	}
	cluster := getCluster(t, c)
	// The tenant namespace's own path of the shared store (k7-backup-driver.md,
	// "Tenant isolation").
	if got, _, _ := unstructured.NestedString(cluster.Object, "spec", "backup", "barmanObjectStore", "destinationPath"); got != destination+"/"+appNS {
		t.Errorf("the Cluster's spec.backup.barmanObjectStore.destinationPath is %q, want %q", got, destination+"/"+appNS)
	}
	t.Logf("the catalog's driver runs job2 (%s)", time.Since(began).Round(time.Millisecond))

	// Meanwhile job1 finishes where it started: its batch Job completes
	// (written as the Job controller would: nothing runs pods here).
	completeBatchJob(t, c, getJob(t, c, job1).UID)
	eventually(t, "job1 Succeeded on the Job driver", func() error {
		j := getJob(t, c, job1)
		if j.Status.Phase != backupsv1alpha1.PhaseSucceeded || boundTo(j) != jobDriver {
			return fmt.Errorf("phase %q, bound to %q", j.Status.Phase, boundTo(j))
		}
		return nil
	})
	// Where it started: the Job driver's replica of N+1 took the run of
	// the killed one over (same driver, same batch Job).
	if cl := getJob(t, c, job1).Status.Claim; cl == nil || cl.HolderIdentity != "job-driver-1" || cl.Takeovers != 1 {
		t.Errorf("job1's claim %+v, want held by job-driver-1 after one takeover", cl)
	}

	// CNPG completes the backup: no CNPG operator runs here, so the test
	// writes the CNPG Backup's status as CNPG does when a barman backup
	// completed (phase completed, the locator from the Cluster's
	// spec.backup.barmanObjectStore, backup ID, WALs, LSNs and times: the
	// fields the driver reads into the Backup's driverData).
	completeCNPGBackup(t, c, cnpgBackup, cluster)
	var backupName string
	eventually(t, "job2 Succeeded with a Ready Backup", func() error {
		j := getJob(t, c, job2)
		if j.Status.Phase.Terminal() && j.Status.Phase != backupsv1alpha1.PhaseSucceeded {
			t.Fatalf("job2 ended %s: %+v", j.Status.Phase, j.Status.Conditions)
		}
		if j.Status.Phase != backupsv1alpha1.PhaseSucceeded || j.Status.BackupName == "" {
			return fmt.Errorf("phase %q, backup %q", j.Status.Phase, j.Status.BackupName)
		}
		b := &backupsv1alpha1.Backup{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: appNS, Name: j.Status.BackupName}, b); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(b.Status.Conditions, backupsv1alpha1.ConditionReady) {
			return fmt.Errorf("Backup %s not Ready: %+v", b.Name, b.Status.Conditions)
		}
		backupName = b.Name
		return nil
	})
	t.Logf("job2 Succeeded, Backup %s Ready (%s)", backupName, time.Since(began).Round(time.Millisecond))
	if cl := getJob(t, c, job2).Status.Claim; cl == nil || cl.HolderIdentity != driverRelease+"-0" {
		t.Errorf("job2's claim %+v, want held by %s-0", cl, driverRelease)
	}
	// Only the chart's RBAC, and it was enough: the API server refused
	// the driver nothing.
	if log, err := os.ReadFile(cnpgDriver.log); err != nil {
		t.Error(err)
	} else if strings.Contains(string(log), "forbidden") {
		t.Errorf("the API server refused the CNPG driver something (its log says forbidden): the chart's RBAC is not enough")
	}

	// None has two owners: each job's status has exactly one driver's
	// field manager, its binding's.
	for key, want := range map[types.NamespacedName]string{job1: jobDriver, job2: driverName} {
		j := getJob(t, c, key)
		if m := statusDriverManagers(j); len(m) != 1 || m[0] != backupsv1alpha1.DriverFieldManager(want) {
			t.Errorf("%s: driver field managers of its status %v, want only %s", key.Name, m, backupsv1alpha1.DriverFieldManager(want))
		}
	}
}

// binaries are the paths of the built commands.
type binaries struct{ controller, driver string }

// buildBinaries builds cozystack-controller (module platform) and
// cnpg-backup-driver (module catalogs/services, as catalog version
// catalogVersion) from the workspace at the repository root, in parallel.
// installServicesCatalog writes what the operator writes for the services
// catalog installed by the Package "services": its PackageSource, whose
// status holds catalogs/services/catalog.yaml, and the Package. The
// platform accepts the CNPG driver's registration from them (its
// component's namespace and backupStrategyKinds).
func installServicesCatalog(t *testing.T, c client.Client, root string) {
	t.Helper()
	ctx := testContext(t)
	cat, err := artifact.LoadCatalog(filepath.Join(root, "catalogs", "services"))
	if err != nil {
		t.Fatal(err)
	}
	info := cat.CatalogInfo
	info.Version = catalogVersion
	ps := &cozyv1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: "services"},
		Spec: cozyv1alpha1.PackageSourceSpec{Layout: &cozyv1alpha1.LayoutSource{Path: "/services", Tag: catalogVersion}}}
	eventually(t, "the PackageSource services created", func() error { return c.Create(ctx, ps) })
	ps.Status = cozyv1alpha1.PackageSourceStatus{Catalog: &info, Variants: cat.Variants}
	if err := c.Status().Update(ctx, ps); err != nil {
		t.Fatal(err)
	}
	p := &cozyv1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: "services"},
		Spec: cozyv1alpha1.PackageSpec{SourceRef: cozyv1alpha1.PackageSourceReference{Name: "services"}, AllowPrivileged: true}}
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
}

func buildBinaries(t *testing.T) binaries {
	t.Helper()
	root, dir := repoRoot(t), t.TempDir()
	b := binaries{controller: filepath.Join(dir, "cozystack-controller"), driver: filepath.Join(dir, "cnpg-backup-driver")}
	builds := [][]string{
		{"build", "-o", b.controller, "cozystack.io/platform/cmd/cozystack-controller"},
		{"build", "-o", b.driver, "-ldflags", "-X main.version=" + catalogVersion, "cozystack.io/catalogs/services/cmd/cnpg-backup-driver"},
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, args := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("go", args...)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, ok := localcp.RepoRoot()
	if !ok {
		t.Fatal("the repository root (go.work beside sdk/localcp) is not above the working directory")
	}
	return root
}

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := backupsv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := cozyv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testContext is a context for the test's API calls, cancelled at its end.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond every 100ms until it returns nil, failing the test
// with its last error after timeout.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s: %v", what, timeout, last)
	}
}

// process is one process of a binary under test: its output goes to a log
// file, printed (its tail) when the test fails.
type process struct {
	name, log string
	cmd       *exec.Cmd
}

// run starts bin with args and stops it at cleanup (SIGTERM, then SIGKILL
// after 10s).
func run(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	log := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{name: name, log: log, cmd: cmd}
	t.Cleanup(func() {
		p.stop()
		f.Close()
		if t.Failed() {
			data, _ := os.ReadFile(log)
			if len(data) > 6144 {
				data = data[len(data)-6144:]
			}
			t.Logf("%s log (last 6 KiB):\n%s", name, data)
		}
	})
	return p
}

// kill sends SIGKILL (no clean shutdown, as when a node or pod dies) and
// reaps the process.
func (p *process) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}

// stop sends SIGTERM, then SIGKILL after 10s.
func (p *process) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

// controller runs cozystack-controller with args as the admin (leader
// election off, no metrics or health endpoints).
func controller(t *testing.T, bin, name string, args ...string) *process {
	t.Helper()
	return run(t, name, bin, append([]string{"--kubeconfig", env.Kubeconfig, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}, args...)...)
}

// jobDriverArgs are the flags of the Job driver's replica identity: a
// short claim, so a replica of the next release takes a claim over fast.
func jobDriverArgs(identity string) []string {
	return []string{"--controllers=backup-job-driver", "--backup-driver-identity=" + identity,
		"--backup-claim-duration=3s", "--backup-driver-lease-duration=10s"}
}

// helmRelease is the HelmRelease cozystack-api stores for the application
// (contract K1: named <kind in lower case>-<name>, labelled with its kind,
// group and name). Nothing reconciles it here.
func helmRelease(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	hr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"namespace": appNS, "name": "postgres-" + appName, "labels": map[string]any{
			cozyv1alpha1.LabelApplicationGroup: "apps.cozystack.io",
			cozyv1alpha1.LabelApplicationKind:  appKind,
			cozyv1alpha1.LabelApplicationName:  appName,
		}},
		"spec": map[string]any{
			"chartRef": map[string]any{"kind": "ExternalArtifact", "name": "postgres"},
			"interval": "1h",
			"values":   postgresSpec,
		},
	}}
	return hr
}

// postgresCluster is the CNPG Cluster the services catalog's postgres
// chart renders for the application, named after its release
// ("postgres-db"), as Helm would have installed it.
func postgresCluster(t *testing.T, root string) *unstructured.Unstructured {
	t.Helper()
	ch, err := charttest.Load(filepath.Join(root, "catalogs", "services", "charts", "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := charttest.Render(ch, "postgres-"+appName, charttest.WithK2(postgresSpec))
	if err != nil {
		t.Fatalf("render the postgres chart: %v", err)
	}
	objs, err := charttest.Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetAPIVersion() == "postgresql.cnpg.io/v1" && o.GetKind() == "Cluster" {
			o.SetNamespace(appNS)
			return o
		}
	}
	t.Fatal("the postgres chart renders no CNPG Cluster")
	return nil
}

func getCluster(t *testing.T, c client.Client) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("postgresql.cnpg.io/v1")
	u.SetKind("Cluster")
	if err := c.Get(testContext(t), types.NamespacedName{Namespace: appNS, Name: "postgres-" + appName}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// jobTemplate is a batch/v1 Job template for the Job driver that Pod
// Security "restricted" admits.
func jobTemplate(args ...string) map[string]any {
	return map[string]any{
		"spec": map[string]any{"backoffLimit": 0, "template": map[string]any{"spec": map[string]any{
			"restartPolicy":   "Never",
			"securityContext": map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
			"containers": []any{map[string]any{"name": "backup", "image": "registry.example/pg-backup:1", "args": args,
				"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}}},
		}}},
	}
}

// strategy is the strategy kind with params, decoded as the API server
// stores it.
func strategy(t *testing.T, kind string, params map[string]any) backupsv1alpha1.Strategy {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"kind": kind, "parameters": params})
	if err != nil {
		t.Fatal(err)
	}
	var s backupsv1alpha1.Strategy
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// createJobClass creates release N's BackupClass: Postgres backed up by
// the Job driver.
func createJobClass(t *testing.T, c client.Client) {
	t.Helper()
	job := strategy(t, "Job", map[string]any{
		"backup":         jobTemplate("backup", "{{ .Application.Namespace }}/{{ .Application.Name }}"),
		"restore":        jobTemplate("restore", "{{ .Backup.DriverData.path }}"),
		"driverData":     map[string]any{"path": "s3://backups/{{ .Application.Namespace }}/{{ .Job.UID }}"},
		"restoreOverlay": map[string]any{"bootstrap": map[string]any{"enabled": true, "oldName": "{{ .Application.Name }}"}},
	})
	bc := &backupsv1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: className}, Spec: backupsv1alpha1.BackupClassSpec{
		Strategies: []backupsv1alpha1.ClassStrategy{{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind},
			Strategy:        job,
		}},
	}}
	if err := c.Create(testContext(t), bc); err != nil {
		t.Fatal(err)
	}
}

// switchClassToCNPG changes the class as release N+1 ships it: strategy
// CNPG, with the CNPG driver's parameters (catalogs/services/backup/
// cnpgdriver: barman object store, credentials in the driver's
// namespace).
func switchClassToCNPG(t *testing.T, c client.Client) {
	t.Helper()
	cnpg := strategy(t, "CNPG", map[string]any{"method": "barmanObjectStore", "barmanObjectStore": map[string]any{
		"destinationPath": destination, "endpointURL": endpoint, "credentialsSecret": credentials}})
	ctx := testContext(t)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		bc := &backupsv1alpha1.BackupClass{}
		if err := c.Get(ctx, types.NamespacedName{Name: className}, bc); err != nil {
			return err
		}
		bc.Spec.Strategies[0].Strategy = cnpg
		return c.Update(ctx, bc)
	}); err != nil {
		t.Fatal(err)
	}
}

func createJob(t *testing.T, c client.Client, name string) types.NamespacedName {
	t.Helper()
	j := &backupsv1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name}, Spec: backupsv1alpha1.BackupJobSpec{
		ApplicationRef: backupsv1alpha1.ApplicationRef{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind}, Name: appName},
		BackupClassName: className,
	}}
	if err := c.Create(testContext(t), j); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(j)
}

func getJob(t *testing.T, c client.Client, key types.NamespacedName) *backupsv1alpha1.BackupJob {
	t.Helper()
	j := &backupsv1alpha1.BackupJob{}
	if err := c.Get(testContext(t), key, j); err != nil {
		t.Fatal(err)
	}
	return j
}

// boundTo is the driver j is bound to, "" if none.
func boundTo(j *backupsv1alpha1.BackupJob) string {
	if j.Status.Binding == nil {
		return ""
	}
	return j.Status.Binding.DriverRef.Name
}

// batchJobs lists the batch/v1 Jobs the Job driver created for run.
func batchJobs(t *testing.T, c client.Client, run types.UID) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := c.List(testContext(t), &list, client.InNamespace(appNS), client.MatchingLabels{backupsv1alpha1.LabelRun: string(run)}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// completeBatchJob writes the status of run's one batch Job as the Job
// controller of kube-controller-manager would on success (it does not run
// here: nothing runs pods).
func completeBatchJob(t *testing.T, c client.Client, run types.UID) {
	t.Helper()
	jobs := batchJobs(t, c, run)
	if len(jobs) != 1 {
		t.Fatalf("%d batch Jobs for run %s, want 1", len(jobs), run)
	}
	j := &jobs[0]
	now := metav1.Now()
	j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &now, &now, 1
	j.Status.Conditions = append(j.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
		batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now})
	if err := c.Status().Update(testContext(t), j); err != nil {
		t.Fatal(err)
	}
}

// completeCNPGBackup writes bk's status as CNPG does when a barman backup
// of cluster completed.
func completeCNPGBackup(t *testing.T, c client.Client, bk, cluster *unstructured.Unstructured) {
	t.Helper()
	ctx := testContext(t)
	store, _, _ := unstructured.NestedMap(cluster.Object, "spec", "backup", "barmanObjectStore")
	now := time.Now().UTC().Format(time.RFC3339)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(bk), bk); err != nil {
			return err
		}
		method, _, _ := unstructured.NestedString(bk.Object, "spec", "method")
		if method == "" {
			method = "barmanObjectStore"
		}
		status := map[string]any{
			"phase":      "completed",
			"method":     method,
			"serverName": cluster.GetName(),
			"backupId":   "20261202T073000",
			"backupName": "backup-20261202T073000",
			"beginWal":   "000000010000000000000002", "endWal": "000000010000000000000003",
			"beginLSN": "0/2000028", "endLSN": "0/3000060",
			"startedAt": now, "stoppedAt": now,
		}
		for _, k := range []string{"destinationPath", "endpointURL"} {
			if v, ok := store[k].(string); ok {
				status[k] = v
			}
		}
		bk.Object["status"] = status
		return c.Status().Update(ctx, bk)
	}); err != nil {
		t.Fatalf("complete the CNPG Backup %s: %v", bk.GetName(), err)
	}
}

// statusDriverManagers returns the backup-driver-* field managers of obj's
// status subresource.
func statusDriverManagers(obj metav1.Object) []string {
	var out []string
	for _, m := range obj.GetManagedFields() {
		if m.Subresource == "status" && strings.HasPrefix(m.Manager, "backup-driver-") && !slices.Contains(out, m.Manager) {
			out = append(out, m.Manager)
		}
	}
	return out
}

// runCatalogDriver installs the CNPG driver as the services catalog does:
// it renders the chart catalogs/services/charts/cnpg-backup-driver as
// release driverRelease in driverNS (short lease and claim durations),
// applies its ServiceAccount, ClusterRole, Role and bindings, and runs the
// driver binary with the arguments of the chart's Deployment (the pod's
// $(POD_NAMESPACE) and $(POD_NAME) expanded as the kubelet does) and a
// kubeconfig that authenticates as that ServiceAccount: a bearer token
// from the TokenRequest API, as the kubelet mounts one in the pod. It
// returns the driver's process.
func runCatalogDriver(t *testing.T, c client.Client, root, bin string) *process {
	t.Helper()
	ctx := testContext(t)
	ch, err := charttest.Load(filepath.Join(root, "catalogs", "services", "charts", "cnpg-backup-driver"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := renderIn(ch, driverRelease, driverNS, map[string]any{"leaseDuration": "5s", "claimDuration": "5s"})
	if err != nil {
		t.Fatalf("render the cnpg-backup-driver chart: %v", err)
	}
	var deployment *appsv1.Deployment
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			// Nothing runs pods here: the test runs its container.
			deployment = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, deployment); err != nil {
				t.Fatal(err)
			}
			continue
		case "ServiceAccount", "Role", "RoleBinding":
			o.SetNamespace(driverNS)
		case "ClusterRole", "ClusterRoleBinding":
		default:
			// What else the chart installs (e.g. a BackupClass of its
			// own) is not the identity; this test's class is its own.
			t.Logf("not applying the chart's %s %s", o.GetKind(), o.GetName())
			continue
		}
		if err := c.Create(ctx, o, client.FieldValidation(metav1.FieldValidationStrict)); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	if deployment == nil || len(deployment.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("the chart renders no Deployment with one container")
	}
	pod := deployment.Spec.Template.Spec
	kubeconfig := filepath.Join(t.TempDir(), "driver.kubeconfig")
	if err := podrun.Kubeconfig(ctx, env.Config, driverNS, pod.ServiceAccountName, time.Hour, kubeconfig); err != nil {
		t.Fatal(err)
	}
	args, _, err := podrun.Args(pod.Containers[0], driverNS, deployment.Name+"-0")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cnpg-backup-driver %s", strings.Join(args, " "))
	return run(t, "cnpg-backup-driver", bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// renderIn renders ch as release name installed in namespace with values,
// as `helm install -n namespace` does, and decodes its objects.
func renderIn(ch *chart.Chart, name, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	if err := chartutil.ProcessDependenciesWithMerge(ch, values); err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: name, Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	return charttest.Objects(out)
}
