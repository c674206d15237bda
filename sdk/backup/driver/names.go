package driver

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxNameLength is the longest name derived for a backend object: a DNS
// label, so the name is also a valid label value (batch Jobs label their
// pods with it).
const maxNameLength = 63

// ObjectName derives the name of a backend object from the job's name and
// a suffix naming the object's role (e.g. "backup"): "<job>-<suffix>",
// shortened to 63 characters with a hash of the full name when longer, so
// two jobs never derive one name and the same job always derives the same
// one (contract k7, "Idempotency").
func ObjectName(job, suffix string) string {
	full := job + "-" + suffix
	if suffix == "" {
		full = job
	}
	if len(full) <= maxNameLength {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	h := hex.EncodeToString(sum[:])[:10]
	keep := maxNameLength - len(h) - 1
	prefix := full[:keep]
	for len(prefix) > 0 && (prefix[len(prefix)-1] == '-' || prefix[len(prefix)-1] == '.') {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + "-" + h
}
