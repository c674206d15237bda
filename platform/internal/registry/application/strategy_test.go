package application

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Unknown fields follow the request's field validation directive, as for
// custom resources.
func TestUnknownFields(t *testing.T) {
	f := newFixture(t, storageKind(t))
	body := `spec: {replicas: 3, extra: 1, users: {app: {password: x, colour: red}}}`
	unknown := []string{`unknown field "spec.extra"`, `unknown field "spec.users[app].colour"`}
	for _, tc := range []struct {
		name, directive string
		reason          string
		wantFields      []string // a 422 with these causes
		wantWarnings    []string
	}{
		{
			name:       "strict",
			reason:     "Strict refuses unknown fields, each named by its path, and writes nothing",
			directive:  metav1.FieldValidationStrict,
			wantFields: []string{"spec.extra", "spec.users[app].colour"},
		},
		{
			name:         "warn",
			reason:       "Warn accepts the object and warns of each unknown field",
			directive:    metav1.FieldValidationWarn,
			wantWarnings: unknown,
		},
		{
			name:         "default",
			reason:       "no directive is Kubernetes' default, Warn",
			directive:    "",
			wantWarnings: unknown,
		},
		{
			name:      "ignore",
			reason:    "Ignore accepts unknown fields silently",
			directive: metav1.FieldValidationIgnore,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			ctx, rec := withWarnings(f.ctx)
			name := tc.name
			_, err := f.rest.Create(ctx, f.newApp(name, body), nil, &metav1.CreateOptions{FieldValidation: tc.directive})
			if tc.wantFields != nil {
				if got := causes(t, err); !slices.Equal(got, tc.wantFields) {
					t.Errorf("causes %v, want %v", got, tc.wantFields)
				}
				if _, err := f.helmRelease(name); err == nil {
					t.Errorf("rejected create wrote a HelmRelease")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantWarnings, rec.warnings()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			want := map[string]any{"replicas": float64(3), "users": map[string]any{"app": map[string]any{"password": "x"}}}
			if diff := cmp.Diff(want, values(t, f.mustHelmRelease(name))); diff != "" {
				t.Errorf("values are not pruned (-want +got):\n%s", diff)
			}
		})
	}

	// On update, a new unknown field follows the directive, and one the
	// stored object already had is refused under every directive (see
	// TestStoredKeys): it is never pruned.
	f.create("stored", `spec: {}`)
	hr := f.mustHelmRelease("stored")
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"old":true}`)}
	if err := f.c.Update(context.Background(), hr); err != nil {
		t.Fatal(err)
	}
	strict := &metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict}
	u := f.get("stored")
	_ = unstructured.SetNestedField(u.Object, true, "spec", "new")
	_, _, err := f.rest.Update(f.ctx, "stored", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, strict)
	if got := causes(t, err); !slices.Equal(got, []string{"spec.new", "spec.old"}) {
		t.Errorf("strict update causes %v, want [spec.new spec.old]", got)
	}
	u = f.get("stored")
	unstructured.RemoveNestedField(u.Object, "spec", "old")
	if _, _, err := f.rest.Update(f.ctx, "stored", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, strict); err != nil {
		t.Fatalf("strict update without the stored unknown field: %v", err)
	}
	if v := values(t, f.mustHelmRelease("stored")); v["old"] != nil {
		t.Errorf("values = %v, want spec.old removed by the update that left it out", v)
	}
}

// Deprecated fields get a Warning header on create and update.
func TestDeprecatedFieldWarns(t *testing.T) {
	f := newFixture(t, storageKind(t))
	want := []string{"spec.legacyMode is deprecated: use version instead"}
	ctx, rec := withWarnings(f.ctx)
	if _, err := f.rest.Create(ctx, f.newApp("main", `spec: {legacyMode: true}`), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, rec.warnings()); diff != "" {
		t.Errorf("create warnings (-want +got):\n%s", diff)
	}
	ctx, rec = withWarnings(f.ctx)
	if _, _, err := f.rest.Update(ctx, "main", rest.DefaultUpdatedObjectInfo(f.get("main")), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, rec.warnings()); diff != "" {
		t.Errorf("update warnings (-want +got):\n%s", diff)
	}
	// No deprecated field, no warning: defaults do not count.
	ctx, rec = withWarnings(f.ctx)
	if _, err := f.rest.Create(ctx, f.newApp("clean", `spec: {}`), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := rec.warnings(); len(w) > 0 {
		t.Errorf("warnings for a clean spec: %v", w)
	}
}

func TestConvertToTable(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("ready", `spec: {}`)
	f.create("waiting", `spec: {}`)
	f.setReady("ready", "Helm install succeeded for release ready", "0.4.1")

	wantColumns := []string{"Name", "Ready", "Status", "Version", "Age"}
	age := regexp.MustCompile(`^\d+s$`)

	obj := f.get("ready")
	table, err := f.rest.ConvertToTable(f.ctx, obj, &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
		if c.Type == "" || c.Description == "" {
			t.Errorf("column %s lacks type or description", c.Name)
		}
	}
	if diff := cmp.Diff(wantColumns, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if table.ColumnDefinitions[0].Format != "name" {
		t.Errorf("Name column format %q, want name", table.ColumnDefinitions[0].Format)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	if diff := cmp.Diff([]any{"ready", "True", "Helm install succeeded for release ready", "0.4.1"}, cells[:4]); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if !age.MatchString(cells[4].(string)) {
		t.Errorf("age %q, want a human duration in seconds", cells[4])
	}
	if table.Rows[0].Object.Object != obj || table.ResourceVersion != obj.GetResourceVersion() {
		t.Errorf("row object or table resourceVersion do not match the object")
	}

	list, err := f.rest.List(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	table, err = f.rest.ConvertToTable(f.ctx, list, &metav1.TableOptions{NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if table.ColumnDefinitions != nil {
		t.Errorf("NoHeaders: got columns %v", table.ColumnDefinitions)
	}
	if table.ResourceVersion != list.(*List).GetResourceVersion() {
		t.Errorf("table resourceVersion %q, want the list's", table.ResourceVersion)
	}
	var rows [][]any
	for _, r := range table.Rows {
		rows = append(rows, r.Cells[:4])
	}
	want := [][]any{
		{"ready", "True", "Helm install succeeded for release ready", "0.4.1"},
		{"waiting", "Unknown", "waiting for helm-controller to reconcile the HelmRelease", ""},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("list rows (-want +got):\n%s", diff)
	}
}
