package status

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxMessage bounds a condition message Write stores (docs/operator/catalogs.md, "Catalog
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

// Shorten returns msg when it fits in MaxMessage bytes. Else it keeps
// msg's first and last "; "-separated parts (the last ones usually say what
// to do, and when the next attempt is), at most half the room for the
// last, and puts "...and N more; see the events of this object for all of
// it" between them; when not even the first part fits, it is cut (at a
// rune) and the count is of bytes.
func Shorten(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	parts := strings.Split(msg, "; ")
	// Room for the longest possible middle.
	room := MaxMessage - len(fmt.Sprintf("; ...and %d more bytes; ", len(msg))) - len(seeEvents)
	size := func(ps []string) int {
		n := 0
		for _, p := range ps {
			n += len(p) + 2
		}
		return n
	}
	tail := 0 // parts kept from the end
	for tail < len(parts)-1 && size(parts[len(parts)-tail-1:]) <= room/2 {
		tail++
	}
	head := 0
	for head < len(parts)-tail && size(parts[:head+1])+size(parts[len(parts)-tail:]) <= room {
		head++
	}
	if head == 0 {
		cut := room - size(parts[len(parts)-tail:])
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		omitted := len(msg) - cut - size(parts[len(parts)-tail:]) + 2
		out := fmt.Sprintf("%s ...and %d more bytes%s", msg[:cut], max(omitted, 0), seeEvents)
		if tail > 0 {
			out += "; " + strings.Join(parts[len(parts)-tail:], "; ")
		}
		return out
	}
	out := strings.Join(parts[:head], "; ") + fmt.Sprintf("; ...and %d more%s", len(parts)-head-tail, seeEvents)
	if tail > 0 {
		out += "; " + strings.Join(parts[len(parts)-tail:], "; ")
	}
	return out
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
