package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// MaxJobNameLength bounds the names JobName returns, so a job's name fits
// a label value (63 characters).
const MaxJobNameLength = 63

// JobName is the name of the BackupJob that Plan plan starts for its run
// scheduled at scheduled: "<plan>-<minutes since the Unix epoch>", as
// batch/v1 CronJob names its Jobs. The name is the lock that keeps a
// restart, or a second instance, from creating a second job for one
// scheduled time. A plan name too long for MaxJobNameLength is cut and
// followed by 8 hex digits of its SHA-256, so two long names never share
// jobs.
func JobName(plan string, scheduled time.Time) string {
	suffix := "-" + strconv.FormatInt(scheduled.Unix()/60, 10)
	if len(plan)+len(suffix) <= MaxJobNameLength {
		return plan + suffix
	}
	sum := sha256.Sum256([]byte(plan))
	hash := "-" + hex.EncodeToString(sum[:])[:8]
	prefix := strings.TrimRight(plan[:MaxJobNameLength-len(suffix)-len(hash)], "-.")
	return prefix + hash + suffix
}
