package driver

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

func TestDecideClaim(t *testing.T) {
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	claim := func(holder string, renewedAgo time.Duration) *v1alpha1.Claim {
		return &v1alpha1.Claim{HolderIdentity: holder, RenewTime: metav1.NewMicroTime(now.Add(-renewedAgo)), LeaseDurationSeconds: 60}
	}
	for _, tc := range []struct {
		name  string
		claim *v1alpha1.Claim
		want  claimAction
		wait  time.Duration
	}{
		{"none", nil, claimAcquire, 0},
		{"empty holder", &v1alpha1.Claim{}, claimAcquire, 0},
		{"mine, fresh", claim("me", time.Second), claimHeld, 0},
		{"mine, stale", claim("me", time.Hour), claimHeld, 0},
		{"other, fresh", claim("b", 20*time.Second), claimWait, 40 * time.Second},
		{"other, at expiry", claim("b", 60*time.Second), claimTakeover, 0},
		{"other, stale", claim("b", 61*time.Second), claimTakeover, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, wait := decideClaim(tc.claim, "me", now)
			if got != tc.want || wait != tc.wait {
				t.Errorf("decideClaim = %v, %v; want %v, %v", got, wait, tc.want, tc.wait)
			}
		})
	}
}

func TestNextClaim(t *testing.T) {
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	old := &v1alpha1.Claim{HolderIdentity: "b", AcquireTime: metav1.NewMicroTime(now.Add(-time.Hour)),
		RenewTime: metav1.NewMicroTime(now.Add(-10 * time.Second)), LeaseDurationSeconds: 60, Takeovers: 2}
	for _, tc := range []struct {
		name      string
		action    claimAction
		old       *v1alpha1.Claim
		holder    string
		takeovers int32
		renewed   bool
		write     bool
	}{
		{"acquire", claimAcquire, nil, "me", 0, true, true},
		{"takeover counts", claimTakeover, old, "me", 3, true, true},
		{"held, renewal not due", claimHeld, old, "b", 2, false, false},
		{"held, renewal due", claimHeld, func() *v1alpha1.Claim {
			c := old.DeepCopy()
			c.RenewTime = metav1.NewMicroTime(now.Add(-20 * time.Second))
			return c
		}(), "b", 2, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			me := "me"
			if tc.action == claimHeld {
				me = "b"
			}
			got, write := nextClaim(tc.old, tc.action, me, 60*time.Second, now)
			if got.HolderIdentity != tc.holder || got.Takeovers != tc.takeovers || write != tc.write ||
				got.RenewTime.Time.Equal(now) != tc.renewed || got.LeaseDurationSeconds != 60 {
				t.Errorf("nextClaim = %+v, write %v", got, write)
			}
		})
	}
}

func TestRender(t *testing.T) {
	data := map[string]any{"App": map[string]any{"Name": "db"}}
	for _, tc := range []struct {
		name, text, want, err string
	}{
		{"plain", "backup", "backup", ""},
		{"value", "{{ .App.Name }}-x", "db-x", ""},
		{"unclosed", "{{ .App.Name", "", "unclosed action"},
		{"missing key", "{{ .App.Namespace }}", "", `map has no entry for key "Namespace"`},
		{"missing top key", "{{ .Nope }}", "", `map has no entry for key "Nope"`},
		{"bad function", "{{ env }}", "", `function "env" not defined`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render("spec.args[0]", tc.text, data)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("Render = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			var te *TemplateError
			if !errors.As(err, &te) || te.Field != "spec.args[0]" || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Render error %v; want a *TemplateError naming spec.args[0] and %q", err, tc.err)
			}
		})
	}
}

