package valuesschema

import "testing"

func TestIsPlatformKey(t *testing.T) {
	for _, tc := range []struct {
		key    string
		want   bool
		reason string
	}{
		{key: "_cluster", want: true, reason: "an injected value"},
		{key: "_", want: true, reason: "the bare prefix is the platform's too"},
		{key: "replicas", want: false, reason: "a tenant's key"},
		{key: "a_b", want: false, reason: "only a leading underscore counts"},
		{key: "", want: false, reason: "the empty key is no platform key"},
	} {
		if got := IsPlatformKey(tc.key); got != tc.want {
			t.Errorf("IsPlatformKey(%q) = %v, want %v (%s)", tc.key, got, tc.want, tc.reason)
		}
	}
}
