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
		name string
		// why is the rule the case pins.
		why     string
		objects [][]client.Object
		kind    string
		reason  string
		// driver is the registration bound ("": none).
		driver string
		// message are substrings the result's message must hold.
		message []string
	}{
		{
			name:    "bound",
			why:     "one live, accepted registration of the kind serves it",
			objects: [][]client.Object{registration("cnpg", []string{"CNPG"}, v1, live, 30)},
			kind:    "CNPG",
			reason:  backupsv1alpha1.ReasonBound,
			driver:  "cnpg",
		},
		{
			name:    "handed to a catalog",
			why:     "a kind of the handoff list with no driver names the catalog and version that bring one",
			kind:    "Velero",
			reason:  backupsv1alpha1.ReasonDriverNotInstalled,
			message: []string{"virtualization", "0.3.0"},
		},
		{
			name:    "built in, not yet registered",
			why:     "a built-in kind waits for the platform's own driver to register",
			kind:    "Job",
			reason:  backupsv1alpha1.ReasonDriverUnavailable,
			message: []string{"built-in driver job"},
		},
		{
			name:    "unknown",
			why:     "a kind no driver, handoff or built-in knows is terminal",
			kind:    "Nope",
			reason:  backupsv1alpha1.ReasonUnknownStrategyKind,
			message: []string{"Nope"},
		},
		{
			name:    "lease expired",
			why:     "a registration whose Lease expired serves nothing, and is named",
			objects: [][]client.Object{registration("cnpg", []string{"CNPG"}, v1, expired, 30)},
			kind:    "CNPG",
			reason:  backupsv1alpha1.ReasonDriverUnavailable,
			message: []string{"drivers/backup-driver-cnpg"},
		},
		{
			name:    "two live",
			why:     "two live registrations of one kind bind neither, and both are named",
			objects: [][]client.Object{registration("a", []string{"CNPG"}, v1, live, 30), registration("b", []string{"CNPG"}, v1, live, 30)},
			kind:    "CNPG",
			reason:  backupsv1alpha1.ReasonDriverConflict,
			message: []string{"a, b"},
		},
		{
			name:    "one live of two",
			why:     "an expired registration does not conflict with a live one",
			objects: [][]client.Object{registration("a", []string{"CNPG"}, v1, live, 30), registration("b", []string{"CNPG"}, v1, expired, 30)},
			kind:    "CNPG",
			reason:  backupsv1alpha1.ReasonBound,
			driver:  "a",
		},
		{
			name:    "refused beside a real one",
			why:     "a refused registration neither binds nor conflicts",
			objects: [][]client.Object{forged("evil", []string{"CNPG"}, live), registration("cnpg", []string{"CNPG"}, v1, live, 30)},
			kind:    "CNPG",
			reason:  backupsv1alpha1.ReasonBound,
			driver:  "cnpg",
		},
		{
			name:    "only refused",
			why:     "a refused registration alone leaves the kind unavailable, naming it and why it was refused",
			objects: [][]client.Object{forged("evil", []string{"CNPG"}, live)},
			kind:    "CNPG",
			reason:  backupsv1alpha1.ReasonDriverUnavailable,
			message: []string{"evil", backupsv1alpha1.ReasonWriterNotInCatalog},
		},
		{
			name:    "handed-off kind, registered by an operator",
			why:     "an operator's own registration of a handed-off kind serves it",
			objects: [][]client.Object{registration("velero", []string{"Velero"}, v1, live, 30)},
			kind:    "Velero",
			reason:  backupsv1alpha1.ReasonBound,
			driver:  "velero",
		},
		{
			name:    "handed-off kind, another catalog's driver",
			why:     "a handed-off kind binds only to a driver of the catalog it was handed to",
			objects: [][]client.Object{catalogDriver("services", "velero", "Velero", live)},
			kind:    "Velero",
			reason:  backupsv1alpha1.ReasonDriverUnavailable,
			message: []string{backupsv1alpha1.ReasonCatalogMismatch, "catalog services", "to catalog virtualization"},
		},
		{
			name:    "protocol",
			why:     "a driver speaking none of the core's protocol versions is refused, both lists named",
			objects: [][]client.Object{registration("cnpg", []string{"CNPG"}, []string{"v2"}, live, 30)},
			kind:    "CNPG",
			reason:  backupsv1alpha1.ReasonProtocolIncompatible,
			message: []string{"[v2]", "[v1alpha1]"},
		},
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
				t.Fatalf("reason %s (%s), want %s: %s", res.Reason, res.Message, tc.reason, tc.why)
			}
			if res.Terminal != (tc.reason == backupsv1alpha1.ReasonUnknownStrategyKind) {
				t.Errorf("terminal = %v: %s", res.Terminal, tc.why)
			}
			if tc.driver != "" && (res.Driver == nil || res.Driver.Name != tc.driver || res.ProtocolVersion != backupsv1alpha1.ProtocolVersion) {
				t.Errorf("driver %+v protocol %q, want %s: %s", res.Driver, res.ProtocolVersion, tc.driver, tc.why)
			}
			for _, m := range tc.message {
				if !strings.Contains(res.Message, m) {
					t.Errorf("message %q lacks %q: %s", res.Message, m, tc.why)
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
		// why is the rule the case pins.
		why   string
		lease *coordinationv1.Lease
		want  bool
	}{
		{
			why:   "no Lease: the driver never heartbeat",
			lease: nil,
			want:  false,
		},
		{
			why:   "a Lease without renewTime or duration was never renewed",
			lease: &coordinationv1.Lease{},
			want:  false,
		},
		{
			why:   "renewed 29 s ago with a 30 s duration: still live",
			lease: lease(now.Add(-29*time.Second), 30),
			want:  true,
		},
		{
			why:   "renewed exactly one duration ago: expired (live only strictly before)",
			lease: lease(now.Add(-30*time.Second), 30),
			want:  false,
		},
	} {
		if got := drivers.Live(tc.lease, now); got != tc.want {
			t.Errorf("Live(%+v) = %v, want %v: %s", tc.lease, got, tc.want, tc.why)
		}
	}
}
