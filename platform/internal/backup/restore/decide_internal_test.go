package restore

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

func TestGrantFor(t *testing.T) {
	g := func(name string, from []string, backups ...string) backupsv1alpha1.BackupGrant {
		out := backupsv1alpha1.BackupGrant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: backupsv1alpha1.BackupGrantSpec{BackupNames: backups}}
		for _, f := range from {
			out.Spec.From = append(out.Spec.From, backupsv1alpha1.GrantFrom{Namespace: f})
		}
		return out
	}
	deleting := g("deleting", []string{"bob"})
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	for _, tc := range []struct {
		name string
		// why is the rule the case pins.
		why    string
		grants []backupsv1alpha1.BackupGrant
		// want is the grant found ("": none).
		want string
	}{
		{
			name: "none",
			why:  "without a grant a cross-namespace restore finds none",
		},
		{
			name:   "another namespace",
			why:    "a grant serves only the namespaces its spec.from names",
			grants: []backupsv1alpha1.BackupGrant{g("a", []string{"carol"}, "db")},
		},
		{
			name:   "another backup",
			why:    "a grant naming Backups serves only those",
			grants: []backupsv1alpha1.BackupGrant{g("a", []string{"bob"}, "db-2")},
		},
		{
			name:   "a grant being deleted",
			why:    "a grant being deleted grants nothing",
			grants: []backupsv1alpha1.BackupGrant{deleting},
		},
		{
			name:   "named",
			why:    "a grant serves a namespace of spec.from and a Backup of spec.backupNames",
			grants: []backupsv1alpha1.BackupGrant{g("a", []string{"carol", "bob"}, "db-2", "db")},
			want:   "a",
		},
		{
			name:   "every backup",
			why:    "a grant without spec.backupNames serves every Backup of its namespace",
			grants: []backupsv1alpha1.BackupGrant{g("all", []string{"bob"})},
			want:   "all",
		},
		{
			name:   "the first by name",
			why:    "of several grants the first by name is reported, so the result never depends on list order",
			grants: []backupsv1alpha1.BackupGrant{g("z", []string{"bob"}), g("b", []string{"bob"}, "db")},
			want:   "b",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if found := grantFor(tc.grants, "bob", "db"); found != nil {
				got = found.Name
			}
			if got != tc.want {
				t.Errorf("grantFor = %q, want %q: %s", got, tc.want, tc.why)
			}
		})
	}
}

// The GrantMissing message names the grant to create, and never depends
// on whether the Backup exists (it cannot: it is computed without it).
func TestGrantMissingNamesTheGrant(t *testing.T) {
	v := grantMissing("tenant-bob", "tenant-alice", "db-1")
	if v.status != metav1.ConditionFalse || v.reason != backupsv1alpha1.ReasonGrantMissing {
		t.Fatalf("verdict %+v", v)
	}
	for _, want := range []string{"BackupGrant (backups.cozystack.io/v1alpha1) in namespace tenant-alice", "spec.from [{namespace: tenant-bob}]", "spec.backupNames [db-1]"} {
		if !strings.Contains(v.message, want) {
			t.Errorf("message %q lacks %q", v.message, want)
		}
	}
}

