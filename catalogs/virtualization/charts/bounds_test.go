package charts_test

import (
	"strings"
	"testing"

	"cozystack.io/sdk/charttest"
)

// Issue 28, part 4: a VMInstance with a 1,000,000-character cloudInit (no
// maxLength then: 25 MB of etcd through five BackupJobs) and the other
// oversized requests are refused by the chart's values schema, which the
// ApplicationDefinition's openAPISchema equals (K1-chart-schema), naming
// the field and the bound (contract K4, K4-unbounded).
func TestValuesAreBounded(t *testing.T) {
	many := func(n int, item any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = item
		}
		return out
	}
	for _, tt := range []struct {
		name, app string
		values    map[string]any
		want      []string
	}{
		{"cloudInit of 1,000,000 characters", "vm-instance", map[string]any{"cloudInit": strings.Repeat("x", 1_000_000)}, []string{"/cloudInit", "maxLength", "65,536"}},
		{"33 SSH keys", "vm-instance", map[string]any{"sshKeys": many(33, "ssh-ed25519 AAAA")}, []string{"sshKeys", "32"}},
		{"17 node groups", "kubernetes", map[string]any{"nodeGroups": func() map[string]any {
			m := map[string]any{}
			for i := range 17 {
				m[strings.Repeat("g", i+1)] = map[string]any{}
			}
			return m
		}()}, []string{"nodeGroups", "16"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := charttest.Load(tt.app)
			if err != nil {
				t.Fatal(err)
			}
			_, err = charttest.Render(ch, tt.app+"-big", charttest.WithK2(tt.values))
			if err == nil {
				t.Fatalf("%s rendered; want its values schema to refuse it", tt.name)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}
