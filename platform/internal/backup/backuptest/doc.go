// Package backuptest holds what the tests of the backup core share
// (platform/internal/backup and its binder, runbounds, plan and
// restore): one control plane per test binary (Main, Client), polling
// (Eventually), namespaces, the registration a driver's SDK writes
// (RegisterDriver, RenewLease, ApplyDriver), the HelmRelease cozystack-api
// stores for an application (HelmRelease, Application), a manager running
// one reconciler on a fake clock (StartManager, FakeClock) and readers of
// status field managers and conditions.
//
// It is imported only by those packages' _test.go files, never by the
// core itself: it starts control planes and fails tests, and it writes,
// with an admin client, what a driver or cozystack-api would (no driver
// runs in most of these tests).
package backuptest
