package jobdriver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/platform/internal/backup/jobdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/conformance"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/backup/driver"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

const driverNamespace = "cozy-backup-job"

// need skips under -short and applies the backups.cozystack.io CRDs.
func need(t *testing.T) client.Client {
	t.Helper()
	testenv.Need(t, env)
	if err := crds.Apply(context.Background(), env.Config); err != nil {
		t.Fatal(err)
	}
	s := driver.Scheme()
	if err := batchv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// start runs one Job driver replica in a manager of its own, the way
// cozystack-controller hosts it (jobdriver.Setup), until ctx ends.
func start(ctx context.Context, r conformance.Replica) error {
	mgr, err := ctrl.NewManager(env.Config, manager.Options{
		Scheme: driver.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	o := jobdriver.Options{Namespace: driverNamespace, Identity: r.Identity, ClaimDuration: r.ClaimDuration,
		LeaseDuration: r.LeaseDuration, WrapClient: r.WrapClient, SkipNameValidation: true}
	if err := jobdriver.Setup(mgr, o); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// jobTemplate is a batch/v1 Job template of the parameters with args.
func jobTemplate(role string, args ...string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "{{ .Application.Name }}"}},
		"spec": map[string]any{"backoffLimit": 0, "template": map[string]any{"spec": map[string]any{
			"restartPolicy": "Never",
			"containers": []any{map[string]any{"name": role, "image": "registry.example/backup-tool:1",
				"args": args, "env": []any{map[string]any{"name": "TARGET", "value": "{{ .Application.Name }}"}}}},
		}}},
	}
}

func params(t testing.TB, p map[string]any) *apiextensionsv1.JSON {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.JSON{Raw: raw}
}

func validParams() map[string]any {
	return map[string]any{
		"backup":     jobTemplate("backup", "backup", "{{ .Application.Namespace }}/{{ .Application.Name }}", "--version={{ .Snapshot.version }}"),
		"restore":    jobTemplate("restore", "restore", "{{ .Backup.DriverData.path }}"),
		"cleanup":    jobTemplate("cleanup", "rm", "{{ .Backup.DriverData.path }}"),
		"driverData": map[string]any{"path": "s3://backups/{{ .Application.Namespace }}/{{ .Job.UID }}"},
	}
}

// complete writes a Job's status as the Job controller would on success:
// nothing runs pods here, so no controller ever does.
func complete(ctx context.Context, c client.Client, obj client.Object) error {
	j := obj.(*batchv1.Job)
	for _, cond := range j.Status.Conditions {
		if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
			return nil
		}
	}
	now := metav1.Now()
	if j.Status.StartTime == nil {
		j.Status.StartTime = &now
	}
	j.Status.CompletionTime = &now
	j.Status.Succeeded = 1
	j.Status.Conditions = append(j.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
		batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now})
	return c.Status().Update(ctx, j)
}

func backend(ctx context.Context, c client.Client, run types.UID) ([]client.Object, error) {
	var list batchv1.JobList
	if err := c.List(ctx, &list, client.MatchingLabels{v1alpha1.LabelRun: string(run)}); err != nil {
		return nil, err
	}
	out := make([]client.Object, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// TestConformance runs the driver conformance suite against the Job
// driver on the local control plane.
func TestConformance(t *testing.T) {
	c := need(t)
	_ = c
	unknown := validParams()
	unknown["backup"].(map[string]any)["spec"].(map[string]any)["retries"] = 3
	s := driver.Scheme()
	if err := batchv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.Setup{
		Config: env.Config, Scheme: s, Driver: jobdriver.DefaultName, StrategyKind: jobdriver.StrategyKind, Namespace: driverNamespace,
		Start:             start,
		Parameters:        params(t, validParams()),
		UnknownParameters: params(t, unknown),
		UnknownKey:        "backup.spec.retries",
		Backend:           backend,
		Complete:          complete,
		Squat: func(job *v1alpha1.BackupJob) client.Object {
			// A Job someone else made under the name the driver derives.
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: driver.ObjectName(job.Name, "backup"), Namespace: job.Namespace}}
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			j.Spec.Template.Spec.Containers = []corev1.Container{{Name: "other", Image: "registry.example/other:1"}}
			return j
		},
		CheckRestore: func(_ context.Context, _ client.Client, rj *v1alpha1.RestoreJob, objs []client.Object) error {
			if len(objs) != 1 {
				return fmt.Errorf("%d Jobs, want 1", len(objs))
			}
			ctr := objs[0].(*batchv1.Job).Spec.Template.Spec.Containers[0]
			if ctr.Env[0].Value != rj.Spec.Target.ApplicationName {
				return fmt.Errorf("restore Job targets %q, want %q", ctr.Env[0].Value, rj.Spec.Target.ApplicationName)
			}
			if !strings.HasPrefix(ctr.Args[1], "s3://backups/") {
				return fmt.Errorf("restore Job reads %q, want the Backup's driverData path", ctr.Args[1])
			}
			return nil
		},
	})
}