func TestCheckDriver(t *testing.T) {
	b := &backupsv1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
		Spec: backupsv1alpha1.BackupSpec{DriverRef: backupsv1alpha1.DriverRef{Name: "d"}}}
	d := func(protocols []string, caps ...backupsv1alpha1.Capability) *backupsv1alpha1.BackupDriver {
		return &backupsv1alpha1.BackupDriver{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: backupsv1alpha1.BackupDriverSpec{
			ProtocolVersions: protocols, Capabilities: caps, Lease: backupsv1alpha1.LeaseRef{Namespace: "x", Name: "l"}}}
	}
	core := []string{"v1beta1", "v1alpha1"}
	for _, tc := range []struct {
		name string
		// why is the rule the case pins.
		why    string
		mode   backupsv1alpha1.RestoreMode
		driver *backupsv1alpha1.BackupDriver
		// live is whether the driver's Lease is live.
		live bool
		// version is the protocol version chosen ("": none).
		version string
		// wait and fail are the reasons the restore waits or fails for
		// ("": neither).
		wait, fail string
	}{
		{
			name: "not registered",
			why:  "a restore waits for the Backup's driver to register",
			mode: backupsv1alpha1.RestoreInPlace,
			live: false,
			wait: backupsv1alpha1.ReasonDriverUnavailable,
		},
		{
			name:   "Lease expired",
			why:    "a restore waits while the driver's Lease is expired",
			mode:   backupsv1alpha1.RestoreInPlace,
			driver: d([]string{"v1alpha1"}),
			live:   false,
			wait:   backupsv1alpha1.ReasonDriverUnavailable,
		},
		{
			name:   "no common protocol",
			why:    "a driver speaking none of the core's protocol versions fails the restore",
			mode:   backupsv1alpha1.RestoreInPlace,
			driver: d([]string{"v0"}),
			live:   true,
			wait:   backupsv1alpha1.ReasonProtocolIncompatible,
		},
		{
			name:    "newest common protocol",
			why:     "the restore speaks the newest protocol version both sides know",
			mode:    backupsv1alpha1.RestoreInPlace,
			driver:  d([]string{"v1alpha1", "v1beta1"}),
			live:    true,
			version: "v1beta1",
		},
		{
			name:    "InPlace needs no capability",
			why:     "an in-place restore needs no capability",
			mode:    backupsv1alpha1.RestoreInPlace,
			driver:  d([]string{"v1alpha1"}),
			live:    true,
			version: "v1alpha1",
		},
		{
			name:   "NewApplication without RestoreToNew",
			why:    "a restore into a new application needs the driver's RestoreToNew capability",
			mode:   backupsv1alpha1.RestoreNewApplication,
			driver: d([]string{"v1alpha1"}, backupsv1alpha1.CapabilityReclaim),
			live:   true,
			fail:   backupsv1alpha1.ReasonCapabilityMissing,
		},
		{
			name:    "NewApplication with RestoreToNew",
			why:     "with RestoreToNew a restore into a new application proceeds",
			mode:    backupsv1alpha1.RestoreNewApplication,
			driver:  d([]string{"v1alpha1"}, backupsv1alpha1.CapabilityRestoreToNew),
			live:    true,
			version: "v1alpha1",
		},
		{
			name:   "a waiting reason comes before the capability",
			why:    "an unavailable driver is waited for before its capabilities are judged",
			mode:   backupsv1alpha1.RestoreNewApplication,
			driver: d([]string{"v1alpha1"}),
			live:   false,
			wait:   backupsv1alpha1.ReasonDriverUnavailable,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			version, o := checkDriver(b, tc.mode, tc.driver, tc.live, core)
			wait, fail := "", ""
			if o.wait != nil {
				wait = o.wait.reason
			}
			if o.fail != nil {
				fail = o.fail.reason
			}
			if version != tc.version || wait != tc.wait || fail != tc.fail {
				t.Errorf("got (%q, wait %q, fail %q), want (%q, %q, %q): %s", version, wait, fail, tc.version, tc.wait, tc.fail, tc.why)
			}
		})
	}
}

func TestWaitTimedOut(t *testing.T) {
	now := time.Unix(10000, 0)
	w := waiting(backupsv1alpha1.ReasonDriverUnavailable, "driver gone")
	if o := waitTimedOut(w, now.Add(-59*time.Minute), now, time.Hour); o.wait == nil {
		t.Errorf("a 59m wait of 1h timed out: %+v", o)
	}
	o := waitTimedOut(w, now.Add(-time.Hour), now, time.Hour)
	if o.fail == nil || o.fail.reason != backupsv1alpha1.ReasonDriverWaitTimeout || !strings.Contains(o.fail.message, "driver gone") {
		t.Errorf("a 1h wait of 1h: %+v, want DriverWaitTimeout quoting the wait", o)
	}
	f := failed(backupsv1alpha1.ReasonTargetExists, "x")
	if o := waitTimedOut(f, now.Add(-2*time.Hour), now, time.Hour); o.fail.reason != backupsv1alpha1.ReasonTargetExists {
		t.Errorf("a failure became %+v", o)
	}
}

// A condition keeps its lastTransitionTime while its status holds, even
// when its reason changes; a new status gets now.
func TestStatusTransitionTimes(t *testing.T) {
	then := metav1.NewTime(time.Unix(1000, 0))
	now := time.Unix(2000, 0)
	job := &backupsv1alpha1.RestoreJob{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	job.Status.Conditions = []metav1.Condition{
		{Type: backupsv1alpha1.ConditionAuthorized, Status: metav1.ConditionFalse, Reason: backupsv1alpha1.ReasonGrantMissing, LastTransitionTime: then},
		{Type: backupsv1alpha1.ConditionDriverBound, Status: metav1.ConditionFalse, Reason: backupsv1alpha1.ReasonDriverUnavailable, LastTransitionTime: then},
	}
	wait := &verdict{metav1.ConditionFalse, backupsv1alpha1.ReasonProtocolIncompatible, "p"}
	st := summarize(job, intent{
		authorized: &verdict{metav1.ConditionTrue, backupsv1alpha1.ReasonGranted, "g"},
		bound:      wait, blocked: wait,
	}, now)
	want := []metav1.Condition{
		{Type: backupsv1alpha1.ConditionAuthorized, Status: metav1.ConditionTrue, Reason: backupsv1alpha1.ReasonGranted, Message: "g", ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(now)},
		{Type: backupsv1alpha1.ConditionDriverBound, Status: metav1.ConditionFalse, Reason: backupsv1alpha1.ReasonProtocolIncompatible, Message: "p", ObservedGeneration: 3, LastTransitionTime: then},
		{Type: backupsv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: backupsv1alpha1.ReasonProtocolIncompatible, Message: "p", ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(now)},
	}
	if d := cmp.Diff(want, st.Conditions); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if st.Phase != backupsv1alpha1.PhasePending || st.ObservedGeneration != 3 || st.CompletionTime != nil {
		t.Errorf("status %+v", st)
	}
	if got := waitingSince(job, now); !got.Equal(then.Time) {
		t.Errorf("waitingSince = %v, want %v", got, then)
	}
}
