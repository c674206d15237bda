// Package retention decides which of a Plan's Backups its retention policy
// keeps and which it deletes, and applies that decision (contract k7,
// "Retention", contracts/schemas/v1alpha1/k7-backup-driver.md; the policy
// is v1alpha1.Retention in sdk/backup/api/v1alpha1/plan_types.go). The
// decision is a pure function, Evaluate: no clock, no API, so the rules
// are tested by tables (retention_test.go, golden files under testdata/).
// Apply, which the Plan reconciler (plan) calls on every pass, lists the
// Plan's ready Backups, deletes those Evaluate does not keep whose driver
// reclaims their data, and returns the Plan's Retention condition; its
// envtest tests are the plan package's (TestRetention,
// TestRetentionCountsOnlyThePlansJobs), which run it through the
// reconciler.
//
// The rules follow restic's `forget`:
//
//   - keepLast n keeps the newest n Backups;
//   - keepDaily, keepWeekly and keepMonthly n keep the newest Backup of
//     each of the last n days, ISO 8601 weeks (Monday to Sunday, numbered
//     by time.Time.ISOWeek) and months that have a Backup; periods with no
//     Backup do not count; days, weeks and months are those of the given
//     time zone (the Plan's spec.schedule.timeZone);
//   - minKeep n keeps the newest n whatever the other rules say (nil means
//     1, the CRD's default; 0 keeps no floor);
//   - maxAge deletes every Backup older than maxAge (now - takenAt >
//     maxAge) unless one of the rules above keeps it.
//
// A Backup is kept when any rule keeps it, and Evaluate reports every rule
// that does. When none of keepLast, keepDaily, keepWeekly and keepMonthly
// is set (nil or 0), nothing is deleted for want of a keep rule: every
// Backup younger than maxAge is kept (ReasonWithinMaxAge), and with no
// maxAge either every Backup is kept (ReasonNoPolicy), as with no policy
// at all. With a count rule set, maxAge deletes nothing more than the
// count rules already do: it is the only deleting rule when no count rule
// is set.
//
// Ties in takenAt are broken by name (the greater name counts as newer),
// so the result never depends on the input order.
package retention
