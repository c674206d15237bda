package backup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/controllermanager"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/testenv"
)

var (
	env *testenv.Env
	c   client.Client

	buildOnce sync.Once
	binary    string
	buildErr  error
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

// need skips under -short and makes the client (the platform's scheme
// with batch/v1).
func need(t testing.TB) {
	t.Helper()
	testenv.Need(t, env)
	if c == nil {
		s := controllermanager.Scheme()
		if err := batchv1.AddToScheme(s); err != nil {
			t.Fatal(err)
		}
		var err error
		if c, err = client.New(env.Config, client.Options{Scheme: s}); err != nil {
			t.Fatal(err)
		}
	}
}

// controllerBinary builds cozystack-controller once per test binary.
func controllerBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cozystack-controller-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "cozystack-controller")
		if out, err := exec.Command("go", "build", "-o", binary, "cozystack.io/platform/cmd/cozystack-controller").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build cozystack-controller: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// process is one cozystack-controller process, as a cluster runs it: its
// own binary, its own flags, killed with SIGKILL (no clean shutdown).
type process struct {
	cmd *exec.Cmd
	log string
}

// start runs cozystack-controller with args (leader election off, no
// endpoints) and kills it at cleanup; its output goes to a log file
// printed when the test fails.
func start(t testing.TB, name string, args ...string) *process {
	t.Helper()
	bin := controllerBinary(t)
	log := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--kubeconfig", env.Kubeconfig, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, log: log}
	t.Cleanup(func() {
		p.kill()
		f.Close()
		if t.Failed() {
			data, _ := os.ReadFile(log)
			t.Logf("%s log (last 4 KiB):\n%s", name, tail(data, 4096))
		}
	})
	return p
}

// kill sends SIGKILL and reaps the process.
func (p *process) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

const appKind = "Postgres"

// application creates the HelmRelease cozystack-api stores for the
// Postgres application name in ns (K1 naming and labels), with values.
func application(t testing.TB, ns, name, values string) {
	t.Helper()
	if err := createApplication(backuptest.Context(t), ns, name, values); err != nil {
		t.Fatalf("create HelmRelease: %v", err)
	}
}

// createApplication is application for any goroutine; an existing one is
// fine.
func createApplication(ctx context.Context, ns, name, values string) error {
	return client.IgnoreAlreadyExists(c.Create(ctx, backuptest.HelmRelease(ns, appKind, name, values)))
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

// jobClass creates the BackupClass name: Postgres backed up by the Job
// driver, changed by each of change.
func jobClass(t testing.TB, name string, change ...func(*backupsv1alpha1.BackupClass)) {
	t.Helper()
	params, err := json.Marshal(map[string]any{
		"backup":     jobTemplate("backup", "{{ .Application.Namespace }}/{{ .Application.Name }}"),
		"restore":    jobTemplate("restore", "{{ .Backup.DriverData.path }}"),
		"driverData": map[string]any{"path": "s3://backups/{{ .Application.Namespace }}/{{ .Job.UID }}"},
		// A new application from this backup bootstraps from it.
		"restoreOverlay": map[string]any{"bootstrap": map[string]any{"enabled": true, "oldName": "{{ .Application.Name }}"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	bc := &backupsv1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: backupsv1alpha1.BackupClassSpec{
		Strategies: []backupsv1alpha1.ClassStrategy{{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind},
			Strategy:        backupsv1alpha1.Strategy{Kind: "Job", Parameters: &apiextensionsv1.JSON{Raw: params}},
		}},
	}}
	for _, f := range change {
		f(bc)
	}
	// The core process installs the CRDs: retry until they are served.
	backuptest.Eventually(t, 60*time.Second, "BackupClass created", func() error {
		err := c.Create(backuptest.Context(t), bc.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

func getJob(t testing.TB, key types.NamespacedName) *backupsv1alpha1.BackupJob {
	t.Helper()
	j := &backupsv1alpha1.BackupJob{}
	if err := c.Get(backuptest.Context(t), key, j); err != nil {
		t.Fatal(err)
	}
	return j
}

// batchJobs lists the batch/v1 Jobs the driver created for run.
func batchJobs(t testing.TB, ns string, run types.UID) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := c.List(backuptest.Context(t), &list, client.InNamespace(ns), client.MatchingLabels{backupsv1alpha1.LabelRun: string(run)}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// complete writes a Job's status as the Job controller would on success:
// nothing runs pods here, so no controller ever does.
func complete(t testing.TB, j *batchv1.Job) {
	t.Helper()
	now := metav1.Now()
	j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &now, &now, 1
	j.Status.Conditions = append(j.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
		batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now})
	if err := c.Status().Update(backuptest.Context(t), j); err != nil {
		t.Fatal(err)
	}
}

// driverManagers returns the backup-driver-* field managers of obj.
func driverManagers(obj metav1.Object) []string {
	var out []string
	for _, m := range obj.GetManagedFields() {
		if strings.HasPrefix(m.Manager, "backup-driver-") && !contains(out, m.Manager) {
			out = append(out, m.Manager)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
