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
		name   string
		grants []backupsv1alpha1.BackupGrant
		want   string
	}{
		{"none", nil, ""},
		{"another namespace", []backupsv1alpha1.BackupGrant{g("a", []string{"carol"}, "db")}, ""},
		{"another backup", []backupsv1alpha1.BackupGrant{g("a", []string{"bob"}, "db-2")}, ""},
		{"a grant being deleted", []backupsv1alpha1.BackupGrant{deleting}, ""},
		{"named", []backupsv1alpha1.BackupGrant{g("a", []string{"carol", "bob"}, "db-2", "db")}, "a"},
		{"every backup", []backupsv1alpha1.BackupGrant{g("all", []string{"bob"})}, "all"},
		{"the first by name", []backupsv1alpha1.BackupGrant{g("z", []string{"bob"}), g("b", []string{"bob"}, "db")}, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if found := grantFor(tc.grants, "bob", "db"); found != nil {
				got = found.Name
			}
			if got != tc.want {
				t.Errorf("grantFor = %q, want %q", got, tc.want)
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
		name       string
		mode       backupsv1alpha1.RestoreMode
		driver     *backupsv1alpha1.BackupDriver
		live       bool
		version    string
		wait, fail string
	}{
		{"not registered", backupsv1alpha1.RestoreInPlace, nil, false, "", backupsv1alpha1.ReasonDriverUnavailable, ""},
		{"Lease expired", backupsv1alpha1.RestoreInPlace, d([]string{"v1alpha1"}), false, "", backupsv1alpha1.ReasonDriverUnavailable, ""},
		{"no common protocol", backupsv1alpha1.RestoreInPlace, d([]string{"v0"}), true, "", backupsv1alpha1.ReasonProtocolIncompatible, ""},
		{"newest common protocol", backupsv1alpha1.RestoreInPlace, d([]string{"v1alpha1", "v1beta1"}), true, "v1beta1", "", ""},
		{"InPlace needs no capability", backupsv1alpha1.RestoreInPlace, d([]string{"v1alpha1"}), true, "v1alpha1", "", ""},
		{"NewApplication without RestoreToNew", backupsv1alpha1.RestoreNewApplication, d([]string{"v1alpha1"}, backupsv1alpha1.CapabilityReclaim), true, "", "", backupsv1alpha1.ReasonCapabilityMissing},
		{"NewApplication with RestoreToNew", backupsv1alpha1.RestoreNewApplication, d([]string{"v1alpha1"}, backupsv1alpha1.CapabilityRestoreToNew), true, "v1alpha1", "", ""},
		{"a waiting reason comes before the capability", backupsv1alpha1.RestoreNewApplication, d([]string{"v1alpha1"}), false, "", backupsv1alpha1.ReasonDriverUnavailable, ""},
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
				t.Errorf("got (%q, wait %q, fail %q), want (%q, %q, %q)", version, wait, fail, tc.version, tc.wait, tc.fail)
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
