package retention

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// Reason names the rule that keeps a Backup: the field of
// v1alpha1.Retention, or one of the two defaults.
type Reason string

// The reasons a Backup is kept, in the order Evaluate reports them.
const (
	ReasonKeepLast    Reason = "keepLast"
	ReasonKeepDaily   Reason = "keepDaily"
	ReasonKeepWeekly  Reason = "keepWeekly"
	ReasonKeepMonthly Reason = "keepMonthly"
	ReasonMinKeep     Reason = "minKeep"
	// ReasonWithinMaxAge: no count rule is set and the Backup is not older
	// than maxAge.
	ReasonWithinMaxAge Reason = "withinMaxAge"
	// ReasonNoPolicy: neither a count rule nor maxAge is set (or the
	// policy is nil): every Backup is kept.
	ReasonNoPolicy Reason = "noPolicy"
)

// DefaultMinKeep is minKeep when the policy leaves it nil (the CRD's
// default).
const DefaultMinKeep = 1

// Backup is one successful Backup as retention sees it: its name and when
// its driver finished taking it (spec.takenAt).
type Backup struct {
	Name    string
	TakenAt time.Time
}

// Kept is a Backup to keep and every rule that keeps it.
type Kept struct {
	Backup
	Reasons []Reason
}

// Result is the decision over a Plan's Backups: Keep and Delete partition
// the input; both are ordered newest first.
type Result struct {
	Keep   []Kept
	Delete []Backup
}

// KeepNames returns the names of the Backups kept, newest first.
func (r Result) KeepNames() []string {
	out := make([]string, len(r.Keep))
	for i, k := range r.Keep {
		out[i] = k.Name
	}
	return out
}

// DeleteNames returns the names of the Backups to delete, newest first.
func (r Result) DeleteNames() []string {
	out := make([]string, len(r.Delete))
	for i, b := range r.Delete {
		out[i] = b.Name
	}
	return out
}

// Evaluate applies policy (nil: no retention, every Backup is kept) to
// backups, in time zone loc (nil means UTC) at time now (maxAge is
// measured from now). It never fails: negative counts count as 0.
func Evaluate(policy *v1alpha1.Retention, loc *time.Location, now time.Time, backups []Backup) Result {
	if loc == nil {
		loc = time.UTC
	}
	sorted := slices.Clone(backups)
	// Newest first; ties by name, greater first.
	slices.SortFunc(sorted, func(a, b Backup) int {
		if c := b.TakenAt.Compare(a.TakenAt); c != 0 {
			return c
		}
		return cmp.Compare(b.Name, a.Name)
	})
	reasons := make([][]Reason, len(sorted))
	if policy == nil {
		for i := range sorted {
			reasons[i] = []Reason{ReasonNoPolicy}
		}
		return result(sorted, reasons)
	}

	type bucketRule struct {
		reason Reason
		count  int
		key    func(t time.Time) string
	}
	rules := []bucketRule{
		// Every Backup is a period of its own.
		{ReasonKeepLast, count(policy.KeepLast), nil},
		{ReasonKeepDaily, count(policy.KeepDaily), func(t time.Time) string { return t.Format("2006-01-02") }},
		{ReasonKeepWeekly, count(policy.KeepWeekly), func(t time.Time) string {
			y, w := t.ISOWeek()
			return fmt.Sprintf("%04d-W%02d", y, w)
		}},
		{ReasonKeepMonthly, count(policy.KeepMonthly), func(t time.Time) string { return t.Format("2006-01") }},
	}
	countRules := false
	for _, r := range rules {
		countRules = countRules || r.count > 0
	}
	for _, r := range rules {
		last := ""
		for i, b := range sorted {
			if r.count <= 0 {
				break
			}
			if r.key == nil {
				reasons[i] = append(reasons[i], r.reason)
				r.count--
				continue
			}
			// Newest first: a key differing from the last one kept is
			// a new, older period, and this is its newest Backup.
			if k := r.key(b.TakenAt.In(loc)); k != last {
				reasons[i] = append(reasons[i], r.reason)
				last = k
				r.count--
			}
		}
	}
	minKeep := DefaultMinKeep
	if policy.MinKeep != nil {
		minKeep = count(policy.MinKeep)
	}
	for i := range sorted {
		if i < minKeep {
			reasons[i] = append(reasons[i], ReasonMinKeep)
		}
		if countRules {
			continue
		}
		switch {
		case policy.MaxAge == nil:
			reasons[i] = append(reasons[i], ReasonNoPolicy)
		case now.Sub(sorted[i].TakenAt) <= policy.MaxAge.Duration:
			reasons[i] = append(reasons[i], ReasonWithinMaxAge)
		}
	}
	return result(sorted, reasons)
}

func result(sorted []Backup, reasons [][]Reason) Result {
	var r Result
	for i, b := range sorted {
		if len(reasons[i]) > 0 {
			r.Keep = append(r.Keep, Kept{Backup: b, Reasons: reasons[i]})
		} else {
			r.Delete = append(r.Delete, b)
		}
	}
	return r
}

func count(p *int32) int {
	if p == nil || *p < 0 {
		return 0
	}
	return int(*p)
}
