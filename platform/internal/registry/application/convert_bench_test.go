package application

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"cozystack.io/platform/internal/adfixtures"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// The per-object cost the application API adds on every write and read of
// the upstream postgres kind: validation, defaulting and conversion.
func BenchmarkPostgresRoundTrip(b *testing.B) {
	k, a := postgresMain(b)
	b.ReportAllocs()
	for b.Loop() {
		spec := a.Object["spec"].(map[string]any)
		if errs := k.Schema.Validate(spec); len(errs) > 0 {
			b.Fatal(errs)
		}
		hr, err := ToHelmRelease(k, a)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := FromHelmRelease(k, hr); err != nil {
			b.Fatal(err)
		}
	}
}

// postgresMain returns the upstream postgres kind and an application of it
// with users, databases and a label: the object of the per-object
// benchmarks.
func postgresMain(b *testing.B) (*appkinds.Kind, *unstructured.Unstructured) {
	b.Helper()
	k, f := appkinds.Compile(adfixtures.Named(b, "postgres"))
	if f != nil {
		b.Fatal(f)
	}
	return k, app(b, `
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: main, namespace: tenant-a, labels: {team: db}}
spec: {replicas: 3, size: 20Gi, users: {app: {password: secret}}, databases: {app: {roles: {admin: [app]}}}}
`)
}
