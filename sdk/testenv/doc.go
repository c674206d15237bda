// Package testenv starts a real local control plane (package localcp) for
// integration and end-to-end tests: etcd, kube-apiserver and
// kube-controller-manager always; helm-controller and the OCI registry on
// demand (Options). Processes are children of the test binary and die with
// it; KEEP_TESTENV=1 keeps their state directory and logs.
//
// The binaries must be built first (`make build`); a missing binary fails the
// test with that instruction rather than skipping it. Under -short, Main
// starts nothing and Need skips the tests that need the control plane.
//
// Share one control plane per package from TestMain (docs/contributor/development.md, "In
// tests"):
//
//	var env *testenv.Env
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }
package testenv
