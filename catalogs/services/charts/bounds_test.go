package charts_test

import (
	"fmt"
	"strings"
	"testing"

	"cozystack.io/sdk/charttest"
)

// A 7.6 KB Postgres request with many users and
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
	charttest.RunRefusals(t, []charttest.Refusal{
		{Name: "33 users", App: "postgres", Values: map[string]any{"users": entries(33, map[string]any{})}, Want: []string{"users", "32"}},
		{Name: "33 databases", App: "postgres", Values: map[string]any{"databases": entries(33, map[string]any{})}, Want: []string{"databases", "32"}},
		{Name: "a password of 100,000 characters", App: "postgres", Values: map[string]any{"users": map[string]any{"app": map[string]any{"password": strings.Repeat("p", 100_000)}}}, Want: []string{"password", "256"}},
		{Name: "33 MariaDB users", App: "mariadb", Values: map[string]any{"users": entries(33, map[string]any{})}, Want: []string{"users", "32"}},
	})
}
