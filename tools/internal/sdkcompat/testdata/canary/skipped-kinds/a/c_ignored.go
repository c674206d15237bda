//go:build ignore

package a

// Ignored is excluded by its build constraint.
func Ignored() {}
