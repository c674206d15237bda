package bodydepth_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"cozystack.io/platform/internal/apiserver/bodydepth"
)

func nested(depth int) string {
	return `{"spec":` + strings.Repeat(`{"a":`, depth-2) + `1` + strings.Repeat(`}`, depth-2) + `}`
}

func TestDepth(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want int
	}{
		{"empty", ``, 0},
		{"scalar", `1`, 0},
		{"object", `{}`, 1},
		{"array in object", `{"a":[1,2,{"b":[]}]}`, 4},
		{"brackets in strings", `{"a":"{{{[[[\"}}}"}`, 1},
		{"escaped backslash before quote", `{"a":"\\","b":{"c":{}}}`, 3},
		{"nested 50", nested(50), 49},
		{"unbalanced", `{{{`, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bodydepth.Depth([]byte(tc.body), 1000); got != tc.want {
				t.Errorf("Depth = %d, want %d", got, tc.want)
			}
		})
	}
	if got := bodydepth.Depth([]byte(nested(10000)), 100); got != 101 {
		t.Errorf("Depth stops at max+1: got %d", got)
	}
}

func TestCheck(t *testing.T) {
	deepYAML := strings.Repeat("  ", 0)
	for i := 0; i < 150; i++ {
		deepYAML += strings.Repeat("  ", i) + "a:\n"
	}
	deepYAML += strings.Repeat("  ", 150) + "b: 1\n"
	for _, tc := range []struct {
		name, contentType, body string
		refused                 bool
	}{
		{"shallow JSON", "application/json", nested(20), false},
		{"at the limit", "application/json", nested(bodydepth.MaxDepth + 1), false},
		{"one past the limit", "application/json", nested(bodydepth.MaxDepth + 2), true},
		{"deep merge patch", "application/merge-patch+json", nested(5000), true},
		{"deep JSON patch", "application/json-patch+json", `[{"op":"add","path":"/spec/a","value":` + nested(5000) + `}]`, true},
		{"deep apply patch as JSON", "application/apply-patch+yaml", nested(5000), true},
		{"deep block YAML", "application/apply-patch+yaml; charset=utf-8", deepYAML, true},
		{"shallow block YAML", "application/yaml", "spec:\n  a:\n    b: 1\n", false},
		{"bad YAML left to the decoder", "application/yaml", "a: [", false},
		{"protobuf passes", "application/vnd.kubernetes.protobuf", nested(5000), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := bodydepth.Check([]byte(tc.body), tc.contentType, bodydepth.MaxDepth)
			if tc.refused != (err != nil) {
				t.Fatalf("Check = %v, refused want %v", err, tc.refused)
			}
			if err != nil && !apierrors.IsBadRequest(err) {
				t.Errorf("want 400 Bad Request, got %v", err)
			}
			if err != nil && !strings.Contains(err.Error(), "100 levels") {
				t.Errorf("message does not name the limit: %v", err)
			}
		})
	}
}
