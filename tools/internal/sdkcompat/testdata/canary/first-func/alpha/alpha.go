// Package alpha is a canary case.
package alpha

import "strings"

// Version is kept.
const Version = "1"

// Upper returns s in upper case.
// It is the first exported function.
func Upper(s string) string {
	return strings.ToUpper(s)
}

// Lower returns s in lower case.
func Lower(s string) string { return strings.ToLower(s) }
