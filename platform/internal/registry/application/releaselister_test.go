package application

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func TestDecodeList(t *testing.T) {
	item := func(uid, rv string) string {
		return fmt.Sprintf(`{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"postgres-%s","namespace":"t","uid":%q,"resourceVersion":%q},"spec":{"interval":"5m","values":{"replicas":2,"name":"a \"quoted\" ]} string"}}}`, uid, uid, rv)
	}
	errStop := errors.New("stop")
	tests := []struct {
		name      string
		reason    string
		body      string
		stopAfter int // the callback fails on this item (1-based); 0: never
		wantMeta  metav1.ListMeta
		wantItems []string // "uid/rv/name" of each item, in order
		wantErr   string
	}{{
		name:   "list as kube-apiserver writes it",
		reason: "the list is decoded item by item, and its metadata (resourceVersion, continue, remaining count) is kept",
		body: `{"kind":"HelmReleaseList","apiVersion":"helm.toolkit.fluxcd.io/v2","metadata":{"resourceVersion":"42","continue":"c1","remainingItemCount":7},"items":[` +
			item("u1", "10") + `,` + item("u2", "11") + "]}\n",
		wantMeta:  metav1.ListMeta{ResourceVersion: "42", Continue: "c1", RemainingItemCount: ptrTo(int64(7))},
		wantItems: []string{"u1/10/postgres-u1", "u2/11/postgres-u2"},
	}, {
		name:      "metadata after the items, unknown fields",
		reason:    "metadata may come after the items, and unknown fields are skipped",
		body:      `{"items":[` + item("u1", "10") + `],"extra":{"a":[1,2,{"b":null}]},"metadata":{"resourceVersion":"43"}}`,
		wantMeta:  metav1.ListMeta{ResourceVersion: "43"},
		wantItems: []string{"u1/10/postgres-u1"},
	}, {
		name:     "items null",
		reason:   "items null is an empty list, not an error",
		body:     `{"metadata":{"resourceVersion":"44"},"items":null}`,
		wantMeta: metav1.ListMeta{ResourceVersion: "44"},
	}, {
		name:     "no items",
		reason:   "an empty items array is an empty list",
		body:     `{"metadata":{"resourceVersion":"45"},"items":[]}`,
		wantMeta: metav1.ListMeta{ResourceVersion: "45"},
	}, {
		name:      "item without uid and resourceVersion: decoded, never memoized",
		reason:    "an item without uid and resourceVersion is decoded but cannot be memoized",
		body:      `{"items":[{"metadata":{"name":"bare"}}]}`,
		wantItems: []string{"//bare"},
	}, {
		name:      "callback error stops the list",
		reason:    "a callback error stops the list and is returned as it is",
		body:      `{"items":[` + item("u1", "10") + `,` + item("u2", "11") + `]}`,
		stopAfter: 1,
		wantItems: []string{"u1/10/postgres-u1"},
		wantErr:   "stop",
	}, {
		name:      "truncated response",
		reason:    "a truncated response is an error naming the list item, after the items decoded before it",
		body:      `{"metadata":{"resourceVersion":"46"},"items":[` + item("u1", "10") + `,{"metadata":{"na`,
		wantItems: []string{"u1/10/postgres-u1"},
		wantErr:   "HelmRelease list item",
	}, {
		name:    "items not an array",
		reason:  "items that are not an array are refused, naming the items",
		body:    `{"items":{"a":1}}`,
		wantErr: "HelmRelease list items",
	}, {
		name:    "not an object",
		reason:  "a body that is not a JSON object is refused as a bad list",
		body:    `[1]`,
		wantErr: "HelmRelease list",
	}, {
		name:    "bad metadata",
		reason:  "metadata of the wrong type is refused as bad list metadata",
		body:    `{"metadata":{"resourceVersion":5}}`,
		wantErr: "HelmRelease list metadata",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tt.name, tt.reason)
				}
			})
			var got []string
			meta, err := decodeList(strings.NewReader(tt.body), func(i *ListItem) error {
				hr, err := i.Decode()
				if err != nil {
					return err
				}
				got = append(got, fmt.Sprintf("%s/%s/%s", i.UID, i.ResourceVersion, hr.Name))
				if len(got) == tt.stopAfter {
					return errStop
				}
				return nil
			})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantItems, got); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if tt.wantErr == "" {
				if diff := cmp.Diff(tt.wantMeta, meta); diff != "" {
					t.Errorf("metadata (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// BenchmarkDecodeList reads a list of 5,000 HelmReleases of the upstream
// postgres kind, as cozystack-api reads a consistent list whose items are
// all memoized (each item's bytes and its uid and resourceVersion; nothing
// decoded further), with decodeList and, side by side, with the
// encoding/json Decoder it replaced (each item decoded into a
// json.RawMessage).
func BenchmarkDecodeList(b *testing.B) {
	list := benchList(b)
	b.Logf("%d bytes per item", len(list)/5000)
	count := func(*ListItem) error { return nil }

	b.Run("jsontext", func(b *testing.B) {
		b.SetBytes(int64(len(list)))
		for b.Loop() {
			if _, err := decodeList(bytes.NewReader(list), count); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(list)))
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(list))
			n := 0
			for {
				tok, err := dec.Token()
				if err != nil {
					b.Fatal(err)
				}
				if tok == json.Delim('[') {
					break
				}
			}
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 5000 {
				b.Fatalf("%d items", n)
			}
		}
	})
}

