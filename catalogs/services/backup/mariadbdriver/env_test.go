package mariadbdriver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/mariadbdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/backup/driver"
	"cozystack.io/sdk/charttest"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

const (
	driverNamespace = "cozy-mariadb-backup-driver"
	credentials     = "s3-creds"
)

// need skips under -short, applies the backups.cozystack.io CRDs and the
// upstream mariadb-operator CRDs (../shared/crds/upstream/mariadb.yaml),
// creates the driver's namespace with its S3 credentials Secret, and
// returns an admin client.
func need(t *testing.T) client.Client {
	t.Helper()
	testenv.Need(t, env)
	ctx := context.Background()
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
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: driverNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: credentials, Namespace: driverNamespace},
			StringData: map[string]string{mariadbdriver.AccessKeyIDKey: "AKIA", mariadbdriver.SecretAccessKeyKey: "s3cret"}},
	} {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	installRBAC(t, c)
	return c
}

// driverSA is the ServiceAccount charts/mariadb-backup-driver installs the
// driver with (release mariadb-backup-driver in driverNamespace).
const driverSA = "system:serviceaccount:" + driverNamespace + ":mariadb-backup-driver"

// installRBAC creates what charts/mariadb-backup-driver renders besides its
// Deployment (nothing runs pods here): the ServiceAccount, its
// ClusterRole, Role and bindings.
func installRBAC(t *testing.T, c client.Client) {
	t.Helper()
	ch, err := charttest.Load(filepath.Join("..", "..", "charts", "mariadb-backup-driver"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := charttest.Render(ch, "mariadb-backup-driver", charttest.WithK2(nil))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := charttest.Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			continue
		}
		// charttest renders into its own namespace: bind the
		// ServiceAccount of the driver's.
		if subjects, ok := o.Object["subjects"].([]any); ok {
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = driverNamespace
			}
		}
		if namespaced, err := c.IsObjectNamespaced(o); err != nil {
			t.Fatal(err)
		} else if namespaced {
			o.SetNamespace(driverNamespace)
		}
		if err := c.Create(context.Background(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// driverConfig is the driver's client configuration: the admin's,
// impersonating the chart's ServiceAccount, so the tests prove its RBAC
// is enough.
func driverConfig() *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: driverSA}
	return cfg
}

// params are valid S3 parameters.
const params = `{"s3":{"bucket":"backups","endpoint":"minio.example:9000","prefix":"mariadb/{{ .Application }}","credentialsSecret":"s3-creds"},"compression":"gzip"}`

// backend lists the k8s.mariadb.com Backups and Restores of run.
func backend(ctx context.Context, c client.Client, run types.UID) ([]client.Object, error) {
	var out []client.Object
	for _, gvk := range []string{"BackupList", "RestoreList"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(mariadbdriver.GroupVersion.WithKind(gvk))
		if err := c.List(ctx, list, client.MatchingLabels{v1alpha1.LabelRun: string(run)}); err != nil {
			return nil, err
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// setConditions writes conds into obj's status.conditions (keeping the
// lastTransitionTime of a condition whose status does not change) through
// the status subresource, as the mariadb-operator patches its status.
func setConditions(ctx context.Context, c client.Client, obj *unstructured.Unstructured, conds ...metav1.Condition) error {
	var cur []metav1.Condition
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &cur)
	for _, cd := range conds {
		cd.LastTransitionTime = metav1.Now()
		apimeta.SetStatusCondition(&cur, cd)
	}
	b, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	var list []any
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	if err := unstructured.SetNestedSlice(obj.Object, list, "status", "conditions"); err != nil {
		return err
	}
	return c.Status().Update(ctx, obj)
}

// complete marks a k8s.mariadb.com Backup or Restore complete, as the
// mariadb-operator does when its Job completes (pkg/condition/complete.go:
// Complete=True, reason JobComplete, message Success).
func complete(ctx context.Context, c client.Client, obj client.Object) error {
	u := obj.(*unstructured.Unstructured)
	if cd := findCondition(u, mariadbdriver.ConditionComplete); cd != nil && cd.Status == metav1.ConditionTrue {
		return nil
	}
	return setConditions(ctx, c, u, metav1.Condition{Type: mariadbdriver.ConditionComplete, Status: metav1.ConditionTrue,
		Reason: mariadbdriver.ReasonJobComplete, Message: "Success"})
}

func findCondition(u *unstructured.Unstructured, typ string) *metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var cur []metav1.Condition
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &cur)
	return apimeta.FindStatusCondition(cur, typ)
}

// mergePatch applies the JSON merge patch (RFC 7386) patch to doc.
func mergePatch(doc, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range doc {
		out[k] = v
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			d, _ := out[k].(map[string]any)
			out[k] = mergePatch(d, pv)
		default:
			out[k] = v
		}
	}
	return out
}

