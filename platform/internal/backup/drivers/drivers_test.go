package drivers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/drivers"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

var now = time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)

// registration returns a BackupDriver serving kinds and its Lease, renewed
// at renew for seconds.
func registration(name string, kinds, protocols []string, renew time.Time, seconds int32) []client.Object {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "drivers", Name: drivers.LeaseName(name),
		Labels: map[string]string{backupsv1alpha1.LabelDriver: name}},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renew}, LeaseDurationSeconds: ptr.To(seconds)}}
	d := &backupsv1alpha1.BackupDriver{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{backupsv1alpha1.AnnotationRegisteredBy: "cozystack-admin"}}, Spec: backupsv1alpha1.BackupDriverSpec{
		StrategyKinds: kinds, ProtocolVersions: protocols, Lease: backupsv1alpha1.LeaseRef{Namespace: "drivers", Name: drivers.LeaseName(name)}}}
	return []client.Object{lease, d}
}

// forged is registration written by a ServiceAccount of a namespace no
// Package owns: refused (WriterNotInCatalog), however live.
func forged(name string, kinds []string, renew time.Time) []client.Object {
	objs := registration(name, kinds, []string{backupsv1alpha1.ProtocolVersion}, renew, 30)
	objs[1].SetAnnotations(map[string]string{backupsv1alpha1.AnnotationRegisteredBy: "system:serviceaccount:drivers:evil"})
	return objs
}

// catalogDriver is the registration of driver name, written by the
// ServiceAccount of the namespace of catalog's component declaring kind,
// with what the operator writes for that catalog.
func catalogDriver(catalog, name, kind string, renew time.Time) []client.Object {
	objs := registration(name, []string{kind}, []string{backupsv1alpha1.ProtocolVersion}, renew, 30)
	objs[1].SetAnnotations(map[string]string{backupsv1alpha1.AnnotationRegisteredBy: "system:serviceaccount:drivers:" + name})
	return append(objs,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "drivers", Annotations: map[string]string{"cozystack.io/package": catalog}}},
		&v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: catalog}, Spec: v1alpha1.PackageSpec{SourceRef: v1alpha1.PackageSourceReference{Name: catalog}}},
		&v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: catalog}, Status: v1alpha1.PackageSourceStatus{
			Catalog: &v1alpha1.CatalogInfo{Name: catalog},
			Variants: []v1alpha1.PackageVariant{{Name: "default", Components: []v1alpha1.PackageComponent{
				{Name: name + "-driver", Namespace: "drivers", BackupStrategyKinds: []string{kind}}}}}}})
}

// Resolve follows contract K7's binding table: one reason per situation,
// with a message naming what to do.
func TestResolve(t *testing.T) {
	v1 := []string{backupsv1alpha1.ProtocolVersion}
	live, expired := now.Add(-time.Second), now.Add(-time.Hour)
	for _, tc := range []struct {
		name    string
		objects [][]client.Object
		kind    string
		reason  string
		driver  string
		message []string
	}{
		{"bound", [][]client.Object{registration("cnpg", []string{"CNPG"}, v1, live, 30)}, "CNPG", backupsv1alpha1.ReasonBound, "cnpg", nil},
		{"handed to a catalog", nil, "Velero", backupsv1alpha1.ReasonDriverNotInstalled, "", []string{"virtualization", "0.3.0"}},
		{"built in, not yet registered", nil, "Job", backupsv1alpha1.ReasonDriverUnavailable, "", []string{"built-in driver job"}},
		{"unknown", nil, "Nope", backupsv1alpha1.ReasonUnknownStrategyKind, "", []string{"Nope"}},
		{"lease expired", [][]client.Object{registration("cnpg", []string{"CNPG"}, v1, expired, 30)}, "CNPG", backupsv1alpha1.ReasonDriverUnavailable, "", []string{"drivers/backup-driver-cnpg"}},
		{"two live", [][]client.Object{registration("a", []string{"CNPG"}, v1, live, 30), registration("b", []string{"CNPG"}, v1, live, 30)},
			"CNPG", backupsv1alpha1.ReasonDriverConflict, "", []string{"a, b"}},
		{"one live of two", [][]client.Object{registration("a", []string{"CNPG"}, v1, live, 30), registration("b", []string{"CNPG"}, v1, expired, 30)},
			"CNPG", backupsv1alpha1.ReasonBound, "a", nil},
		{"refused beside a real one", [][]client.Object{forged("evil", []string{"CNPG"}, live), registration("cnpg", []string{"CNPG"}, v1, live, 30)},
			"CNPG", backupsv1alpha1.ReasonBound, "cnpg", nil},
		{"only refused", [][]client.Object{forged("evil", []string{"CNPG"}, live)}, "CNPG", backupsv1alpha1.ReasonDriverUnavailable, "",
			[]string{"evil", backupsv1alpha1.ReasonWriterNotInCatalog}},
		{"handed-off kind, registered by an operator", [][]client.Object{registration("velero", []string{"Velero"}, v1, live, 30)}, "Velero",
			backupsv1alpha1.ReasonBound, "velero", nil},
		{"handed-off kind, another catalog's driver", [][]client.Object{catalogDriver("services", "velero", "Velero", live)}, "Velero",
			backupsv1alpha1.ReasonDriverUnavailable, "", []string{backupsv1alpha1.ReasonCatalogMismatch, "catalog services", "to catalog virtualization"}},
		{"protocol", [][]client.Object{registration("cnpg", []string{"CNPG"}, []string{"v2"}, live, 30)}, "CNPG",
			backupsv1alpha1.ReasonProtocolIncompatible, "", []string{"[v2]", "[v1alpha1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(s)
			_ = backupsv1alpha1.AddToScheme(s)
			_ = v1alpha1.AddToScheme(s)
			b := fake.NewClientBuilder().WithScheme(s)
			for _, objs := range tc.objects {
				b = b.WithObjects(objs...)
			}
			r := drivers.Resolver{Reader: b.Build(),
				Handoff: []drivers.Handoff{{StrategyKind: "Velero", Catalog: "virtualization", MinVersion: "0.3.0"}},
				BuiltIn: map[string]string{"Job": "job"}}
			res, err := r.Resolve(context.Background(), tc.kind, now)
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s", res.Reason, res.Message, tc.reason)
			}
			if res.Terminal != (tc.reason == backupsv1alpha1.ReasonUnknownStrategyKind) {
				t.Errorf("terminal = %v", res.Terminal)
			}
			if tc.driver != "" && (res.Driver == nil || res.Driver.Name != tc.driver || res.ProtocolVersion != backupsv1alpha1.ProtocolVersion) {
				t.Errorf("driver %+v protocol %q, want %s", res.Driver, res.ProtocolVersion, tc.driver)
			}
			for _, m := range tc.message {
				if !strings.Contains(res.Message, m) {
					t.Errorf("message %q lacks %q", res.Message, m)
				}
			}
		})
	}
}

// A Lease is live strictly before renewTime + leaseDurationSeconds.
func TestLive(t *testing.T) {
	lease := func(renew time.Time, s int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renew}, LeaseDurationSeconds: &s}}
	}
	for _, tc := range []struct {
		lease *coordinationv1.Lease
		want  bool
	}{
		{nil, false},
		{&coordinationv1.Lease{}, false},
		{lease(now.Add(-29*time.Second), 30), true},
		{lease(now.Add(-30*time.Second), 30), false},
	} {
		if got := drivers.Live(tc.lease, now); got != tc.want {
			t.Errorf("Live(%+v) = %v, want %v", tc.lease, got, tc.want)
		}
	}
}
