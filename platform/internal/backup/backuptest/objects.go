package backuptest

import (
	"context"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// AppGroup is the API group of the applications cozystack-api serves.
const AppGroup = "apps.cozystack.io"

// Namespace creates the namespace name unless it exists, and returns name.
// It is kept after the test: tests of one binary may share it.
func Namespace(t testing.TB, c client.Client, name string) string {
	t.Helper()
	err := c.Create(Context(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
}

// TempNamespace creates a namespace of a generated name starting with
// prefix for one test, deleted at its end, and returns its name.
func TempNamespace(t testing.TB, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	if err := c.Create(Context(t), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return ns.Name
}

// HelmRelease is the HelmRelease cozystack-api stores for the application
// {AppGroup, kind, name} in ns, with values: named <kind in lower case>-<name>
// and labelled as K1 says. Its chart is the ExternalArtifact named after the
// kind; nothing reconciles it in these tests.
func HelmRelease(ns, kind, name, values string) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ToLower(kind) + "-" + name, Labels: map[string]string{
			v1alpha1.LabelApplicationGroup: AppGroup, v1alpha1.LabelApplicationKind: kind, v1alpha1.LabelApplicationName: name,
		}},
		Spec: helmv2.HelmReleaseSpec{
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: strings.ToLower(kind)},
			Interval: metav1.Duration{Duration: time.Hour},
			Values:   &apiextensionsv1.JSON{Raw: []byte(values)},
		},
	}
}

// Application creates HelmRelease(ns, kind, name, values), failing the test
// if it cannot (an existing one included), and returns it.
func Application(t testing.TB, c client.Client, ns, kind, name, values string) *helmv2.HelmRelease {
	t.Helper()
	hr := HelmRelease(ns, kind, name, values)
	if err := c.Create(Context(t), hr); err != nil {
		t.Fatalf("create HelmRelease: %v", err)
	}
	return hr
}
