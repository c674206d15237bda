// Package drivercmd is the command line of a backup driver's binary
// (sdk/backup/README.md, "Ship it"): one cobra command with the flags every
// driver takes, klog's flags, and fixed exit codes, so that each driver's
// main is a Spec and a call to Main.
//
// Flags: --kubeconfig (empty: $KUBECONFIG, else the in-cluster
// configuration), --namespace (required; default $POD_NAMESPACE),
// --identity (default $POD_NAME, else the SDK's <hostname>-<random>),
// --name (the BackupDriver's name, a DNS label), --lease-duration and
// --claim-duration (whole seconds, at least 1s; a claim at most 1h),
// --health-probe-bind-address (default "0", none; e.g. ":8081" serves GET
// /healthz, 200 while the process runs, and GET /readyz, 200 while the API
// server answers /version with the driver's identity, else 503; the
// answer is cached 5 s), and the driver's own (Spec.AddFlags). Exit
// status: 0 when the driver stopped on SIGINT or SIGTERM, 1 on an error, 2
// on a usage error (an unknown flag, a bad value, an argument), printed as
// "<name>: <error>".
package drivercmd
