package binder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/controller/backup/binder"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/install"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/testenv"
)

// No driver runs in these tests: they write what a driver would with an
// admin client, its BackupDriver registration and the Lease it renews
// (sdk/backup/driver does both), and what cozystack-api would, the
// application's HelmRelease with its K1 labels.

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

const (
	// driverNS holds the drivers' Leases.
	driverNS = "cozy-backup-drivers"
	appGroup = "apps.cozystack.io"
)

var (
	once    sync.Once
	onceErr error
	// c is an admin client knowing every kind used here.
	c client.Client
)

// need skips under -short, installs the CRDs once and makes the client.
func need(t *testing.T) {
	t.Helper()
	testenv.Need(t, env)
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if onceErr = install.CRDs(ctx, env.Config, driverNS); onceErr != nil {
			return
		}
		c, onceErr = client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()})
	})
	if onceErr != nil {
		t.Fatal(onceErr)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startBinder runs the binder in a manager of its own until stop or the
// end of the test.
func startBinder(t *testing.T, o binder.Options) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 controllermanager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := binder.Setup(mgr, o); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop within 30s")
		}
	})
	t.Cleanup(stop)
	return stop
}

// fakeClock starts at the real time, so the API server's timestamps
// (creationTimestamp) and the clock agree until a test steps it.
func fakeClock() *clocktesting.FakeClock { return clocktesting.NewFakeClock(time.Now()) }

func namespace(t *testing.T, name string) string {
	t.Helper()
	err := c.Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
}

// register writes what a driver's SDK writes when it starts: the Lease
// (renewed at renew, for leaseSeconds) and the BackupDriver serving kinds
// and speaking protocols. Both are deleted at the end of the test.
func register(t *testing.T, name string, kinds, protocols []string, renew time.Time, leaseSeconds int32) *backupsv1alpha1.BackupDriver {
	t.Helper()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: driverNS, Name: "backup-driver-" + name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(name + "-0"),
			LeaseDurationSeconds: ptr.To(leaseSeconds),
			AcquireTime:          &metav1.MicroTime{Time: renew},
			RenewTime:            &metav1.MicroTime{Time: renew},
		},
	}
	if err := c.Create(ctxT(t), lease); err != nil {
		t.Fatalf("create Lease: %v", err)
	}
	d := &backupsv1alpha1.BackupDriver{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: backupsv1alpha1.BackupDriverSpec{
			StrategyKinds: kinds, ProtocolVersions: protocols,
			Catalog: "test", Version: "0.0.1",
			Lease: backupsv1alpha1.LeaseRef{Namespace: driverNS, Name: lease.Name},
		},
	}
	if err := c.Create(ctxT(t), d); err != nil {
		t.Fatalf("create BackupDriver: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = c.Delete(ctx, d)
		_ = c.Delete(ctx, lease)
	})
	return d
}

// renew renews the Lease of driver name at now, the way its SDK would.
func renew(t *testing.T, name string, now time.Time) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctxT(t), client.ObjectKey{Namespace: driverNS, Name: "backup-driver-" + name}, lease); err != nil {
		t.Fatal(err)
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: now}
	if err := c.Update(ctxT(t), lease); err != nil {
		t.Fatal(err)
	}
}

