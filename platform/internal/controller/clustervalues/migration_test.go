package clustervalues_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/controller"
	"cozystack.io/platform/internal/controller/clustervalues"
	"cozystack.io/sdk/localcp"
)

// probeChart renders the values a release reads into a ConfigMap "probe".
var probeChart = map[string]string{
	"Chart.yaml": "apiVersion: v2\nname: probe\nversion: 0.1.0\n",
	"templates/probe.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: probe
data:
  root-host: {{ index .Values._cluster "root-host" | required "_cluster.root-host" | quote }}
  host: {{ .Values._namespace.host | required "_namespace.host" | quote }}
`,
}

// TestLegacySecretMigration moves a release from the legacy Secret to the
// ConfigMap and back with real helm-controller, shows that a change of
// ClusterValues reaches the release through the Flux watch label alone,
// and recovers a half-switched state (a namespace still on the Secret
// after the dual write was turned off). See k2-migration.md.
func TestLegacySecretMigration(t *testing.T) {
	need(t)
	write := func(o *controller.Options) { o.Projection.LegacySecret = clustervalues.LegacySecretWrite }
	ctl := startController(t, write)
	ctx := testContext(t)
	createClusterValues(t, spec())
	ns := createNamespace(t, "migrate", true, nil)
	patchNamespace(t, ns.Name, func(n *corev1.Namespace) {
		n.Annotations[v1alpha1.AnnotationValuesSource] = v1alpha1.ValuesSourceSecret
	})
	eventually(t, 30*time.Second, "ConfigMap and Secret written", func() error {
		if err := projected(ctx, getClusterValues(t), ns); err != nil {
			return err
		}
		_, err := getSecret(ctx, ns.Name)
		return err
	})

	// A release of the legacy kind, reading the Secret. Its interval is an
	// hour: only the watch label makes it re-render.
	publishProbeChart(t, ns.Name)
	// helm-controller runs locked down: the release names an identity
	// that may write its ConfigMap.
	if err := localcp.CreateInstaller(ctx, c, ns.Name, "probe-installer", "configmaps"); err != nil {
		t.Fatal(err)
	}
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns.Name},
		Spec: helmv2.HelmReleaseSpec{
			ServiceAccountName: "probe-installer",
			Interval:           metav1.Duration{Duration: time.Hour},
			ChartRef:           &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.ExternalArtifactKind, Name: "probe"},
			ValuesFrom: []helmv2.ValuesReference{
				{Kind: "Secret", Name: v1alpha1.ValuesName, ValuesKey: v1alpha1.ValuesKey},
			},
		},
	}
	if err := c.Create(ctx, hr); err != nil {
		t.Fatal(err)
	}
	host := ns.Labels[v1alpha1.LabelHost]
	waitRendered(t, ns.Name, "example.org", host)

	// Forward: the namespace moves to the ConfigMap.
	patchNamespace(t, ns.Name, func(n *corev1.Namespace) {
		n.Annotations[v1alpha1.AnnotationValuesSource] = v1alpha1.ValuesSourceConfigMap
	})
	waitValuesFrom(t, ns.Name, "ConfigMap")
	waitRendered(t, ns.Name, "example.org", host)
	eventually(t, 10*time.Second, "a ValuesSourceSwitched event", func() error {
		_, err := eventFor(ctx, ns.Name, "probe", clustervalues.ReasonValuesSourceSwitched)
		return err
	})

	// A change of the source reaches the release through the ConfigMap's
	// watch label.
	updateSpec(t, func(s *v1alpha1.ClusterValuesSpec) { s.RootHost = "example.net" })
	waitRendered(t, ns.Name, "example.net", host)

	// Back: the Secret is current (dual write), so the release may return.
	patchNamespace(t, ns.Name, func(n *corev1.Namespace) {
		n.Annotations[v1alpha1.AnnotationValuesSource] = v1alpha1.ValuesSourceSecret
	})
	waitValuesFrom(t, ns.Name, "Secret")
	waitRendered(t, ns.Name, "example.net", host)

	// Half-switched: the dual write is turned off while the namespace still
	// reads the Secret. The status says so; the Secret goes stale.
	ctl.stop(t)
	ctl = startController(t, nil)
	cv := updateSpec(t, func(s *v1alpha1.ClusterValuesSpec) { s.RootHost = "example.com" })
	eventually(t, 30*time.Second, "the stale Secret reported", func() error {
		if err := statusIs(ctx, cv.Generation, 1, 0, metav1.ConditionFalse, v1alpha1.ReasonInvalidNamespaceValues); err != nil {
			return err
		}
		return conditionMentions(ctx, v1alpha1.ConditionStalled, metav1.ConditionTrue, "--legacy-secret")
	})
	// Moving it back to the Secret is refused while nothing keeps it
	// current.
	patchNamespace(t, ns.Name, func(n *corev1.Namespace) { n.Annotations["example.org/nudge"] = "1" })
	time.Sleep(500 * time.Millisecond)
	if got := valuesFromKinds(t, ns.Name); !cmp.Equal(got, []string{"Secret"}) {
		t.Fatalf("valuesFrom kinds %v, want the release left on the Secret", got)
	}

	// Recovery: forward to the ConfigMap, which is current.
	patchNamespace(t, ns.Name, func(n *corev1.Namespace) {
		n.Annotations[v1alpha1.AnnotationValuesSource] = v1alpha1.ValuesSourceConfigMap
	})
	waitValuesFrom(t, ns.Name, "ConfigMap")
	waitRendered(t, ns.Name, "example.com", host)
	eventually(t, 30*time.Second, "converged", func() error {
		return statusIs(ctx, cv.Generation, 1, 1, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})

	// Rolling back a namespace to the Secret with the dual write off: the
	// release stays on the ConfigMap (an event says why) until the dual
	// write is back, which refreshes the Secret, and only then moves.
	patchNamespace(t, ns.Name, func(n *corev1.Namespace) {
		n.Annotations[v1alpha1.AnnotationValuesSource] = v1alpha1.ValuesSourceSecret
	})
	eventually(t, 10*time.Second, "a LegacySecretDisabled event", func() error {
		_, err := eventFor(ctx, "default", ns.Name, clustervalues.ReasonLegacySecretDisabled) // a Namespace is cluster-scoped
		return err
	})
	if got := valuesFromKinds(t, ns.Name); !cmp.Equal(got, []string{"ConfigMap"}) {
		t.Fatalf("valuesFrom kinds %v, want the release kept on the ConfigMap", got)
	}
	ctl.stop(t)
	startController(t, write)
	waitValuesFrom(t, ns.Name, "Secret")
	waitRendered(t, ns.Name, "example.com", host)
	secret, err := getSecret(ctx, ns.Name)
	if err != nil {
		t.Fatal(err)
	}
	if secret.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("the legacy Secret lacks helm.sh/resource-policy: keep (annotations %v)", secret.Annotations)
	}
}

func getSecret(ctx context.Context, namespace string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: v1alpha1.ValuesName}, s)
	return s, err
}

// publishProbeChart serves probeChart and publishes it as the
// ExternalArtifact "probe" in namespace, with the status a source
// controller would write.
func publishProbeChart(t *testing.T, namespace string) {
	t.Helper()
	ctx := testContext(t)
	chart, err := localcp.ChartArchive("probe", probeChart)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := localcp.NewArtifactServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	artifact := srv.Publish(namespace+"/probe.tgz", "0.1.0", chart)
	ea := &sourcev1.ExternalArtifact{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: namespace}}
	if err := c.Create(ctx, ea); err != nil {
		t.Fatal(err)
	}
	ea.Status.Artifact = &artifact
	apimeta.SetStatusCondition(&ea.Status.Conditions, metav1.Condition{
		Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason,
		Message: "published by the test", ObservedGeneration: ea.Generation,
	})
	if err := c.Status().Update(ctx, ea); err != nil {
		t.Fatal(err)
	}
}

// waitRendered waits until the probe release has rendered rootHost and
// host from its values.
func waitRendered(t *testing.T, namespace, rootHost, host string) {
	t.Helper()
	eventually(t, 90*time.Second, fmt.Sprintf("probe rendered root-host=%s host=%s", rootHost, host), func() error {
		ctx := context.Background()
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "probe"}, cm); err != nil {
			return fmt.Errorf("%v (release: %s)", err, releaseState(namespace))
		}
		if cm.Data["root-host"] != rootHost || cm.Data["host"] != host {
			return fmt.Errorf("probe data %v (release: %s)", cm.Data, releaseState(namespace))
		}
		return nil
	})
}

func releaseState(namespace string) string {
	hr := &helmv2.HelmRelease{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "probe"}, hr); err != nil {
		return err.Error()
	}
	if cond := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition); cond != nil {
		return fmt.Sprintf("Ready=%s %s: %s", cond.Status, cond.Reason, cond.Message)
	}
	return "no Ready condition"
}

func valuesFromKinds(t *testing.T, namespace string) []string {
	t.Helper()
	hr := &helmv2.HelmRelease{}
	if err := c.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: "probe"}, hr); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ref := range hr.Spec.ValuesFrom {
		if ref.Name == v1alpha1.ValuesName {
			kinds = append(kinds, ref.Kind)
		}
	}
	return kinds
}

// waitValuesFrom waits until the probe release reads values.yaml of kind,
// in one entry.
func waitValuesFrom(t *testing.T, namespace, kind string) {
	t.Helper()
	want := []helmv2.ValuesReference{{Kind: kind, Name: v1alpha1.ValuesName, ValuesKey: v1alpha1.ValuesKey}}
	eventually(t, 30*time.Second, "valuesFrom on the "+kind, func() error {
		hr := &helmv2.HelmRelease{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "probe"}, hr); err != nil {
			return err
		}
		if diff := cmp.Diff(want, hr.Spec.ValuesFrom); diff != "" {
			return fmt.Errorf("valuesFrom (-want +got):\n%s", diff)
		}
		return nil
	})
}
