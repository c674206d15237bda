package application

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// postgresAD is the Postgres ApplicationDefinition the package's tests
// build on: prefix postgres-, one release label, a 15m install timeout.
func postgresAD(schema string) *v1alpha1.ApplicationDefinition {
	return &v1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "postgres", Annotations: map[string]string{v1alpha1.AnnotationHelmInstallTimeout: "15m"}},
		Spec: v1alpha1.ApplicationDefinitionSpec{
			Application: v1alpha1.ApplicationDefinitionApplication{
				Kind: "Postgres", Plural: "postgreses", Singular: "postgres", OpenAPISchema: schema,
			},
			Release: v1alpha1.ApplicationDefinitionRelease{
				Prefix:   "postgres-",
				Labels:   map[string]string{"sharding.fluxcd.io/key": "tenants"},
				ChartRef: &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: "postgres-chart", Namespace: "cozy-system"},
			},
		},
	}
}

func compileKind(t *testing.T, ad *v1alpha1.ApplicationDefinition) *appkinds.Kind {
	t.Helper()
	k, f := appkinds.Compile(ad)
	if f != nil {
		t.Fatal(f)
	}
	return k
}

func testKind(t *testing.T) *appkinds.Kind {
	retries := 3
	ad := postgresAD(`{"type":"object","properties":{"replicas":{"type":"integer","default":2},"size":{"type":"string","default":"10Gi"},"users":{"type":"object"}}}`)
	ad.Spec.Release.Upgrade = &v1alpha1.ReleaseAction{Retries: &retries}
	return compileKind(t, ad)
}