// class creates a BackupClass with one strategy for appKind, deleted at
// the end of the test.
func class(t *testing.T, name, appKind, strategyKind string, change func(*backupsv1alpha1.BackupClass)) *backupsv1alpha1.BackupClass {
	t.Helper()
	bc := &backupsv1alpha1.BackupClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: backupsv1alpha1.BackupClassSpec{Strategies: []backupsv1alpha1.ClassStrategy{{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: appGroup, Kind: appKind},
			Strategy: backupsv1alpha1.Strategy{Kind: strategyKind,
				Parameters: &apiextensionsv1.JSON{Raw: []byte(`{"bucket":"b-` + strings.ToLower(name) + `"}`)}},
		}}},
	}
	if change != nil {
		change(bc)
	}
	if err := c.Create(ctxT(t), bc); err != nil {
		t.Fatalf("create BackupClass: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), bc) })
	return bc
}

// application creates the HelmRelease cozystack-api stores for the
// application {appGroup, appKind, name} in ns, with values.
func application(t *testing.T, ns, appKind, name, values string) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ToLower(appKind) + "-" + name, Labels: map[string]string{
			v1alpha1.LabelApplicationGroup: appGroup, v1alpha1.LabelApplicationKind: appKind, v1alpha1.LabelApplicationName: name,
		}},
		Spec: helmv2.HelmReleaseSpec{
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "x"},
			Interval: metav1.Duration{Duration: time.Hour},
			Values:   &apiextensionsv1.JSON{Raw: []byte(values)},
		},
	}
	if err := c.Create(ctxT(t), hr); err != nil {
		t.Fatalf("create HelmRelease: %v", err)
	}
	return hr
}

// backupJob creates a BackupJob of application {appGroup, appKind, app}
// with class className in ns.
func backupJob(t *testing.T, ns, name, appKind, app, className string) *backupsv1alpha1.BackupJob {
	t.Helper()
	j := &backupsv1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: backupsv1alpha1.BackupJobSpec{
			ApplicationRef: backupsv1alpha1.ApplicationRef{
				ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: appGroup, Kind: appKind}, Name: app,
			},
			BackupClassName: className,
		},
	}
	if err := c.Create(ctxT(t), j); err != nil {
		t.Fatalf("create BackupJob: %v", err)
	}
	return j
}

func getJob(t *testing.T, j *backupsv1alpha1.BackupJob) *backupsv1alpha1.BackupJob {
	t.Helper()
	got := &backupsv1alpha1.BackupJob{}
	if err := c.Get(ctxT(t), client.ObjectKeyFromObject(j), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// eventually polls cond until it returns nil, failing the test with its
// last error after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
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

// expect says what a job's DriverBound condition and phase must be.
type expect struct {
	status  metav1.ConditionStatus
	reason  string
	phase   backupsv1alpha1.JobPhase
	message []string
}

// waitFor polls until j's DriverBound condition has want's status and
// reason and its phase is want's, then checks the message and returns the
// job.
func waitFor(t *testing.T, j *backupsv1alpha1.BackupJob, want expect) *backupsv1alpha1.BackupJob {
	t.Helper()
	var got *backupsv1alpha1.BackupJob
	eventually(t, 60*time.Second, fmt.Sprintf("BackupJob %s DriverBound=%s %s, phase %s", j.Name, want.status, want.reason, want.phase), func() error {
		got = getJob(t, j)
		cond := apimeta.FindStatusCondition(got.Status.Conditions, backupsv1alpha1.ConditionDriverBound)
		if cond == nil || cond.Status != want.status || cond.Reason != want.reason || got.Status.Phase != want.phase {
			return fmt.Errorf("phase %q, DriverBound %s", got.Status.Phase, show(cond))
		}
		return nil
	})
	cond := apimeta.FindStatusCondition(got.Status.Conditions, backupsv1alpha1.ConditionDriverBound)
	for _, s := range want.message {
		if !strings.Contains(cond.Message, s) {
			t.Errorf("DriverBound message %q lacks %q", cond.Message, s)
		}
	}
	if cond.ObservedGeneration != got.Generation {
		t.Errorf("DriverBound observedGeneration %d, want %d", cond.ObservedGeneration, got.Generation)
	}
	return got
}

func show(c *metav1.Condition) string {
	if c == nil {
		return "absent"
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// statusManagers returns, per field manager of j's status subresource,
// whether it owns status.binding.
func statusManagers(j *backupsv1alpha1.BackupJob) map[string]bool {
	out := map[string]bool{}
	for _, e := range j.ManagedFields {
		if e.Subresource != "status" {
			continue
		}
		owns := e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), `"f:binding"`)
		out[e.Manager] = out[e.Manager] || owns
	}
	return out
}

func clientKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }
