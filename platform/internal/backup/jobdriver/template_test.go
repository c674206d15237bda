package jobdriver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/jobdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/backup/conformance"
)

// TestTemplateError: a class whose template does not parse or reads a
// missing key fails the job TemplateError naming the field and the
// text/template error, and no batch Job is created (everything is
// rendered before anything is created).
func TestTemplateError(t *testing.T) {
	c := need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: driverNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- start(rctx, conformance.Replica{Identity: "template-0", ClaimDuration: 6 * time.Second, LeaseDuration: 6 * time.Second})
	}()
	defer func() { stop(); <-done }()

	for _, tc := range []struct {
		name string
		// why is the rule the case pins.
		why string
		// field and want are what the TemplateError message names: the
		// parameter's path and the template's error.
		field string
		want  string
		// edit breaks one template of the valid parameters.
		edit func(p map[string]any)
	}{{
		name:  "unclosed-action",
		why:   "a template that does not parse fails the job naming the field, before any Job is created",
		field: "backup.spec.template.spec.containers[0].args[1]",
		want:  "unclosed action",
		edit: func(p map[string]any) {
			p["backup"] = jobTemplate("backup", "backup", "{{ .Application.Name")
		},
	}, {
		name:  "missing-key",
		why:   "a key missing from the data fails the job (missingkey=error), never renders <no value>",
		field: "backup.spec.template.spec.containers[0].args[1]",
		want:  `map has no entry for key "nokey"`,
		edit: func(p map[string]any) {
			p["backup"] = jobTemplate("backup", "backup", "{{ .Snapshot.nokey }}")
		},
	}, {
		name:  "missing-key-in-driver-data",
		why:   "driverData is recorded only on success, but rendered before the Job is created, so its error too leaves nothing behind",
		field: "driverData.path",
		want:  `map has no entry for key "Bucket"`,
		edit: func(p map[string]any) {
			p["driverData"] = map[string]any{"path": "s3://{{ .Bucket }}/x"}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ns := "tmpl-" + tc.name
			if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
				t.Fatal(err)
			}
			p := validParams()
			tc.edit(p)
			job := &v1alpha1.BackupJob{
				ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: ns, Labels: map[string]string{v1alpha1.LabelDriver: jobdriver.DefaultName}},
				Spec: v1alpha1.BackupJobSpec{BackupClassName: "broken", ApplicationRef: v1alpha1.ApplicationRef{
					ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db"}},
			}
			if err := c.Create(ctx, job); err != nil {
				t.Fatal(err)
			}
			// Play the core: bind the job to the Job driver.
			st := map[string]any{
				"phase": "Pending",
				"binding": v1alpha1.Binding{
					DriverRef:       v1alpha1.DriverRef{Name: jobdriver.DefaultName, ProtocolVersion: v1alpha1.ProtocolVersion},
					Strategy:        v1alpha1.Strategy{Kind: jobdriver.StrategyKind, Parameters: params(t, p)},
					BackupClassName: "broken", BoundTime: metav1.Now(),
				},
				"applicationSnapshot": map[string]any{"version": "16"},
			}
			if err := apply.Status(ctx, c, job, st, v1alpha1.CoreFieldManager); err != nil {
				t.Fatal(err)
			}
			got := &v1alpha1.BackupJob{}
			err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
				if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Name}, got); err != nil {
					return false, err
				}
				return got.Status.Phase.Terminal(), nil
			})
			if err != nil {
				t.Fatalf("job did not end: %v (status %+v)", err, got.Status)
			}
			ready := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
			if got.Status.Phase != v1alpha1.PhaseFailed || ready == nil || ready.Reason != v1alpha1.ReasonTemplateError {
				t.Fatalf("phase %s, Ready %+v; want Failed with reason TemplateError", got.Status.Phase, ready)
			}
			for _, s := range []string{tc.field, tc.want} {
				if !strings.Contains(ready.Message, s) {
					t.Errorf("message %q does not name %q: %s", ready.Message, s, tc.why)
				}
			}
			var jobs batchv1.JobList
			if err := c.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			if len(jobs.Items) != 0 {
				t.Errorf("a run failed for its template created %d batch Jobs, e.g. %s", len(jobs.Items), jobs.Items[0].Name)
			}
		})
	}
}
