package snapshot_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/snapshot"
)

// The canonical form does not depend on key order or spacing, so two
// jobs of unchanged values share one digest; numbers keep their text.
func TestCanonical(t *testing.T) {
	a, da, err := snapshot.Canonical([]byte(`{"size": "10Gi", "replicas": 2, "big": 12345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	b, db, err := snapshot.Canonical([]byte(`{"replicas":2,"big":12345678901234567890,"size":"10Gi"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != `{"big":12345678901234567890,"replicas":2,"size":"10Gi"}` || string(a) != string(b) || da != db {
		t.Errorf("canonical %s (%s) and %s (%s), want one form and digest", a, da, b, db)
	}
	if e, d, _ := snapshot.Canonical(nil); string(e) != "{}" || !strings.HasPrefix(d, "sha256:") || len(d) != 71 {
		t.Errorf("empty values: %s %s, want {} and a sha256 digest", e, d)
	}
	if _, _, err := snapshot.Canonical([]byte(`[1]`)); err == nil {
		t.Error("a JSON array was accepted as values")
	}
	if n := snapshot.Name(strings.Repeat("a", 300), da); len(snapshot.OwnersName(n)) > 253 || !strings.HasSuffix(n, "-"+da[7:19]) {
		t.Errorf("name %q (%d characters with the owners suffix)", n, len(snapshot.OwnersName(n)))
	}
}

// Values verifies the digest: a changed ConfigMap is an *IntegrityError
// naming both digests; without a reference Resolve returns the inline
// values of an earlier release without reading. (Reads through the API
// server: the binder's and the restore's TestSnapshotByReference.)
func TestValuesAndFallback(t *testing.T) {
	values, digest, _ := snapshot.Canonical([]byte(`{"size":"1Gi"}`))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: snapshot.Name("db", digest)}, Data: map[string]string{snapshot.DataKey: string(values)}}
	if got, err := snapshot.Values(cm, digest); err != nil || string(got) != string(values) {
		t.Errorf("Values: %s, %v", got, err)
	}
	cm.Data[snapshot.DataKey] = `{"size":"900Gi"}`
	_, err := snapshot.Values(cm, digest)
	var ie *snapshot.IntegrityError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), digest) || !strings.Contains(err.Error(), snapshot.Digest([]byte(`{"size":"900Gi"}`))) || !strings.Contains(err.Error(), "tampering") {
		t.Errorf("a forged snapshot: %v, want an IntegrityError naming both digests", err)
	}
	delete(cm.Data, snapshot.DataKey)
	if _, err := snapshot.Values(cm, digest); !errors.As(err, &ie) || ie.Got != "" {
		t.Errorf("no values: %v", err)
	}
	ctx := context.Background()
	inline := &v1alpha1.RawSpec{Raw: []byte(`{"size":"2Gi"}`)}
	if got, err := snapshot.Resolve(ctx, nil, "t", nil, inline); err != nil || string(got.Raw) != `{"size":"2Gi"}` {
		t.Errorf("inline fallback: %v, %v", got, err)
	}
	if got, err := snapshot.Resolve(ctx, nil, "t", nil, nil); err != nil || got != nil {
		t.Errorf("no snapshot: %v, %v, want nil, nil", got, err)
	}
}
