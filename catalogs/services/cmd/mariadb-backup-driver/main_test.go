package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/mariadbdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/backup/driver"
	"cozystack.io/sdk/charttest"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

const (
	chartDir  = "../../charts"
	chartName = "mariadb-backup-driver"
	namespace = "cozy-mariadb-backup-driver"
)

// Usage errors exit 2 before connecting; an unusable configuration exits 1.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--bogus"}, 2, "unknown flag"},
		{[]string{"extra"}, 2, "unexpected arguments"},
		{nil, 2, "--namespace is required"},
		{[]string{"--namespace", "x", "--name", "Not_A_Label"}, 2, "--name"},
		{[]string{"--namespace", "x", "--claim-duration", "2h"}, 2, "at most 1h"},
		{[]string{"--namespace", "x", "--kubeconfig", "/nonexistent/kubeconfig"}, 1, "kubeconfig"},
	} {
		var out bytes.Buffer
		if code := run(context.Background(), tc.args, &out); code != tc.code || !strings.Contains(out.String(), tc.says) {
			t.Errorf("%v: exit %d, output %q; want exit %d saying %q", tc.args, code, out.String(), tc.code, tc.says)
		}
	}
}

// render renders the driver's chart with its defaults as release
// chartName in namespace.
func render(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	ch, err := charttest.Load(filepath.Join(chartDir, chartName))
	if err != nil {
		t.Fatal(err)
	}
	out, err := charttest.Render(ch, chartName, charttest.WithK2(nil))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := charttest.Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// The chart passes what the catalog's charts_test.go asks of the operator
// charts (render with defaults, helm lint, a strict server-side dry-run of
// every object), its values schema rejects unknown keys, and its pod runs
// under Pod Security "restricted".
func TestChart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if env != nil {
		// The dry-run goes to charttest.Namespace.
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: charttest.Namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		// The chart's BackupClass needs the backups.cozystack.io CRDs.
		if err := crds.Apply(ctx, env.Config); err != nil {
			t.Fatal(err)
		}
		charttest.RunOperators(t, ctx, env.Config, chartDir, []string{chartName})
	} else {
		charttest.RunOperators(t, ctx, nil, chartDir, []string{chartName})
	}
	charttest.RunSchemaStrict(t, chartDir, []string{chartName})

	var dep *appsv1.Deployment
	for _, o := range render(t) {
		if o.GetKind() == "Deployment" {
			dep = &appsv1.Deployment{}
			b, _ := json.Marshal(o.Object)
			if err := json.Unmarshal(b, dep); err != nil {
				t.Fatal(err)
			}
		}
	}
	if dep == nil {
		t.Fatal("no Deployment")
	}
	pod := dep.Spec.Template.Spec
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot ||
		pod.SecurityContext.SeccompProfile == nil || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v is not restricted", pod.SecurityContext)
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
			len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("container %s securityContext %+v is not restricted", c.Name, sc)
		}
		if c.Image != "ghcr.io/cozystack/mariadb-backup-driver:0.1.0" {
			t.Errorf("image %q, want the values' image", c.Image)
		}
	}
	if pod.ServiceAccountName != chartName {
		t.Errorf("serviceAccountName %q", pod.ServiceAccountName)
	}
}

