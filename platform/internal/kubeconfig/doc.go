// Package kubeconfig loads the client configuration of the platform's
// controller-runtime binaries (cozystack-controller, cozystack-operator):
// Load, from --kubeconfig, or found as controller-runtime finds it
// ($KUBECONFIG, in-cluster), with the binary's rate limits.
package kubeconfig
