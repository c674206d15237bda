// Package controllermanager is the one shape of the platform's binaries
// that run controller-runtime reconcilers (cozystack-controller,
// cozystack-operator, and those to come): the options and flags they
// share (kubeconfig, client rate limits, leader election, metrics and
// health endpoints, CRD install on a bare cluster), the scheme every
// platform client uses, and the manager built from them with the
// platform's health checks (package health).
//
// A binary embeds Options in its own options, sets its defaults (its Lease
// name, its ports, its rate limits), adds its own flags after
// Options.AddFlags, and calls New with its cache options before setting up
// its reconcilers. Command-line handling (signals, klog's flags, exit
// codes) is package command's.
package controllermanager