func TestRenderJSON(t *testing.T) {
	data := map[string]any{"Name": "db"}
	in := &apiextensionsv1.JSON{Raw: []byte(`{"b":{"args":["x","{{ .Name }}"],"n":3},"a":"{{ .Name }}"}`)}
	out, err := RenderJSON("backup", in, data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out.Raw), `{"a":"db","b":{"args":["x","db"],"n":3}}`; got != want {
		t.Errorf("RenderJSON = %s, want %s", got, want)
	}
	// Tenant data fills strings only: YAML or JSON in a value stays a
	// string.
	evil := map[string]any{"Name": "db\"},{\"privileged\":true"}
	out, err = RenderJSON("backup", &apiextensionsv1.JSON{Raw: []byte(`{"a":"{{ .Name }}"}`)}, evil)
	if err != nil || !strings.HasPrefix(string(out.Raw), `{"a":"db\"},{`) {
		t.Errorf("RenderJSON of a hostile value = %s, %v", out.Raw, err)
	}
	for _, tc := range []struct{ doc, field string }{
		{`{"b":{"args":["x","{{ .Name"]}}`, "backup.b.args[1]"},
		{`{"a":"ok","z":"{{ .Missing }}"}`, "backup.z"},
	} {
		_, err := RenderJSON("backup", &apiextensionsv1.JSON{Raw: []byte(tc.doc)}, data)
		var te *TemplateError
		if !errors.As(err, &te) || te.Field != tc.field {
			t.Errorf("RenderJSON(%s) error %v; want a *TemplateError naming %s", tc.doc, err, tc.field)
		}
		if perr := ParseJSON("backup", &apiextensionsv1.JSON{Raw: []byte(tc.doc)}); strings.Contains(tc.doc, "{{ .Name\"") && perr == nil {
			t.Errorf("ParseJSON(%s) = nil, want the parse error", tc.doc)
		}
	}
}

func TestDecodeParameters(t *testing.T) {
	type inner struct {
		Image string `json:"image"`
	}
	type params struct {
		Backup inner `json:"backup"`
		Count  int   `json:"count,omitempty"`
	}
	for _, tc := range []struct {
		name, doc, field, msg string
	}{
		{"valid", `{"backup":{"image":"x"},"count":2}`, "", ""},
		{"nil is empty", ``, "", ""},
		{"unknown top key", `{"backup":{},"retention":"7d"}`, "retention", "unknown key retention"},
		{"unknown nested key", `{"backup":{"image":"x","tag":"1"}}`, "backup.tag", "unknown key backup.tag"},
		{"wrong type", `{"count":"two"}`, "", "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p params
			var in *apiextensionsv1.JSON
			if tc.doc != "" {
				in = &apiextensionsv1.JSON{Raw: []byte(tc.doc)}
			}
			err := DecodeParameters(in, &p)
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *ParameterError
			if !errors.As(err, &pe) || pe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("DecodeParameters error %v; want a *ParameterError on %q with %q", err, tc.field, tc.msg)
			}
		})
	}
}

func TestObjectName(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct{ job, suffix, want string }{
		{"db-1", "backup", "db-1-backup"},
		{"db-1", "", "db-1"},
	} {
		if got := ObjectName(tc.job, tc.suffix); got != tc.want {
			t.Errorf("ObjectName(%q, %q) = %q, want %q", tc.job, tc.suffix, got, tc.want)
		}
	}
	a, b := ObjectName(long, "backup"), ObjectName(long+"b", "backup")
	if len(a) > 63 || len(b) > 63 || a == b || a != ObjectName(long, "backup") {
		t.Errorf("long names %q and %q: want distinct, stable, at most 63", a, b)
	}
}

func TestTerminal(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason string
	}{
		{&TemplateError{Field: "f", Err: errors.New("x")}, v1alpha1.ReasonTemplateError},
		{fmt.Errorf("wrapped: %w", &ParameterError{Field: "k", Message: "unknown key k"}), v1alpha1.ReasonInvalidParameters},
		{&ConflictError{Object: "Job ns/x"}, v1alpha1.ReasonBackendFailed},
		{Fail(v1alpha1.ReasonCapabilityMissing, "no"), v1alpha1.ReasonCapabilityMissing},
		{errors.New("connection refused"), ""},
	} {
		reason, _, ok := terminal(tc.err)
		if reason != tc.reason || ok != (tc.reason != "") {
			t.Errorf("terminal(%v) = %q, %v; want %q", tc.err, reason, ok, tc.reason)
		}
	}
}
