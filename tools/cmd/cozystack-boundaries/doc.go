// Command cozystack-boundaries is the boundary linter: it lists every edge
// between the modules of a tree (Go imports, Helm includes, lookups,
// capability checks, chart dependencies, API kinds in templates), judges
// each against boundaries.yaml at the root, and fails on a forbidden one.
//
//	cozystack-boundaries                         lint the current directory
//	cozystack-boundaries --root dir -o json      any tree; without boundaries.yaml
//	                                             every top-level directory is a module
//
// Exit status: 0 when no edge is forbidden, 1 when one is, 2 on a usage or
// configuration error (a module path that matches nothing in the tree among
// them), and 3 when the tree cannot be read. The linter is package
// cozystack.io/tools/internal/boundary; docs/contributor/boundaries.md ("Module boundaries")
// documents its rules, and a test here checks that section against it.
package main
