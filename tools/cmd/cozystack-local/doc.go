// Command cozystack-local builds and runs a real local Kubernetes control
// plane (etcd, kube-apiserver, kube-controller-manager, Flux helm-controller,
// a CNCF Distribution registry) from the versions pinned in
// sdk/localcp/versions.yaml, as host processes on loopback (package
// cozystack.io/sdk/localcp), and runs the project's main job on it (package
// cozystack.io/tools/internal/mainjob).
//
//	cozystack-local build      build the pinned binaries into .cache/bin
//	cozystack-local up         start the control plane (state in .cache/local)
//	cozystack-local status     show each component's health
//	cozystack-local env        print the shell exports to use it
//	cozystack-local smoke      install a chart through helm-controller and check it
//	cozystack-local cert       issue a serving certificate signed by its CA
//	cozystack-local run        start one more process beside it (cozystack-api, ...)
//	cozystack-local main-job   publish and install the catalogs, then act as a tenant
//	cozystack-local down       stop every process it started
//
// The Makefile drives it (make build, up, demo, down, status).
// docs/contributor/development.md ("The local control plane", "Make
// targets") documents both; the tests
// here check those sections against the commands and the Makefile.
package main
