package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func mustSchedule(t *testing.T, expr, zone string) schedule {
	t.Helper()
	s, err := parseSchedule(v1alpha1.Schedule{Cron: expr, TimeZone: zone}, mustTime("2026-03-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestParseSchedule: every refusal names the field to fix.
func TestParseSchedule(t *testing.T) {
	for _, tc := range []struct {
		cron, zone string
		// field is the field named in the error; empty means valid.
		field, detail string
	}{
		{cron: "*/5 * * * *"},
		{cron: "0 3 * * 1-5", zone: "Europe/Berlin"},
		{cron: "@daily", zone: "America/New_York"},
		{cron: "@every 90m"},
		{cron: "0 3 * * *", zone: "Mars/Olympus", field: "spec.schedule.timeZone", detail: "IANA"},
		{cron: "0 3 * * *", zone: "Local", field: "spec.schedule.timeZone", detail: "IANA"},
		{cron: "61 * * * *", field: "spec.schedule.cron", detail: "five-field"},
		{cron: "* * *", field: "spec.schedule.cron", detail: "five-field"},
		{cron: "@fortnightly", field: "spec.schedule.cron", detail: "descriptor"},
		{cron: "TZ=UTC 0 3 * * *", field: "spec.schedule.cron", detail: "spec.schedule.timeZone"},
		{cron: "@every 30s", field: "spec.schedule.cron", detail: "at least 1m"},
		{cron: "0 0 31 2 *", field: "spec.schedule.cron", detail: "never comes due"},
	} {
		_, err := parseSchedule(v1alpha1.Schedule{Cron: tc.cron, TimeZone: tc.zone}, mustTime("2026-03-01T00:00:00Z"))
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%q in %q: %v", tc.cron, tc.zone, err)
		case tc.field != "" && err == nil:
			t.Errorf("%q in %q: accepted, want an error on %s", tc.cron, tc.zone, tc.field)
		case tc.field != "" && (err.Field != tc.field || !strings.Contains(err.Error(), tc.detail)):
			t.Errorf("%q in %q: %v; want field %s and %q", tc.cron, tc.zone, err, tc.field, tc.detail)
		}
	}
}

func TestJobName(t *testing.T) {
	at := mustTime("2026-02-09T03:00:00Z")
	if got, want := JobName("db", at), "db-29510100"; got != want {
		t.Errorf("JobName = %q, want %q", got, want)
	}
	long1 := strings.Repeat("a", 60) + "-one"
	long2 := strings.Repeat("a", 60) + "-two"
	n1, n2 := JobName(long1, at), JobName(long2, at)
	if len(n1) > MaxJobNameLength || len(n2) > MaxJobNameLength {
		t.Errorf("names longer than %d: %q (%d), %q (%d)", MaxJobNameLength, n1, len(n1), n2, len(n2))
	}
	if n1 == n2 {
		t.Errorf("two long plan names share job name %q", n1)
	}
	if n1 != JobName(long1, at.Add(30*time.Second)) {
		t.Errorf("the name changes within one minute")
	}
	if n1 == JobName(long1, at.Add(time.Minute)) {
		t.Errorf("two minutes share a name")
	}
	dotted := JobName(strings.Repeat("b", 40)+"."+strings.Repeat("c", 30), at)
	if strings.Contains(dotted, ".-") || strings.Contains(dotted, "--") {
		t.Errorf("cut name %q leaves a separator at the cut", dotted)
	}
}

func TestDecide(t *testing.T) {
	created := mustTime("2026-03-01T09:59:30Z")
	for _, tc := range []struct {
		name     string
		cron     string
		zone     string
		now      string
		earliest time.Time
		deadline time.Duration
		suspend  bool
		policy   v1alpha1.ConcurrencyPolicy
		active   []string
		existing []string
		// want
		scheduled string
		start     bool
		cancel    []string
		skipped   *v1alpha1.SkippedRun
		// message holds these substrings.
		message []string
		next    string
	}{{
		name: "nothing-due-yet", cron: "* * * * *", now: "2026-03-01T09:59:50Z", earliest: created,
		next: "2026-03-01T10:00:00Z",
	}, {
		name: "due-starts", cron: "* * * * *", now: "2026-03-01T10:00:05Z", earliest: created,
		scheduled: "2026-03-01T10:00:00Z", start: true, next: "2026-03-01T10:01:00Z",
	}, {
		name: "forbid-skips", cron: "* * * * *", now: "2026-03-01T10:01:05Z", earliest: mustTime("2026-03-01T10:00:00Z"),
		policy: v1alpha1.ForbidConcurrent, active: []string{"db-29539320"},
		scheduled: "2026-03-01T10:01:00Z",
		skipped:   &v1alpha1.SkippedRun{Reason: v1alpha1.ReasonConcurrencyForbidden},
		message:   []string{"job db-29539320 is still active", "Forbid"},
		next:      "2026-03-01T10:02:00Z",
	}, {
		name: "allow-starts-beside", cron: "* * * * *", now: "2026-03-01T10:01:05Z", earliest: mustTime("2026-03-01T10:00:00Z"),
		policy: v1alpha1.AllowConcurrent, active: []string{"db-29539320"},
		scheduled: "2026-03-01T10:01:00Z", start: true, next: "2026-03-01T10:02:00Z",
	}, {
		name: "replace-cancels", cron: "* * * * *", now: "2026-03-01T10:01:05Z", earliest: mustTime("2026-03-01T10:00:00Z"),
		policy: v1alpha1.ReplaceConcurrent, active: []string{"db-29539320"},
		scheduled: "2026-03-01T10:01:00Z", start: true, cancel: []string{"db-29539320"}, next: "2026-03-01T10:02:00Z",
	}, {
		name: "suspended-skips", cron: "* * * * *", now: "2026-03-01T10:00:05Z", earliest: created, suspend: true,
		scheduled: "2026-03-01T10:00:00Z",
		skipped:   &v1alpha1.SkippedRun{Reason: v1alpha1.ReasonSuspended},
		message:   []string{"spec.suspend is true"},
		next:      "2026-03-01T10:01:00Z",
	}, {
		// Down from 10:00 to 12:07 with a run every 10 minutes: 10:10 ..
		// 12:00 are due (12 runs), the last 7 minutes ago, past the 5
		// minute deadline: one record, nothing starts.
		name: "downtime-all-missed", cron: "*/10 * * * *", now: "2026-03-01T12:07:00Z", earliest: mustTime("2026-03-01T10:00:00Z"),
		deadline: 5 * time.Minute, scheduled: "2026-03-01T12:00:00Z",
		skipped: &v1alpha1.SkippedRun{Reason: v1alpha1.ReasonMissedSchedule},
		message: []string{"12 runs due from 2026-03-01T10:10:00Z to 2026-03-01T12:00:00Z were missed", "startingDeadlineSeconds (300)", "next run is due at 2026-03-01T12:10:00Z"},
		next:    "2026-03-01T12:10:00Z",
	}, {
		// Same downtime, back at 12:02: 12:00 is in time and starts; the
		// 11 before it get one record.
		name: "downtime-last-in-time", cron: "*/10 * * * *", now: "2026-03-01T12:02:00Z", earliest: mustTime("2026-03-01T10:00:00Z"),
		deadline: 5 * time.Minute, scheduled: "2026-03-01T12:00:00Z", start: true,
		skipped: &v1alpha1.SkippedRun{Reason: v1alpha1.ReasonMissedSchedule},
		message: []string{"11 runs due from 2026-03-01T10:10:00Z to 2026-03-01T11:50:00Z were missed", "due at 2026-03-01T12:00:00Z, was started"},
		next:    "2026-03-01T12:10:00Z",
	}, {
		// Down two days with a run every minute: counting stops at 1000,
		// the last due time is still exact.
		name: "downtime-more-than-counted", cron: "* * * * *", now: "2026-03-03T10:00:30Z", earliest: mustTime("2026-03-01T10:00:00Z"),
		deadline: 5 * time.Second, scheduled: "2026-03-03T10:00:00Z",
		skipped: &v1alpha1.SkippedRun{Reason: v1alpha1.ReasonMissedSchedule},
		message: []string{"more than 1000 runs", "to 2026-03-03T10:00:00Z"},
		next:    "2026-03-03T10:01:00Z",
	}, {
		// A restart after the job for 10:01 was created but before the
		// status said so: the job is adopted, not forbidden by itself.
		name: "existing-job-adopted", cron: "* * * * *", now: "2026-03-01T10:01:05Z", earliest: mustTime("2026-03-01T10:00:00Z"),
		policy: v1alpha1.ForbidConcurrent, active: []string{"db-29539321"}, existing: []string{"db-29539321"},
		scheduled: "2026-03-01T10:01:00Z", start: true, next: "2026-03-01T10:02:00Z",
	}, {
		// 03:00 in Berlin is 02:00 UTC in winter.
		name: "time-zone", cron: "0 3 * * *", zone: "Europe/Berlin", now: "2026-03-02T02:00:10Z", earliest: mustTime("2026-03-01T10:00:00Z"),
		scheduled: "2026-03-02T02:00:00Z", start: true, next: "2026-03-03T02:00:00Z",
	}, {
		name: "every-arithmetic", cron: "@every 90m", now: "2026-03-01T16:10:00Z", earliest: mustTime("2026-03-01T10:00:00Z"),
		deadline: time.Hour, scheduled: "2026-03-01T16:00:00Z", start: true,
		skipped: &v1alpha1.SkippedRun{Reason: v1alpha1.ReasonMissedSchedule},
		message: []string{"3 runs due from 2026-03-01T11:30:00Z to 2026-03-01T14:30:00Z were missed"},
		next:    "2026-03-01T17:30:00Z",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.deadline == 0 {
				tc.deadline = DefaultStartingDeadline
			}
			if tc.policy == "" {
				tc.policy = v1alpha1.ForbidConcurrent
			}
			existing := map[string]bool{}
			for _, n := range tc.existing {
				existing[n] = true
			}
			got := decide(decideInput{
				plan: "db", sched: mustSchedule(t, tc.cron, tc.zone), now: mustTime(tc.now), deadline: tc.deadline,
				suspend: tc.suspend, policy: tc.policy, earliest: tc.earliest, active: tc.active,
				exists: func(n string) bool { return existing[n] },
			})
			var scheduled time.Time
			if tc.scheduled != "" {
				scheduled = mustTime(tc.scheduled)
			}
			if !got.scheduled.Equal(scheduled) || got.start != tc.start || !got.next.Equal(mustTime(tc.next)) {
				t.Errorf("scheduled %s start %v next %s; want %s %v %s", got.scheduled, got.start, got.next, tc.scheduled, tc.start, tc.next)
			}
			if diff := cmp.Diff(tc.cancel, got.cancel); diff != "" {
				t.Errorf("cancel (-want +got):\n%s", diff)
			}
			switch {
			case tc.skipped == nil && got.skipped != nil:
				t.Errorf("skipped %+v, want none", got.skipped)
			case tc.skipped != nil && got.skipped == nil:
				t.Errorf("no skip record, want %s", tc.skipped.Reason)
			case tc.skipped != nil:
				if got.skipped.Reason != tc.skipped.Reason {
					t.Errorf("skip reason %s, want %s", got.skipped.Reason, tc.skipped.Reason)
				}
				for _, m := range tc.message {
					if !strings.Contains(got.skipped.Message, m) {
						t.Errorf("skip message %q lacks %q", got.skipped.Message, m)
					}
				}
			}
		})
	}
}
