// Package install prepares a bare cluster (such as the local control
// plane) for the platform's binaries when they run with --install-crds:
// CRDs applies the CRDs of cozystack.io/contracts (contracts/crds) and
// creates the namespace a binary needs (its leader-election Lease's). A
// platform install ships both instead.
package install
