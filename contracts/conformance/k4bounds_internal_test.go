package conformance

import "testing"

// A pattern bounds a string's length only when anchored at both ends and
// free of unbounded repetition (K4-unbounded).
func TestPatternBounded(t *testing.T) {
	for p, want := range map[string]bool{
		`^[a-z][a-z0-9_]{0,30}$`:              true,
		`^(a|bc)?$`:                           true,
		`^a$|^b$`:                             true,
		`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`:     false,
		`^[0-9]+(s|m|h)$`:                     false,
		`^x{2,}$`:                             false,
		`[a-z]{0,3}`:                          false,
		`^[a-z]{0,3}`:                         false,
		`^a$|b`:                               false,
		`^(?!x)`:                              false,
		`^(\+|-)?(([0-9]+(\.[0-9]*)?))[KMG]$`: false,
	} {
		if got := patternBounded(p); got != want {
			t.Errorf("patternBounded(%q) = %v, want %v", p, got, want)
		}
	}
}
