// Package sdk is a canary case.
package sdk

// Root is in the root package.
func Root() {}
