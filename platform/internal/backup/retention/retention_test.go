package retention

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// daily returns n Backups, one a day at hh:00 UTC from start, named
// db-YYYYMMDD (the UTC date).
func daily(start time.Time, n, every int, hh int) []Backup {
	var out []Backup
	for i := 0; i < n; i++ {
		t := start.AddDate(0, 0, i*every).Add(time.Duration(hh) * time.Hour)
		out = append(out, Backup{Name: "db-" + t.UTC().Format("20060102"), TakenAt: t})
	}
	return out
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// forty is the acceptance input: 40 Backups, one a day at 03:00 UTC, from
// Thursday 2026-01-01 to Monday 2026-02-09.
var forty = daily(day("2026-01-01"), 40, 1, 3)

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// render is the golden text of a result: one line per Backup, newest
// first, with the time in loc.
func render(r Result, loc *time.Location) string {
	type line struct {
		t    time.Time
		name string
		text string
	}
	var lines []line
	for _, k := range r.Keep {
		rs := make([]string, len(k.Reasons))
		for i, x := range k.Reasons {
			rs[i] = string(x)
		}
		lines = append(lines, line{k.TakenAt, k.Name, fmt.Sprintf("keep   %s %s %s (%s)", k.Name,
			k.TakenAt.In(loc).Format("2006-01-02T15:04Z07:00 Mon"), isoWeek(k.TakenAt.In(loc)), strings.Join(rs, ","))})
	}
	for _, b := range r.Delete {
		lines = append(lines, line{b.TakenAt, b.Name, fmt.Sprintf("delete %s %s %s", b.Name,
			b.TakenAt.In(loc).Format("2006-01-02T15:04Z07:00 Mon"), isoWeek(b.TakenAt.In(loc)))})
	}
	// Newest first, as Evaluate orders each list.
	for i := 1; i < len(lines); i++ {
		for j := i; j > 0 && (lines[j].t.After(lines[j-1].t) || lines[j].t.Equal(lines[j-1].t) && lines[j].name > lines[j-1].name); j-- {
			lines[j], lines[j-1] = lines[j-1], lines[j]
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# keep %d, delete %d\n", len(r.Keep), len(r.Delete))
	for _, l := range lines {
		b.WriteString(l.text + "\n")
	}
	return b.String()
}

func isoWeek(t time.Time) string {
	y, w := t.ISOWeek()
	return fmt.Sprintf("%04d-W%02d", y, w)
}

func TestEvaluate(t *testing.T) {
	feb9noon := at("2026-02-09T12:00:00Z")
	ny := mustLoad("America/New_York")
	for _, tc := range []struct {
		name    string
		policy  *v1alpha1.Retention
		loc     *time.Location
		now     time.Time
		backups []Backup
		// keep, when set, is the hand-computed set of names kept (the
		// golden file holds the whole result).
		keep []string
	}{{
		// The acceptance row. Backups are one a day at 03:00 UTC from
		// Thu 2026-01-01 to Mon 2026-02-09 (40 days: 31 in January, 9
		// in February). keepDaily 7: the newest of each of the last 7
		// days, Feb 9, 8, 7, 6, 5, 4, 3. keepWeekly 4, ISO weeks (Mon-Sun):
		// W07 (Feb 9-15) newest Feb 9; W06 (Feb 2-8) newest Feb 8; W05
		// (Jan 26-Feb 1) newest Feb 1; W04 (Jan 19-25) newest Jan 25.
		// minKeep (default 1): Feb 9. Kept: Feb 3..9 and Feb 1, Jan 25,
		// 9 in all; the other 31 (Jan 1-24, Jan 26-31, Feb 2) are
		// deleted: Feb 2, the Monday of W06, is neither among the last
		// 7 days nor the newest of its week.
		name:    "acceptance-40-daily-keepDaily7-keepWeekly4",
		policy:  &v1alpha1.Retention{KeepDaily: ptr.To[int32](7), KeepWeekly: ptr.To[int32](4)},
		loc:     time.UTC,
		now:     feb9noon,
		backups: forty,
		keep: []string{"db-20260209", "db-20260208", "db-20260207", "db-20260206", "db-20260205",
			"db-20260204", "db-20260203", "db-20260201", "db-20260125"},
	}, {
		// The same Backups in New York (UTC-5 in winter): 03:00 UTC is
		// 22:00 the day before, so every Backup moves to the previous
		// local day. Daily: local Feb 8..2 = db-20260209..db-20260203.
		// Weekly: W06 (local Feb 2-8) newest local Feb 8 (db-20260209);
		// W05 (Jan 26-Feb 1) local Feb 1 (db-20260202); W04 local Jan 25
		// (db-20260126); W03 local Jan 18 (db-20260119). 10 kept.
		name:    "acceptance-40-daily-new-york",
		policy:  &v1alpha1.Retention{KeepDaily: ptr.To[int32](7), KeepWeekly: ptr.To[int32](4)},
		loc:     ny,
		now:     feb9noon,
		backups: forty,
		keep: []string{"db-20260209", "db-20260208", "db-20260207", "db-20260206", "db-20260205",
			"db-20260204", "db-20260203", "db-20260202", "db-20260126", "db-20260119"},
	}, {
		name:    "no-policy-keeps-all",
		policy:  nil,
		loc:     time.UTC,
		now:     feb9noon,
		backups: daily(day("2026-02-01"), 3, 1, 3),
		keep:    []string{"db-20260203", "db-20260202", "db-20260201"},
	}, {
		// No count rule, no maxAge: nothing deletes.
		name:    "empty-policy-keeps-all",
		policy:  &v1alpha1.Retention{},
		loc:     time.UTC,
		now:     feb9noon,
		backups: daily(day("2026-02-01"), 3, 1, 3),
		keep:    []string{"db-20260203", "db-20260202", "db-20260201"},
	}, {
		// maxAge 240h at Feb 9 12:00: Jan 31 03:00 is 9d9h old (kept),
		// Jan 30 03:00 is 10d9h old (deleted). 10 kept.
		name:    "maxAge-only",
		policy:  &v1alpha1.Retention{MaxAge: &metav1.Duration{Duration: 240 * time.Hour}},
		loc:     time.UTC,
		now:     feb9noon,
		backups: forty,
		keep: []string{"db-20260209", "db-20260208", "db-20260207", "db-20260206", "db-20260205",
			"db-20260204", "db-20260203", "db-20260202", "db-20260201", "db-20260131"},
	}, {
		// Every Backup is older than maxAge: minKeep keeps the newest 3.
		name:    "maxAge-all-old-minKeep3",
		policy:  &v1alpha1.Retention{MaxAge: &metav1.Duration{Duration: time.Hour}, MinKeep: ptr.To[int32](3)},
		loc:     time.UTC,
		now:     at("2026-06-01T00:00:00Z"),
		backups: daily(day("2026-02-01"), 5, 1, 3),
		keep:    []string{"db-20260205", "db-20260204", "db-20260203"},
	}, {
		// minKeep 0 and every Backup older than maxAge: all go.
		name:    "maxAge-all-old-minKeep0",
		policy:  &v1alpha1.Retention{MaxAge: &metav1.Duration{Duration: time.Hour}, MinKeep: ptr.To[int32](0)},
		loc:     time.UTC,
		now:     at("2026-06-01T00:00:00Z"),
		backups: daily(day("2026-02-01"), 3, 1, 3),
		keep:    nil,
	}, {
		// With a count rule, maxAge keeps nothing more: keepLast 2 alone
		// decides, though Feb 3 is younger than maxAge.
		name:    "keepLast-with-maxAge",
		policy:  &v1alpha1.Retention{KeepLast: ptr.To[int32](2), MaxAge: &metav1.Duration{Duration: 30 * 24 * time.Hour}},
		loc:     time.UTC,
		now:     feb9noon,
		backups: daily(day("2026-02-01"), 5, 1, 3),
		keep:    []string{"db-20260205", "db-20260204"},
	}, {
		// keepLast 3: Feb 9, 8, 7. keepMonthly 2: Feb (Feb 9), Jan (Jan 31).
		name:    "keepLast3-keepMonthly2",
		policy:  &v1alpha1.Retention{KeepLast: ptr.To[int32](3), KeepMonthly: ptr.To[int32](2)},
		loc:     time.UTC,
		now:     feb9noon,
		backups: forty,
		keep:    []string{"db-20260209", "db-20260208", "db-20260207", "db-20260131"},
	}, {
		// One Backup every third day: keepDaily 3 keeps the last 3 days
		// that have one (Feb 7, Feb 4, Feb 1), not the last 3 calendar
		// days.
		name:    "keepDaily-counts-days-with-a-backup",
		policy:  &v1alpha1.Retention{KeepDaily: ptr.To[int32](3)},
		loc:     time.UTC,
		now:     feb9noon,
		backups: daily(day("2026-01-26"), 5, 3, 3),
		keep:    []string{"db-20260207", "db-20260204", "db-20260201"},
	}, {
		// Three Backups a day: keepDaily 2 keeps the newest of each of
		// the last two days; equal takenAt is broken by name.
		name:   "keepDaily-several-a-day",
		policy: &v1alpha1.Retention{KeepDaily: ptr.To[int32](2), MinKeep: ptr.To[int32](0)},
		loc:    time.UTC,
		now:    feb9noon,
		backups: []Backup{
			{"a-0201-morning", at("2026-02-01T06:00:00Z")}, {"a-0201-evening", at("2026-02-01T18:00:00Z")},
			{"a-0202-morning", at("2026-02-02T06:00:00Z")}, {"a-0202-evening-1", at("2026-02-02T18:00:00Z")},
			{"a-0202-evening-2", at("2026-02-02T18:00:00Z")}, {"a-0131-evening", at("2026-01-31T18:00:00Z")},
		},
		keep: []string{"a-0202-evening-2", "a-0201-evening"},
	}, {
		// ISO weeks across a year: Mon 2025-12-29 .. Sun 2026-01-04 is
		// 2026-W01; Sun 2025-12-28 is 2025-W52; Mon 2026-01-05 is W02.
		// keepWeekly 3: Jan 5 (W02), Jan 1 (newest of W01), Dec 28 (W52);
		// Dec 29 is deleted.
		name:   "keepWeekly-iso-year-boundary",
		policy: &v1alpha1.Retention{KeepWeekly: ptr.To[int32](3), MinKeep: ptr.To[int32](0)},
		loc:    time.UTC,
		now:    feb9noon,
		backups: []Backup{
			{"db-20251228", at("2025-12-28T03:00:00Z")}, {"db-20251229", at("2025-12-29T03:00:00Z")},
			{"db-20260101", at("2026-01-01T03:00:00Z")}, {"db-20260105", at("2026-01-05T03:00:00Z")},
		},
		keep: []string{"db-20260105", "db-20260101", "db-20251228"},
	}, {
		name:    "no-backups",
		policy:  &v1alpha1.Retention{KeepDaily: ptr.To[int32](7)},
		loc:     time.UTC,
		now:     feb9noon,
		backups: nil,
		keep:    nil,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Evaluate(tc.policy, tc.loc, tc.now, tc.backups)
			if len(got.Keep)+len(got.Delete) != len(tc.backups) {
				t.Fatalf("keep %d + delete %d != %d Backups", len(got.Keep), len(got.Delete), len(tc.backups))
			}
			var keep []string
			if len(got.Keep) > 0 {
				keep = got.KeepNames()
			}
			if diff := cmp.Diff(tc.keep, keep); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			// The input order never matters.
			shuffled := append([]Backup(nil), tc.backups...)
			rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if diff := cmp.Diff(got, Evaluate(tc.policy, tc.loc, tc.now, shuffled)); diff != "" {
				t.Errorf("result depends on input order (-sorted +shuffled):\n%s", diff)
			}
			golden(t, filepath.Join("testdata", tc.name+".golden"), render(got, tc.loc))
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