// checkMainRelease checks the HelmRelease of application "main" of
// postgresAD, labelled team=db and annotated note=keep: K1 labels,
// annotations carried, chartRef, and the non-optional K2 valuesFrom.
func checkMainRelease(t *testing.T, hr *helmv2.HelmRelease) {
	t.Helper()
	wantLabels := map[string]string{
		"team": "db", "sharding.fluxcd.io/key": "tenants",
		v1alpha1.LabelApplicationKind: "Postgres", v1alpha1.LabelApplicationGroup: "apps.cozystack.io", v1alpha1.LabelApplicationName: "main",
	}
	if diff := cmp.Diff(wantLabels, hr.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if hr.Annotations["note"] != "keep" {
		t.Errorf("annotations = %v", hr.Annotations)
	}
	if diff := cmp.Diff(&helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "postgres-chart", Namespace: "cozy-system"}, hr.Spec.ChartRef); diff != "" {
		t.Errorf("chartRef (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]helmv2.ValuesReference{{Kind: "ConfigMap", Name: "cozystack-values", ValuesKey: "values.yaml"}}, hr.Spec.ValuesFrom); diff != "" {
		t.Errorf("valuesFrom (-want +got):\n%s", diff)
	}
}

func app(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestToHelmRelease(t *testing.T) {
	k := testKind(t)
	hr, err := ToHelmRelease(k, app(t, `
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata:
  name: main
  namespace: tenant-a
  labels: {team: db}
  annotations: {note: keep}
spec:
  replicas: 3
  users: {app: {password: x}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if hr.Name != "postgres-main" || hr.Namespace != "tenant-a" {
		t.Errorf("HelmRelease %s/%s, want tenant-a/postgres-main", hr.Namespace, hr.Name)
	}
	checkMainRelease(t, hr)
	// Values are the user's spec only: no schema default (size) is added.
	var values map[string]any
	if err := json.Unmarshal(hr.Spec.Values.Raw, &values); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"replicas": float64(3), "users": map[string]any{"app": map[string]any{"password": "x"}}}, values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if hr.Spec.Install.Timeout == nil || hr.Spec.Install.Timeout.Duration != 15*time.Minute {
		t.Errorf("install timeout = %v, want 15m from the AD annotation", hr.Spec.Install.Timeout)
	}
	if hr.Spec.Upgrade.Remediation == nil || hr.Spec.Upgrade.Remediation.Retries != 3 {
		t.Errorf("upgrade remediation = %+v, want 3 retries", hr.Spec.Upgrade.Remediation)
	}
}

func TestToHelmReleaseRejectsReservedLabels(t *testing.T) {
	k := testKind(t)
	for _, key := range []string{v1alpha1.LabelApplicationName, "sharding.fluxcd.io/key"} {
		a := app(t, "metadata: {name: main, namespace: a}\nspec: {}")
		a.SetLabels(map[string]string{key: "x"})
		_, err := ToHelmRelease(k, a)
		if err == nil || !strings.Contains(err.Error(), "metadata.labels["+key+"]") {
			t.Errorf("label %s: error = %v, want one naming metadata.labels[%s]", key, err, key)
		}
	}
}

func TestFromHelmReleaseRoundTrip(t *testing.T) {
	k := testKind(t)
	in := app(t, `
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: main, namespace: tenant-a, labels: {team: db}, annotations: {note: keep}}
spec: {replicas: 3}
`)
	hr, err := ToHelmRelease(k, in)
	if err != nil {
		t.Fatal(err)
	}
	// Platform-injected values never show in the spec.
	hr.Spec.Values.Raw = []byte(`{"replicas":3,"_cluster":{"host":"example.org"}}`)
	hr.ResourceVersion, hr.Generation, hr.UID = "42", 2, "uid-1"
	hr.Status.ObservedGeneration = 2
	hr.Status.LastAttemptedRevision = "0.4.1"
	hr.Status.Conditions = []metav1.Condition{
		{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: "InstallSucceeded", Message: "Helm install succeeded"},
		{Type: helmv2.ReleasedCondition, Status: metav1.ConditionTrue, Reason: "InstallSucceeded"},
		{Type: "Remediated", Status: metav1.ConditionFalse},
	}
	out, err := FromHelmRelease(k, hr)
	if err != nil {
		t.Fatal(err)
	}
	if out.GetName() != "main" || out.GetResourceVersion() != "42" || out.GetGeneration() != 2 || out.GetUID() != "uid-1" {
		t.Errorf("metadata = %s rv=%s gen=%d uid=%s", out.GetName(), out.GetResourceVersion(), out.GetGeneration(), out.GetUID())
	}
	if diff := cmp.Diff(map[string]string{"team": "db"}, out.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	spec, _, _ := unstructured.NestedMap(out.Object, "spec")
	// Defaults apply on read; _cluster is stripped.
	if diff := cmp.Diff(map[string]any{"replicas": int64(3), "size": "10Gi"}, spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if v, _, _ := unstructured.NestedString(out.Object, "status", "version"); v != "0.4.1" {
		t.Errorf("status.version = %q", v)
	}
	conds, _, _ := unstructured.NestedSlice(out.Object, "status", "conditions")
	if len(conds) != 2 || conds[0].(map[string]any)["type"] != "Ready" || conds[1].(map[string]any)["type"] != "Released" {
		t.Errorf("status.conditions = %v, want Ready and Released", conds)
	}
}

func TestStatusBeforeHelmControllerReports(t *testing.T) {
	conds := Status(&helmv2.HelmRelease{})["conditions"].([]any)
	if len(conds) != 1 || conds[0].(map[string]any)["status"] != "Unknown" || conds[0].(map[string]any)["reason"] != "Reconciling" {
		t.Errorf("conditions = %v, want Ready=Unknown Reconciling", conds)
	}
}

func TestFromHelmReleaseRefusesOtherKinds(t *testing.T) {
	k := testKind(t)
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "redis-main", Labels: map[string]string{v1alpha1.LabelApplicationKind: "Redis"}}}
	if _, err := FromHelmRelease(k, hr); err == nil {
		t.Error("converted a HelmRelease of another kind")
	}
}

// Server-side apply needs each application's field ownership stored with
// it; it travels in an annotation the user never sees.
func TestManagedFieldsRoundTrip(t *testing.T) {
	k := testKind(t)
	in := app(t, "metadata: {name: main, namespace: a, annotations: {note: keep}}\nspec: {replicas: 3}")
	mf := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps.cozystack.io/v1alpha1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}}}
	in.SetManagedFields(mf)
	hr, err := ToHelmRelease(k, in)
	if err != nil {
		t.Fatal(err)
	}
	if hr.Annotations[AnnotationManagedFields] == "" || len(hr.ManagedFields) != 0 {
		t.Fatalf("managedFields not carried in the annotation: %v", hr.Annotations)
	}
	out, err := FromHelmRelease(k, hr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mf, out.GetManagedFields()); diff != "" {
		t.Errorf("managedFields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"note": "keep"}, out.GetAnnotations()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	// A user cannot forge field ownership through the annotation.
	in.SetAnnotations(map[string]string{AnnotationManagedFields: "[]", "note": "keep"})
	in.SetManagedFields(nil)
	hr, _ = ToHelmRelease(k, in)
	if _, ok := hr.Annotations[AnnotationManagedFields]; ok {
		t.Error("a user-set managed-fields annotation reached the HelmRelease")
	}
}

func TestStatusReady(t *testing.T) {
	for _, tc := range []struct {
		name       string
		why        string
		reason     string // the HelmRelease's Ready reason
		message    string
		wantReason string
	}{
		{
			name:       "cluster values missing",
			why:        "a values error about cozystack-values is the cluster values not written yet: the application waits for them, naming cozystack-controller",
			reason:     "ValuesError",
			message:    "could not resolve ConfigMap chart values reference 'tenant-x/cozystack-values' with key 'values.yaml': configmaps \"cozystack-values\" not found",
			wantReason: v1alpha1.ReasonWaitingForClusterValues,
		},
		{
			name:       "other values error",
			why:        "a values error about another source keeps Flux's reason",
			reason:     "ValuesError",
			message:    "could not resolve Secret chart values reference 'x/other'",
			wantReason: "ValuesError",
		},
		{
			name:       "install failed",
			why:        "only a values error is read as waiting: an install failure mentioning cozystack-values keeps its reason",
			reason:     "InstallFailed",
			message:    "cozystack-values mentioned but not a values error",
			wantReason: "InstallFailed",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-x"}}
			hr.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: tc.reason, Message: tc.message}}
			ready := Status(hr)["conditions"].([]any)[0].(map[string]any)
			if ready["reason"] != tc.wantReason || ready["status"] != "False" {
				t.Errorf("%s: Ready = %v/%v, want False/%s (%s)", tc.name, ready["status"], ready["reason"], tc.wantReason, tc.why)
			}
			if tc.wantReason == v1alpha1.ReasonWaitingForClusterValues && !strings.Contains(ready["message"].(string), "cozystack-controller") {
				t.Errorf("%s: message %q does not say who provides the values (%s)", tc.name, ready["message"], tc.why)
			}
		})
	}
}

func TestKeepValuesSource(t *testing.T) {
	desired := []helmv2.ValuesReference{{Kind: "ConfigMap", Name: v1alpha1.ValuesName, ValuesKey: v1alpha1.ValuesKey}}
	for _, tc := range []struct {
		name    string
		reason  string
		current []helmv2.ValuesReference
		want    string
	}{
		{
			name:    "none yet",
			reason:  "a new release takes its values from the ConfigMap",
			current: nil,
			want:    "ConfigMap",
		},
		{
			name:    "moved to the legacy Secret by cozystack-controller",
			reason:  "an update must not move back a reference cozystack-controller moved to the legacy Secret during the K2 migration",
			current: []helmv2.ValuesReference{{Kind: "Secret", Name: v1alpha1.ValuesName, ValuesKey: v1alpha1.ValuesKey}},
			want:    "Secret",
		},
		{
			name:    "on the ConfigMap",
			reason:  "a release on the ConfigMap stays on it",
			current: []helmv2.ValuesReference{{Kind: "ConfigMap", Name: v1alpha1.ValuesName, ValuesKey: v1alpha1.ValuesKey}},
			want:    "ConfigMap",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := keepValuesSource(tc.current, desired)
			if len(got) != 1 || got[0].Kind != tc.want || got[0].Name != v1alpha1.ValuesName {
				t.Errorf("%s: valuesFrom = %+v, want kind %s (%s)", tc.name, got, tc.want, tc.reason)
			}
			if desired[0].Kind != "ConfigMap" {
				t.Errorf("%s: desired was modified (%s)", tc.name, tc.reason)
			}
		})
	}
}
