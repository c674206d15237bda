package apiserver_test

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/registry/application"
)

// A catalog revision changes a kind's release settings (install and
// upgrade timeout, disableWait, retries; an annotation overriding one):
// the HelmRelease of an application that exists gets them without any
// write to the application, and nothing else of it changes.
func TestChangedReleaseSettingsReachExistingApplications(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	five := metav1.Duration{Duration: 5 * time.Minute}
	ad := schemaAD("sprocket", "Sprocket", "sprockets", `{"type":"object","properties":{"size":{"type":"integer","default":1}}}`)
	ad.Spec.Release.Labels = map[string]string{"catalog.example/tier": "gold"}
	ad.Spec.Release.Install = &v1alpha1.ReleaseAction{Timeout: &five}
	ad.Spec.Release.Upgrade = &v1alpha1.ReleaseAction{Timeout: &five, Retries: ptr.To(2)}
	if err := backend.Create(ctx, ad); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Delete(context.Background(), ad) })
	if c := servedCondition(t, ad.Name); c.Status != metav1.ConditionTrue {
		t.Fatalf("Served=%s %s: %s", c.Status, c.Reason, c.Message)
	}
	waitDiscovered(t, "sprockets", 10*time.Second)

	ns := "release-settings"
	if _, err := env.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	apps := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "sprockets"}).Namespace(ns)
	if _, err := apps.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Sprocket",
		"metadata": map[string]any{"name": "main", "labels": map[string]any{"team": "a"}, "annotations": map[string]any{"note": "kept"}},
		"spec":     map[string]any{"size": int64(3)},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "sprocket-main"}
	var before helmv2.HelmRelease
	if err := backend.Get(ctx, key, &before); err != nil {
		t.Fatal(err)
	}
	if got := before.Spec.Install.Timeout; got == nil || got.Duration != 5*time.Minute {
		t.Fatalf("install.timeout %v at create, want 5m", got)
	}

	// The new revision of the definition.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur v1alpha1.ApplicationDefinition
		if err := backend.Get(ctx, client.ObjectKey{Name: ad.Name}, &cur); err != nil {
			return err
		}
		twenty, thirty := metav1.Duration{Duration: 20 * time.Minute}, metav1.Duration{Duration: 30 * time.Minute}
		cur.Spec.Release.Install = &v1alpha1.ReleaseAction{Timeout: &twenty, DisableWait: true, Retries: ptr.To(3)}
		cur.Spec.Release.Upgrade = &v1alpha1.ReleaseAction{Timeout: &thirty, DisableWait: true}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[v1alpha1.AnnotationHelmUpgradeTimeout] = "45m"
		return backend.Update(ctx, &cur)
	}); err != nil {
		t.Fatal(err)
	}

	var after helmv2.HelmRelease
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := backend.Get(ctx, key, &after); err != nil {
			return false, nil
		}
		up := after.Spec.Upgrade
		return up != nil && up.Timeout != nil && up.Timeout.Duration == 45*time.Minute, nil
	}); err != nil {
		t.Fatalf("HelmRelease upgrade.timeout still %v after the definition changed, want 45m (the annotation)", after.Spec.Upgrade.Timeout)
	}
	in, up := after.Spec.Install, after.Spec.Upgrade
	if in.Timeout == nil || in.Timeout.Duration != 20*time.Minute || !in.DisableWait || in.Remediation == nil || in.Remediation.Retries != 3 {
		t.Errorf("install %+v, want timeout 20m, disableWait, 3 retries", in)
	}
	if !up.DisableWait || up.Remediation != nil {
		t.Errorf("upgrade %+v, want disableWait and no remediation (the definition dropped its retries)", up)
	}

	// Nothing but the settings changed: values, labels, annotations (the
	// application's managedFields among them) and every other field.
	want := before.DeepCopy()
	want.Spec.Install.Timeout, want.Spec.Install.DisableWait, want.Spec.Install.Remediation = in.Timeout, true, in.Remediation
	want.Spec.Upgrade.Timeout, want.Spec.Upgrade.DisableWait, want.Spec.Upgrade.Remediation = up.Timeout, true, nil
	if diff := cmp.Diff(want.Spec, after.Spec); diff != "" {
		t.Errorf("HelmRelease spec changed beyond the release settings (-want +got):\n%s", diff)
	}
	if string(after.Spec.Values.Raw) != string(before.Spec.Values.Raw) {
		t.Errorf("values %s, were %s", after.Spec.Values.Raw, before.Spec.Values.Raw)
	}
	if diff := cmp.Diff(before.Labels, after.Labels); diff != "" {
		t.Errorf("labels changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(before.Annotations, after.Annotations); diff != "" {
		t.Errorf("annotations changed (-before +after):\n%s", diff)
	}
	// The write was the settings sync's own, not an application write.
	var managers []string
	for _, m := range after.ManagedFields {
		managers = append(managers, m.Manager)
	}
	found := false
	for _, m := range managers {
		found = found || m == application.SettingsFieldManager
	}
	if !found {
		t.Errorf("managedFields managers %v lack %s", managers, application.SettingsFieldManager)
	}
	got, err := apps.Get(ctx, "main", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 || got.GetLabels()["team"] != "a" || got.GetAnnotations()["note"] != "kept" {
		t.Errorf("application after the sync: spec.size %d, labels %v, annotations %v", size, got.GetLabels(), got.GetAnnotations())
	}
}