// renderMariaDB renders charts/mariadb for the application app in ns with
// the tenant's values spec, as helm-controller installs it, and returns
// its MariaDB object.
func renderMariaDB(ns, app string, spec map[string]any) (*unstructured.Unstructured, error) {
	ch, err := charttest.Load(filepath.Join("..", "..", "charts", "mariadb"))
	if err != nil {
		return nil, err
	}
	out, err := charttest.Render(ch, mariadbdriver.MariaDBName(app), charttest.WithK2(spec))
	if err != nil {
		return nil, err
	}
	objs, err := charttest.Objects(out)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GroupVersionKind() == mariadbdriver.MariaDBGVK {
			o.SetNamespace(ns)
			return o, nil
		}
	}
	return nil, fmt.Errorf("charts/mariadb rendered no MariaDB")
}

// newApplications plays, until ctx ends, the core, Flux and the
// mariadb-operator for RestoreJobs of mode NewApplication bound to a
// target: it creates the target's MariaDB from charts/mariadb with the
// Backup's restoreOverlay applied to a one-server spec (the core applies
// it to the captured spec; the conformance suite's snapshot is not a
// MariaDB spec), then writes the MariaDB's status as the operator does
// when it bootstraps from a backup (pkg/condition/backup_restored.go):
// Ready=False and BackupRestored=False with reason RestoreBackup, then
// BackupRestored=True and Ready=True (StatefulSetReady).
func newApplications(ctx context.Context, t *testing.T, c client.Client) {
	for ctx.Err() == nil {
		time.Sleep(250 * time.Millisecond)
		var rjs v1alpha1.RestoreJobList
		if err := c.List(ctx, &rjs); err != nil {
			continue
		}
		for _, rj := range rjs.Items {
			if rj.Spec.Target.Mode != v1alpha1.RestoreNewApplication || rj.Status.TargetRef == nil || rj.Status.Phase.Terminal() {
				continue
			}
			if err := playNewApplication(ctx, c, &rj); err != nil && ctx.Err() == nil {
				t.Logf("new application of RestoreJob %s/%s: %v", rj.Namespace, rj.Name, err)
			}
		}
	}
}

func playNewApplication(ctx context.Context, c client.Client, rj *v1alpha1.RestoreJob) error {
	m := mariadbdriver.New(mariadbdriver.MariaDBGVK)
	key := types.NamespacedName{Namespace: rj.Namespace, Name: mariadbdriver.MariaDBName(rj.Status.TargetRef.Name)}
	if err := c.Get(ctx, key, m); apierrors.IsNotFound(err) {
		b := &v1alpha1.Backup{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: rj.Spec.BackupRef.Name}, b); err != nil {
			return err
		}
		overlay := map[string]any{}
		if b.Spec.RestoreOverlay != nil {
			if err := json.Unmarshal(b.Spec.RestoreOverlay.Raw, &overlay); err != nil {
				return err
			}
		}
		obj, err := renderMariaDB(rj.Namespace, rj.Status.TargetRef.Name, mergePatch(map[string]any{"replicas": 1}, overlay))
		if err != nil {
			return err
		}
		return client.IgnoreAlreadyExists(c.Create(ctx, obj))
	} else if err != nil {
		return err
	}
	switch restored := findCondition(m, mariadbdriver.ConditionBackupRestored); {
	case restored == nil:
		return setConditions(ctx, c, m,
			metav1.Condition{Type: mariadbdriver.ConditionReady, Status: metav1.ConditionFalse, Reason: mariadbdriver.ReasonRestoreBackup, Message: "Restoring backup"},
			metav1.Condition{Type: mariadbdriver.ConditionBackupRestored, Status: metav1.ConditionFalse, Reason: mariadbdriver.ReasonRestoreBackup, Message: "Restoring backup"})
	case restored.Status == metav1.ConditionFalse:
		return setConditions(ctx, c, m,
			metav1.Condition{Type: mariadbdriver.ConditionBackupRestored, Status: metav1.ConditionTrue, Reason: mariadbdriver.ReasonRestoreBackup, Message: "Restored backup"},
			metav1.Condition{Type: mariadbdriver.ConditionReady, Status: metav1.ConditionTrue, Reason: "StatefulSetReady", Message: "Running"})
	}
	return nil
}
