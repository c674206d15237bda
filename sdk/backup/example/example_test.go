package example_test

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
	"cozystack.io/sdk/backup/example"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

// The example passes the driver conformance suite, as every driver must
// in its own tests: this is also the suite's own test.
func TestConformance(t *testing.T) {
	testenv.Need(t, env)
	if err := crds.Apply(context.Background(), env.Config); err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.Setup{
		Config: env.Config, Driver: "configmap", StrategyKind: example.StrategyKind, Namespace: "configmap-driver",
		Start: func(ctx context.Context, r conformance.Replica) error {
			o := example.Options("configmap", "configmap-driver")
			r.Apply(&o)
			return driver.Start(ctx, env.Config, nil, example.Driver{}, o)
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
			if cm.Data[example.StateKey] == example.StateComplete {
				return nil
			}
			cm.Data[example.StateKey] = example.StateComplete
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
