package status

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxMessage bounds a condition message Write stores (README.md, "Catalog
// delivery", "What a third-party catalog gets"): a message built from what
// a catalog declares (its conflicts, its definitions) could otherwise
// grow past the API's 32 KiB limit on a condition message, and the status
// write that should say why would fail instead. The whole message goes to
// events (eventParts).
const MaxMessage = 1024

// MaxNote is the most an event's note holds (events.k8s.io/v1 refuses a
// longer one); MaxEventParts bounds the events one message becomes.
const (
	MaxNote       = 1024
	MaxEventParts = 32
)

// seeEvents ends a shortened message.
const seeEvents = "; see the events of this object for all of it"

// Shorten returns msg when it fits in MaxMessage bytes, else its first
// "; "-separated parts that fit, followed by "...and N more" (parts, or
// bytes when the first part alone is too long) and seeEvents.
func Shorten(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	parts := strings.Split(msg, "; ")
	// Room for the longest possible tail.
	room := MaxMessage - len(fmt.Sprintf("; ...and %d more bytes", len(msg))) - len(seeEvents)
	var b strings.Builder
	n := 0
	for _, p := range parts {
		add := len(p)
		if n > 0 {
			add += 2
		}
		if b.Len()+add > room {
			break
		}
		if n > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p)
		n++
	}
	if n == 0 {
		cut := room
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		return fmt.Sprintf("%s ...and %d more bytes%s", msg[:cut], len(msg)-cut, seeEvents)
	}
	return fmt.Sprintf("%s; ...and %d more%s", b.String(), len(parts)-n, seeEvents)
}

// eventParts splits msg into event notes of at most MaxNote bytes each,
// numbered "(i/n) " when there are several, at most MaxEventParts (the
// last says how many bytes did not fit).
func eventParts(msg string) []string {
	if len(msg) <= MaxNote {
		return []string{msg}
	}
	const prefix = len("(32/32) ")
	var chunks []string
	for rest := msg; rest != ""; {
		cut := min(len(rest), MaxNote-prefix)
		for cut < len(rest) && cut > 0 && !utf8.RuneStart(rest[cut]) {
			cut--
		}
		chunks = append(chunks, rest[:cut])
		rest = rest[cut:]
	}
	if len(chunks) > MaxEventParts {
		dropped := 0
		for _, c := range chunks[MaxEventParts-1:] {
			dropped += len(c)
		}
		chunks = append(chunks[:MaxEventParts-1], fmt.Sprintf("...and %d more bytes not recorded", dropped))
	}
	for i := range chunks {
		chunks[i] = fmt.Sprintf("(%d/%d) %s", i+1, len(chunks), chunks[i])
	}
	return chunks
}
