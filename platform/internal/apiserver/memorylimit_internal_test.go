package apiserver

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

func TestApplyMemoryLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	if got := NewOptions().MemoryLimit; got != DefaultMemoryLimit {
		t.Errorf("default %q, want %q", got, DefaultMemoryLimit)
	}
	for _, tc := range []struct {
		limit   string
		want    int64 // the runtime's limit after the call
		wantErr string
	}{
		{limit: "128Mi", want: 128 << 20},
		{limit: "0", want: math.MaxInt64},
		{limit: "64Mi", want: 64 << 20},
		{limit: "lots", want: 64 << 20, wantErr: `--memory-limit "lots"`}, // refused: unchanged
	} {
		err := (&Options{MemoryLimit: tc.limit}).ApplyMemoryLimit()
		if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: error %v, want one containing %q", tc.limit, err, tc.wantErr)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("%s: memory limit %d, want %d", tc.limit, got, tc.want)
		}
	}
}
