package status

import (
	"fmt"
	"strings"
	"testing"
)

// A message a catalog can make long (1,000 conflicts) is stored in at
// most MaxMessage bytes, saying how much is left out and where it is.
func TestShorten(t *testing.T) {
	if got := Shorten("short; message"); got != "short; message" {
		t.Errorf("Shorten kept %q, want the message as it is", got)
	}
	var parts []string
	for i := range 1000 {
		parts = append(parts, fmt.Sprintf("ExternalArtifact cozy-system/big-c%d exists and belongs to someone else", i))
	}
	parts = append(parts, "delete them or rename this PackageSource", "attempt 3 failed, the next in 40s")
	got := Shorten(strings.Join(parts, "; "))
	if len(got) > MaxMessage {
		t.Errorf("Shorten returned %d bytes, want at most %d", len(got), MaxMessage)
	}
	if !strings.HasPrefix(got, parts[0]+"; "+parts[1]) || !strings.Contains(got, " more; see the events of this object") {
		t.Errorf("Shorten = %q, want the first parts, how many more, and where they are", got)
	}
	// The end, which says what to do and when the next attempt is, stays.
	if !strings.HasSuffix(got, "; delete them or rename this PackageSource; attempt 3 failed, the next in 40s") {
		t.Errorf("Shorten = %q, want the last parts kept", got)
	}
	kept := strings.Count(got, "ExternalArtifact cozy-system/") + 2
	if want := fmt.Sprintf("...and %d more;", len(parts)-kept); !strings.Contains(got, want) {
		t.Errorf("Shorten = %q, want %q", got, want)
	}
	// One part too long on its own: cut at a rune, bytes counted.
	long := strings.Repeat("é", 3000) + "; fix it so"
	got = Shorten(long)
	if len(got) > MaxMessage || !strings.Contains(got, "more bytes; see the events") || !strings.HasPrefix(got, "éé") || !strings.HasSuffix(got, "; fix it so") {
		t.Errorf("Shorten of one long part = %d bytes %q", len(got), got[len(got)-80:])
	}
	for i, r := range got {
		if r == '\uFFFD' {
			t.Fatalf("Shorten cut a rune at byte %d", i)
		}
	}
}

// The events carry the whole message, in notes the events API accepts.
func TestEventParts(t *testing.T) {
	if got := eventParts("one"); len(got) != 1 || got[0] != "one" {
		t.Errorf("eventParts(one) = %q", got)
	}
	msg := strings.Repeat("x", 5000)
	got := eventParts(msg)
	var joined string
	for i, n := range got {
		if len(n) > MaxNote {
			t.Errorf("note %d has %d bytes, over %d", i, len(n), MaxNote)
		}
		prefix := fmt.Sprintf("(%d/%d) ", i+1, len(got))
		if !strings.HasPrefix(n, prefix) {
			t.Errorf("note %d = %.20q, want prefix %q", i, n, prefix)
		}
		joined += strings.TrimPrefix(n, prefix)
	}
	if joined != msg {
		t.Errorf("the notes hold %d bytes of the %d", len(joined), len(msg))
	}
	got = eventParts(strings.Repeat("y", 100<<10))
	if len(got) != MaxEventParts || !strings.Contains(got[len(got)-1], "more bytes not recorded") {
		t.Errorf("eventParts of 100 KiB: %d notes, last %q", len(got), got[len(got)-1])
	}
}
