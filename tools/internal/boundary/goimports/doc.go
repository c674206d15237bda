// Package goimports finds the go-import edges of a tree: imports, in any Go
// file of a module of the tree (tests and files excluded by build tags
// included), of a package that belongs to another module of the tree.
//
// The file list comes from golang.org/x/tools/go/packages, loaded through
// the tree's go.work when it has one (so workspace module paths resolve) or
// module by module otherwise. Only names, files, imports and modules are
// loaded, never types or dependencies: that keeps a whole-repository scan
// to about a second. Line numbers come from go/parser in ImportsOnly mode.
package goimports
