// Package memorytest measures the memory of the real cozystack-operator
// binary while it pulls a large catalog artifact: its tests build the
// binary, run it against the local control plane and registry (package
// cozystack.io/sdk/testenv), and read the process's peak resident set
// (VmHWM in /proc/<pid>/status).
//
// It is a package of its own, and not a test of package operator,
// because there an operator runs inside the test process and would
// reconcile the same PackageSources: here the binary is the only
// operator. The package has no code besides its tests.
//
// COZY_MEMORY_CHARTS sets how many charts of 95 MiB of random data the
// artifact holds: 6 by default (the case of a 570 MiB artifact that once
// took the operator to 1.17 GB), 11 with `make bench-memory` (about
// 1 GiB). COZY_MEMORY_OPERATOR runs a binary built elsewhere instead of
// building this revision's, to compare.
package memorytest
