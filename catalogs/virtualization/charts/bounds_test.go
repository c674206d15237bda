package charts_test

import (
	"strings"
	"testing"

	"cozystack.io/sdk/charttest"
)

// A VMInstance with a 1,000,000-character cloudInit (no
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
	charttest.RunRefusals(t, []charttest.Refusal{
		{Name: "cloudInit of 1,000,000 characters", App: "vm-instance", Values: map[string]any{"cloudInit": strings.Repeat("x", 1_000_000)}, Want: []string{"/cloudInit", "maxLength", "65,536"}},
		{Name: "33 SSH keys", App: "vm-instance", Values: map[string]any{"sshKeys": many(33, "ssh-ed25519 AAAA")}, Want: []string{"sshKeys", "32"}},
		{Name: "17 node groups", App: "kubernetes", Values: map[string]any{"nodeGroups": func() map[string]any {
			m := map[string]any{}
			for i := range 17 {
				m[strings.Repeat("g", i+1)] = map[string]any{}
			}
			return m
		}()}, Want: []string{"nodeGroups", "16"}},
	})
}
