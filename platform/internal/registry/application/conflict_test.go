package application

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Helm's refusal to take an object (helm.sh/helm/v3 action/validate.go),
// as helm-controller v1.4 reports it in Ready, becomes reason Conflict
// naming the object, its owner and the application behind it.
func TestConflictCondition(t *testing.T) {
	const install = `Helm install failed for release tenant-root/q with chart tenant@0.1.0: Unable to continue with install: `
	describe := func(ns, name string) string {
		if ns == "tenant-root" && name == "tenant-q" {
			return "application Tenant tenant-root/q"
		}
		return ""
	}
	for _, tc := range []struct {
		name    string
		reason  string
		message string
		status  metav1.ConditionStatus
		want    []string // "" for no Conflict
	}{
		{
			name:    "another release's namespace",
			reason:  "an object of another release is named with the release and the application that owns it, and the platform never takes it",
			message: install + `Namespace "tenant-q" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata; annotation validation error: key "meta.helm.sh/release-name" must equal "q": current value is "tenant-q"`,
			status:  metav1.ConditionFalse,
			want:    []string{`Namespace "tenant-q" in namespace "" belongs to Helm release tenant-root/tenant-q, the release of application Tenant tenant-root/q`, "never takes another's objects"},
		},
		{
			name:    "a release in another namespace",
			reason:  "the owning release may be in another namespace, and it is named so",
			message: install + `ConfigMap "x" in namespace "tenant-a" exists and cannot be imported into the current release: invalid ownership metadata; annotation validation error: key "meta.helm.sh/release-name" must equal "q": current value is "db"; annotation validation error: key "meta.helm.sh/release-namespace" must equal "tenant-root": current value is "tenant-a"`,
			status:  metav1.ConditionFalse,
			want:    []string{`ConfigMap "x" in namespace "tenant-a" belongs to Helm release tenant-a/db;`},
		},
		{
			name:    "an object no release owns",
			reason:  "an object made outside the platform belongs to no release, and the condition says so",
			message: install + `Namespace "tenant-q" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"; annotation validation error: missing key "meta.helm.sh/release-name": must be set to "q"`,
			status:  metav1.ConditionFalse,
			want:    []string{`belongs to no Helm release: it was made outside the platform`},
		},
		{
			name:    "another failure",
			reason:  "another install failure is no Conflict",
			message: "Helm install failed: timed out",
			status:  metav1.ConditionFalse,
			want:    nil,
		},
		{
			name:    "ready",
			reason:  "a ready release has no Conflict",
			message: "Helm install succeeded",
			status:  metav1.ConditionTrue,
			want:    nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			ready := &metav1.Condition{Type: "Ready", Status: tc.status, Reason: "InstallFailed", Message: tc.message}
			got := conflictCondition(ready, "tenant-root", describe)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("Conflict for %q: %+v", tc.message, got)
				}
				return
			}
			if got == nil || got.Reason != ReasonConflict || got.Status != metav1.ConditionFalse {
				t.Fatalf("condition = %+v, want False Conflict", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
		})
	}
}

// A create whose HelmRelease name another kind's application holds says
// which application holds it; application releases never take ownership.
func TestCreateNamesTheApplicationHoldingTheRelease(t *testing.T) {
	f := newFixture(t, storageKind(t)) // Postgres, prefix postgres-
	f.create("db", `{spec: {}}`)
	hr := f.mustHelmRelease("db")
	if !hr.Spec.Install.DisableTakeOwnership || !hr.Spec.Upgrade.DisableTakeOwnership {
		t.Errorf("install %+v upgrade %+v: the release may take another's objects", hr.Spec.Install, hr.Spec.Upgrade)
	}

	ad := postgresAD(storageSchema)
	ad.Name = "other"
	ad.Spec.Application.Kind, ad.Spec.Application.Plural, ad.Spec.Application.Singular = "Other", "others", "other"
	other := NewREST(compileKind(t, ad), Backend{Client: f.c})
	u := f.newApp("db", `{spec: {}}`)
	u.SetKind("Other")
	_, err := other.Create(f.ctx, u, nil, &metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) || !strings.Contains(err.Error(), "is already held by application Postgres "+f.ns+"/db") {
		t.Fatalf("err = %v, want AlreadyExists naming application Postgres %s/db", err, f.ns)
	}
	// The same kind: the plain AlreadyExists.
	_, err = f.rest.Create(f.ctx, f.newApp("db", `{spec: {}}`), nil, &metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) || strings.Contains(err.Error(), "held by") {
		t.Fatalf("same kind: err = %v", err)
	}
}
