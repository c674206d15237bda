// Package drivers answers the core's one question about BackupDriver
// registrations: which live driver serves a strategy kind, or why none
// can (contract k7, "Binding"). It reads registrations and their Leases
// and decides; it writes nothing. The binder and the restore reconciler
// share it.
package drivers
