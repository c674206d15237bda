package charts_test

import (
	"fmt"
	"strings"
	"testing"

	"cozystack.io/sdk/charttest"
)

// Issue 28, part 4: a 7.6 KB Postgres request with many users and
// databases made 402 objects; the chart's values schema (which the
// ApplicationDefinition's openAPISchema equals) now refuses more than 32
// of each, and an oversized password, naming the field and the bound
// (contract K4, K4-unbounded).
func TestValuesAreBounded(t *testing.T) {
	entries := func(n int, v any) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("u%d", i)] = v
		}
		return m
	}
	for _, tt := range []struct {
		name, app string
		values    map[string]any
		want      []string
	}{
		{"33 users", "postgres", map[string]any{"users": entries(33, map[string]any{})}, []string{"users", "32"}},
		{"33 databases", "postgres", map[string]any{"databases": entries(33, map[string]any{})}, []string{"databases", "32"}},
		{"a password of 100,000 characters", "postgres", map[string]any{"users": map[string]any{"app": map[string]any{"password": strings.Repeat("p", 100_000)}}}, []string{"password", "256"}},
		{"33 MariaDB users", "mariadb", map[string]any{"users": entries(33, map[string]any{})}, []string{"users", "32"}},
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
