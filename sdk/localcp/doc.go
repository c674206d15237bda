// Package localcp builds and runs a real, local Kubernetes control plane from
// pinned Go modules: etcd, kube-apiserver, kube-controller-manager, the Flux
// helm-controller and a CNCF Distribution registry, all host processes bound to
// loopback. No container runtime is needed, and none runs pods.
//
// The versions are pinned in versions.yaml (embedded; see Pins). Build compiles
// them into a cache directory (Layout); Start runs them, either detached (the
// cozystack-local CLI) or as children of a test binary (package testenv), on
// DefaultPorts or free ones, and records a State; Status, Down and RunAside
// act on a running one. docs/contributor/development.md ("The local control plane") describes what
// runs and why.
package localcp