// The driver binary, running as the chart's ServiceAccount (so with the
// chart's RBAC only), is killed (SIGKILL) in the middle of a backup and
// started again as another replica: it takes the run over, adopts the
// k8s.mariadb.com Backup it created, and the job succeeds with exactly
// one backend Backup and one Backup. No operator runs: the test writes the
// k8s.mariadb.com Backup's status as the mariadb-operator does when its
// Job completes (Complete=True, JobComplete).
func TestKilledMidBackup(t *testing.T) {
	testenv.Need(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := crds.Apply(ctx, env.Config); err != nil {
		t.Fatal(err)
	}
	if err := localcp.ApplyCRDFiles(ctx, env.Config, filepath.Join(testenv.SharedDir(t), "crds", "upstream", "mariadb.yaml")); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: driver.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// The chart's ServiceAccount and RBAC, and the S3 credentials.
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-kill"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-creds", Namespace: namespace},
			StringData: map[string]string{mariadbdriver.AccessKeyIDKey: "AKIA", mariadbdriver.SecretAccessKeyKey: "s3cret"}},
	} {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, o := range render(t) {
		if o.GetKind() == "Deployment" {
			continue // nothing runs pods here: the test runs the binary
		}
		// charttest renders into its own namespace: bind the
		// ServiceAccount of the driver's.
		if subjects, ok := o.Object["subjects"].([]any); ok {
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = namespace
			}
		}
		if ns, err := c.IsObjectNamespaced(o); err != nil {
			t.Fatal(err)
		} else if ns {
			o.SetNamespace(namespace)
		}
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	kubeconfig := impersonating(t, "system:serviceaccount:"+namespace+":"+chartName)

	bin := filepath.Join(t.TempDir(), "mariadb-backup-driver")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	start := func(identity string) *exec.Cmd {
		cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--namespace", namespace, "--identity", identity,
			"--lease-duration", "4s", "--claim-duration", "4s")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}

	first := start("replica-a")
	job := &v1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Name: "killed", Namespace: "tenant-kill", Labels: map[string]string{v1alpha1.LabelDriver: mariadbdriver.DefaultName}},
		Spec: v1alpha1.BackupJobSpec{BackupClassName: "mariadb", ApplicationRef: v1alpha1.ApplicationRef{
			ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "MariaDB"}, Name: "db"}},
	}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	// Bind it as the core does.
	st := map[string]any{
		"phase": v1alpha1.PhasePending,
		"binding": v1alpha1.Binding{
			DriverRef: v1alpha1.DriverRef{Name: mariadbdriver.DefaultName, ProtocolVersion: v1alpha1.ProtocolVersion},
			Strategy: v1alpha1.Strategy{Kind: mariadbdriver.StrategyKind, Parameters: &apiextensionsv1.JSON{Raw: []byte(
				`{"s3":{"bucket":"backups","endpoint":"minio.example:9000","credentialsSecret":"s3-creds"}}`)}},
			BackupClassName: "mariadb", BoundTime: metav1.Now(),
		},
		"conditions": []metav1.Condition{{Type: v1alpha1.ConditionDriverBound, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonBound, Message: "bound to BackupDriver mariadb", LastTransitionTime: metav1.Now()}},
		"applicationSnapshot": &apiextensionsv1.JSON{Raw: []byte(`{"replicas":1}`)},
	}
	if err := apply.Status(ctx, c, job, st, v1alpha1.CoreFieldManager); err != nil {
		t.Fatal(err)
	}

	backends := func(ctx context.Context) []unstructured.Unstructured {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(mariadbdriver.GroupVersion.WithKind("BackupList"))
		if err := c.List(ctx, list, client.InNamespace(job.Namespace), client.MatchingLabels{v1alpha1.LabelRun: string(job.UID)}); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	poll := func(what string, cond func(ctx context.Context) bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
				return false, nil
			}
			if job.Status.Phase.Terminal() && job.Status.Phase != v1alpha1.PhaseSucceeded {
				t.Fatalf("job ended %s: %+v", job.Status.Phase, job.Status.Conditions)
			}
			return cond(ctx), nil
		}); err != nil {
			t.Fatalf("waiting for %s: %v (job %s, claim %+v)", what, err, job.Status.Phase, job.Status.Claim)
		}
	}
	poll("the run running with its k8s.mariadb.com Backup", func(ctx context.Context) bool {
		return job.Status.Phase == v1alpha1.PhaseRunning && len(backends(ctx)) == 1
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	killedAt := time.Now()

	second := start("replica-b")
	poll("the run taken over by replica-b", func(context.Context) bool {
		return job.Status.Claim != nil && job.Status.Claim.HolderIdentity == "replica-b"
	})
	t.Logf("replica-b took the run over %s after the kill (takeovers %d)", time.Since(killedAt).Round(time.Millisecond), job.Status.Claim.Takeovers)
	// The operator completes the backup.
	for _, b := range backends(ctx) {
		b.Object["status"] = map[string]any{"conditions": []any{map[string]any{
			"type": mariadbdriver.ConditionComplete, "status": "True", "reason": mariadbdriver.ReasonJobComplete,
			"message": "Success", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
		if err := c.Status().Update(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	poll("the job Succeeded", func(context.Context) bool { return job.Status.Phase == v1alpha1.PhaseSucceeded })

	if n := len(backends(ctx)); n != 1 {
		t.Errorf("%d k8s.mariadb.com Backups of the run, want 1", n)
	}
	var bl v1alpha1.BackupList
	if err := c.List(ctx, &bl, client.InNamespace(job.Namespace)); err != nil {
		t.Fatal(err)
	}
	if len(bl.Items) != 1 || bl.Items[0].Name != job.Status.BackupName {
		t.Errorf("%d Backups, want exactly %s", len(bl.Items), job.Status.BackupName)
	}

	// SIGTERM stops the driver with exit code 0.
	if err := second.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Errorf("driver exited %d after SIGTERM, want 0", ee.ExitCode())
		} else if err != nil {
			t.Error(err)
		}
	case <-time.After(30 * time.Second):
		t.Error("driver did not stop within 30s of SIGTERM")
	}
}

// impersonating writes a kubeconfig of the control plane's admin that
// impersonates user, and returns its path.
func impersonating(t *testing.T, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.Impersonate = user
	}
	file := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		t.Fatal(err)
	}
	return file
}
