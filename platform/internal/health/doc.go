// Package health registers the health checks every controller-runtime
// manager of the platform (cozystack-controller, cozystack-operator) serves
// on its health-probe address: AddChecks (/healthz and /readyz, which
// `make demo` probes through `cozystack-local run --health`).
package health
