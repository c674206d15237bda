// Package apply writes the status of backups.cozystack.io objects by
// server-side apply, the way contract k7 ("Field managers") requires: each
// writer applies, under its own field manager, exactly the fields it owns,
// every time. A field a writer stops sending is removed, so a writer always
// sends its whole intent (e.g. the core resends status.binding).
package apply
