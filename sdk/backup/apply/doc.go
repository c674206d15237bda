// Package apply writes the status of backups.cozystack.io objects by
// server-side apply, the way contract k7 ("Field managers") requires: each
// writer applies, under its own field manager, exactly the fields it owns,
// every time. A field a writer stops sending is removed, so a writer always
// sends its whole intent (e.g. the core resends status.binding).
//
// Conditions is the one way every writer of these kinds (the core's
// reconcilers and the drivers) computes the conditions it sends: Owned
// reads its share of what the object holds, Condition builds each
// condition of this pass, and Conditions gives them their
// lastTransitionTime (kept while the status stays,
// apimeta.SetStatusCondition's rule). The platform's reconcilers that own
// the whole status of what they reconcile use
// platform/internal/status instead (fluxcd/pkg/runtime).
package apply
