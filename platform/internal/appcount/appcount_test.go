package appcount

import (
	"fmt"
	"testing"
)

func TestDescribe(t *testing.T) {
	many := map[string]int{}
	for i := range 12 {
		many[fmt.Sprintf("ns%02d", i)] = 1
	}
	for _, tc := range []struct {
		in   map[string]int
		want string
	}{
		{map[string]int{"tenant-a": 1}, "1 application in 1 namespace (tenant-a: 1)"},
		{map[string]int{"tenant-b": 1, "tenant-a": 2}, "3 applications in 2 namespaces (tenant-a: 2, tenant-b: 1)"},
		{many, "12 applications in 12 namespaces (ns00: 1, ns01: 1, ns02: 1, ns03: 1, ns04: 1, ns05: 1, ns06: 1, ns07: 1, ns08: 1, ns09: 1, and 2 more)"},
	} {
		if got := Describe(tc.in); got != tc.want {
			t.Errorf("Describe(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
