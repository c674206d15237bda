// Package command is how every platform binary (cozystack-api,
// cozystack-controller, cozystack-operator) handles its command line: a
// cobra command with klog's flags (New), a context cancelled on SIGINT and
// SIGTERM, controller-runtime logging through klog, and fixed exit codes
// (Main, Execute): ExitOK (0) when the binary stopped cleanly, ExitError
// (1) on any error (printed as "error: ..." on stderr), ExitUsage (2) on a
// usage error (an unknown flag, a bad flag value, or an argument a binary
// does not take). docs/operator/install.md, "The platform binaries", documents them; a
// test here checks it says the same.
package command