// benchList is a HelmReleaseList of 5,000 HelmReleases of the upstream
// postgres kind as kube-apiserver writes it.
func benchList(b *testing.B) []byte {
	b.Helper()
	k, a := postgresMain(b)
	// As kube-apiserver stores it: the application's managedFields in an
	// annotation, its own managedFields for cozystack-api, keys sorted
	// (a custom resource is a map).
	a.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "apps.cozystack.io/v1alpha1", Time: &metav1.Time{}, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:team":{}}},"f:spec":{".":{},"f:databases":{".":{},"f:app":{".":{},"f:roles":{".":{},"f:admin":{}}}},"f:replicas":{},"f:size":{},"f:users":{".":{},"f:app":{".":{},"f:password":{}}}}}`)}}})
	hr, err := ToHelmRelease(k, a)
	if err != nil {
		b.Fatal(err)
	}
	hr.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "helm.toolkit.fluxcd.io/v2", Time: &metav1.Time{}, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{".":{},"f:apps.cozystack.io/managed-fields":{}},"f:labels":{".":{},"f:apps.cozystack.io/application.group":{},"f:apps.cozystack.io/application.kind":{},"f:apps.cozystack.io/application.name":{},"f:team":{}}},"f:spec":{".":{},"f:chartRef":{".":{},"f:kind":{},"f:name":{},"f:namespace":{}},"f:install":{".":{},"f:remediation":{".":{},"f:retries":{}},"f:timeout":{}},"f:interval":{},"f:upgrade":{".":{},"f:remediation":{".":{},"f:retries":{}},"f:timeout":{}},"f:values":{".":{},"f:databases":{},"f:replicas":{},"f:size":{},"f:users":{}},"f:valuesFrom":{}}}`)}}}
	var list bytes.Buffer
	list.WriteString(`{"kind":"HelmReleaseList","apiVersion":"helm.toolkit.fluxcd.io/v2","metadata":{"resourceVersion":"9"},"items":[`)
	for i := range 5000 {
		hr.Name, hr.UID, hr.ResourceVersion = fmt.Sprintf("postgres-%d", i), types.UID(fmt.Sprintf("uid-%d", i)), fmt.Sprint(i)
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hr)
		if err != nil {
			b.Fatal(err)
		}
		data, err := json.Marshal(u)
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			list.WriteByte(',')
		}
		list.Write(data)
	}
	list.WriteString("]}\n")
	return list.Bytes()
}
