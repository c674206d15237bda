// Package boundary is the boundary linter: it finds every edge between the
// modules of a tree (Go imports, Helm includes, lookups, capability checks,
// chart dependencies and API kinds in templates) and judges each against
// boundaries.yaml at the root, or against an inferred configuration where
// every top-level directory is a module and no edge is allowed.
//
// The pieces: config (the file and the judging), goimports and helm (the
// scanners), replacement (what the contracts offer instead of a forbidden
// lookup or Capabilities check), report (counting and printing), edge (the
// shared type). Command cozystack-boundaries runs it; docs/contributor/boundaries.md ("Module
// boundaries") documents the rules.
package boundary
