package application

import (
	"context"
	"fmt"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// settingsAD is a definition of kind Gadget whose install timeout is
// timeout.
func settingsAD(timeout time.Duration) *v1alpha1.ApplicationDefinition {
	ad := postgresAD(`{"type":"object"}`)
	ad.Name, ad.Annotations = "gadget", nil
	ad.Spec.Application.Kind, ad.Spec.Application.Plural, ad.Spec.Application.Singular = "Gadget", "gadgets", "gadget"
	ad.Spec.Release.Prefix = "gadget-"
	ad.Spec.Release.Install = &v1alpha1.ReleaseAction{Timeout: &metav1.Duration{Duration: timeout}}
	return ad
}

// The sync walks every page of a kind's HelmReleases, and looks again
// after Recheck: a write that carried the earlier settings (one in flight
// when the kind changed) is corrected without another change.
func TestSettingsSyncPagesAndRechecks(t *testing.T) {
	f := newFixture(t, compileKind(t, settingsAD(15*time.Minute)))
	ctx := context.Background()
	var keys []client.ObjectKey
	for i := range 5 {
		app := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"n": int64(i)}}}
		app.SetName(fmt.Sprintf("g%d", i))
		app.SetNamespace(f.ns)
		hr, err := ToHelmRelease(f.kind, app)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.c.Create(ctx, hr); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, client.ObjectKeyFromObject(hr))
	}
	sync := &SettingsSync{Client: f.c, PageSize: 2, Recheck: 2 * time.Second}
	runCtx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go sync.Run(runCtx)
	sync.Update(appkinds.Resolve([]*v1alpha1.ApplicationDefinition{settingsAD(30 * time.Minute)}))

	timeoutIs := func(want time.Duration) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			for _, k := range keys {
				var hr helmv2.HelmRelease
				if err := f.c.Get(ctx, k, &hr); err != nil {
					return false, nil
				}
				if in := hr.Spec.Install; in == nil || in.Timeout == nil || in.Timeout.Duration != want {
					return false, nil
				}
			}
			return true, nil
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, timeoutIs(30*time.Minute)); err != nil {
		t.Fatal("not every HelmRelease (5, in pages of 2) got install.timeout 30m")
	}
	// An application write of the earlier kind lands after the pass.
	var hr helmv2.HelmRelease
	if err := f.c.Get(ctx, keys[3], &hr); err != nil {
		t.Fatal(err)
	}
	hr.Spec.Install.Timeout = &metav1.Duration{Duration: 15 * time.Minute}
	if err := f.c.Update(ctx, &hr); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, timeoutIs(30*time.Minute)); err != nil {
		t.Fatal("the recheck did not restore install.timeout 30m on the HelmRelease written with the earlier settings")
	}
}
