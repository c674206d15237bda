package conformance_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/conformance"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/backup/driver"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

// configMapDriver is the smallest driver: its backend object is a
// ConfigMap per run whose data "state" a test sets to "Complete", the way
// an upstream operator would finish its own object.
type configMapDriver struct{}

type params struct {
	Note string `json:"note"`
}

func (configMapDriver) ValidateParameters(_ context.Context, _ driver.Operation, s v1alpha1.Strategy) error {
	var p params
	if err := driver.DecodeParameters(s.Parameters, &p); err != nil {
		return err
	}
	_, err := driver.Parse("note", p.Note)
	return err
}

func (configMapDriver) object(ctx context.Context, run *driver.Run, role, target string) (driver.Outcome, error) {
	var p params
	if err := run.DecodeParameters(&p); err != nil {
		return driver.Outcome{}, err
	}
	note, err := driver.Render("note", p.Note, map[string]any{"Job": run.Object().GetName(), "Target": target})
	if err != nil {
		return driver.Outcome{}, err
	}
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace = run.ObjectName(role), run.Object().GetNamespace()
	cm.Data = map[string]string{"note": note, "target": target, "state": "Running"}
	if _, err := run.CreateOrAdopt(ctx, cm); err != nil {
		return driver.Outcome{}, err
	}
	if cm.Data["state"] == "Complete" {
		return driver.Outcome{Done: true, DriverData: map[string]string{"configMap": cm.Name}}, nil
	}
	return driver.Outcome{Progress: &driver.Progress{Message: "waiting for " + cm.Name}}, nil
}

func (d configMapDriver) ReconcileBackup(ctx context.Context, run *driver.BackupRun) (driver.Outcome, error) {
	return d.object(ctx, &run.Run, "backup", run.Job.Spec.ApplicationRef.Name)
}

func (d configMapDriver) ReconcileRestore(ctx context.Context, run *driver.RestoreRun) (driver.Outcome, error) {
	return d.object(ctx, &run.Run, "restore", run.Target.Name)
}

func deleteRun(ctx context.Context, c client.Client, ns string, run types.UID) error {
	return c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRun: string(run)})
}

func (configMapDriver) CancelBackup(ctx context.Context, run *driver.BackupRun) error {
	return deleteRun(ctx, run.Client, run.Job.Namespace, run.UID())
}

func (configMapDriver) CancelRestore(ctx context.Context, run *driver.RestoreRun) error {
	return deleteRun(ctx, run.Client, run.Job.Namespace, run.UID())
}

func (configMapDriver) Reclaim(ctx context.Context, run *driver.ReclaimRun) (driver.Outcome, error) {
	b := run.Backup
	if err := deleteRun(ctx, run.Client, b.Namespace, types.UID(b.Labels[v1alpha1.LabelRun])); err != nil {
		return driver.Outcome{}, err
	}
	return driver.Outcome{Done: true}, nil
}

func TestConformance(t *testing.T) {
	testenv.Need(t, env)
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	if err := localcp.ApplyCRDs(context.Background(), env.Config, all...); err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.Setup{
		Config: env.Config, Driver: "configmap", StrategyKind: "ConfigMap", Namespace: "configmap-driver",
		Start: func(ctx context.Context, r conformance.Replica) error {
			o := driver.Options{Name: "configmap", Namespace: "configmap-driver", StrategyKinds: []string{"ConfigMap"},
				Capabilities: []v1alpha1.Capability{v1alpha1.CapabilityReclaim, v1alpha1.CapabilityRestoreToNew},
				Watches:      []client.Object{&corev1.ConfigMap{}}}
			r.Apply(&o)
			return driver.Start(ctx, env.Config, nil, configMapDriver{}, o)
		},
		Parameters:        &apiextensionsv1.JSON{Raw: []byte(`{"note":"backup of {{ .Job }}"}`)},
		UnknownParameters: &apiextensionsv1.JSON{Raw: []byte(`{"note":"x","retention":"7d"}`)},
		UnknownKey:        "retention",
		Backend: func(ctx context.Context, c client.Client, run types.UID) ([]client.Object, error) {
			var list corev1.ConfigMapList
			if err := c.List(ctx, &list, client.MatchingLabels{v1alpha1.LabelRun: string(run)}); err != nil {
				return nil, err
			}
			out := make([]client.Object, len(list.Items))
			for i := range list.Items {
				out[i] = &list.Items[i]
			}
			return out, nil
		},
		Complete: func(ctx context.Context, c client.Client, obj client.Object) error {
			cm := obj.(*corev1.ConfigMap)
			if cm.Data["state"] == "Complete" {
				return nil
			}
			cm.Data["state"] = "Complete"
			return c.Update(ctx, cm)
		},
		Squat: func(job *v1alpha1.BackupJob) client.Object {
			cm := &corev1.ConfigMap{}
			cm.Name, cm.Namespace = driver.ObjectName(job.Name, "backup"), job.Namespace
			return cm
		},
		CheckRestore: func(_ context.Context, _ client.Client, rj *v1alpha1.RestoreJob, objs []client.Object) error {
			if len(objs) != 1 {
				return fmt.Errorf("%d backend objects, want 1", len(objs))
			}
			if got := objs[0].(*corev1.ConfigMap).Data["target"]; got != rj.Spec.Target.ApplicationName {
				return fmt.Errorf("restored into %q, want %q", got, rj.Spec.Target.ApplicationName)
			}
			return nil
		},
	})
}
