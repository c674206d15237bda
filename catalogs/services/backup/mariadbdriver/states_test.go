package mariadbdriver_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/catalogs/services/backup/mariadbdriver"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func condAt(typ string, status metav1.ConditionStatus, reason string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: reason, LastTransitionTime: metav1.NewTime(at)}
}

// Every state of a Backup's or Restore's Complete condition maps to a
// phase, waiting states are bounded by the wait timeout, and states the
// table does not know wait (bounded) instead of hanging or succeeding.
func TestClassifyComplete(t *testing.T) {
	const wait = 10 * time.Minute
	complete := func(s metav1.ConditionStatus, r string, at time.Time) []metav1.Condition {
		return []metav1.Condition{condAt(mariadbdriver.ConditionComplete, s, r, at)}
	}
	covered := map[mariadbdriver.CompleteState]bool{}
	for _, tc := range []struct {
		name  string
		conds []metav1.Condition
		now   time.Time
		want  mariadbdriver.Phase
	}{
		{"no condition", nil, t0.Add(time.Minute), mariadbdriver.Waiting},
		{"no condition too long", nil, t0.Add(wait + time.Second), mariadbdriver.Failed},
		{"JobComplete", complete(metav1.ConditionTrue, "JobComplete", t0), t0.Add(time.Hour), mariadbdriver.Succeeded},
		{"JobFailed", complete(metav1.ConditionTrue, "JobFailed", t0), t0, mariadbdriver.Failed},
		{"JobRunning", complete(metav1.ConditionFalse, "JobRunning", t0), t0.Add(time.Hour), mariadbdriver.Running},
		{"JobSuspended", complete(metav1.ConditionFalse, "JobSuspended", t0), t0.Add(time.Minute), mariadbdriver.Waiting},
		{"JobSuspended too long", complete(metav1.ConditionFalse, "JobSuspended", t0), t0.Add(wait + time.Second), mariadbdriver.Failed},
		{"Failed (operator retries)", complete(metav1.ConditionFalse, "Failed", t0), t0.Add(time.Minute), mariadbdriver.Waiting},
		{"Failed too long", complete(metav1.ConditionFalse, "Failed", t0), t0.Add(wait + time.Second), mariadbdriver.Failed},
		{"CronJobScheduled", complete(metav1.ConditionFalse, "CronJobScheduled", t0), t0, mariadbdriver.Failed},
		{"CronJobRunning", complete(metav1.ConditionFalse, "CronJobRunning", t0), t0, mariadbdriver.Failed},
		{"CronJobSucess", complete(metav1.ConditionTrue, "CronJobSucess", t0), t0, mariadbdriver.Failed},
		{"unknown reason", complete(metav1.ConditionFalse, "SomethingNew", t0), t0.Add(time.Minute), mariadbdriver.Waiting},
		{"unknown reason too long", complete(metav1.ConditionTrue, "SomethingNew", t0), t0.Add(wait + time.Second), mariadbdriver.Failed},
		{"status Unknown", complete(metav1.ConditionUnknown, "JobComplete", t0), t0.Add(wait + time.Second), mariadbdriver.Failed},
	} {
		if len(tc.conds) == 1 {
			covered[mariadbdriver.CompleteState{Status: tc.conds[0].Status, Reason: tc.conds[0].Reason}] = true
		}
		t.Run(tc.name, func(t *testing.T) {
			v := mariadbdriver.ClassifyComplete("Backup ns/x", tc.conds, t0, tc.now, wait)
			if v.Phase != tc.want {
				t.Fatalf("got %s (%s), want %s", v.Phase, v.Message, tc.want)
			}
			if !strings.Contains(v.Message, "Backup ns/x") {
				t.Errorf("message %q does not name the object", v.Message)
			}
		})
	}
	// Every state of the mapping is a case above.
	for s, p := range mariadbdriver.CompleteStates {
		if !covered[s] {
			t.Errorf("state %+v (%s) has no case", s, p)
		}
	}
}

func TestClassifyRestoredMariaDB(t *testing.T) {
	const wait = 10 * time.Minute
	ready := func(s metav1.ConditionStatus, r string) metav1.Condition {
		return condAt(mariadbdriver.ConditionReady, s, r, t0)
	}
	restored := func(s metav1.ConditionStatus) metav1.Condition {
		return condAt(mariadbdriver.ConditionBackupRestored, s, mariadbdriver.ReasonRestoreBackup, t0)
	}
	for _, tc := range []struct {
		name  string
		conds []metav1.Condition
		now   time.Time
		want  mariadbdriver.Phase
	}{
		{"no status", nil, t0.Add(time.Minute), mariadbdriver.Waiting},
		{"no status too long", nil, t0.Add(wait + time.Second), mariadbdriver.Failed},
		{"StatefulSet not ready", []metav1.Condition{ready(metav1.ConditionFalse, "StatefulSetNotReady")}, t0.Add(time.Minute), mariadbdriver.Waiting},
		{"ready before the restore started", []metav1.Condition{ready(metav1.ConditionTrue, "StatefulSetReady")}, t0.Add(time.Minute), mariadbdriver.Waiting},
		{"restoring", []metav1.Condition{ready(metav1.ConditionFalse, "RestoreBackup"), restored(metav1.ConditionFalse)}, t0.Add(time.Hour), mariadbdriver.Running},
		{"restored, not yet ready", []metav1.Condition{ready(metav1.ConditionFalse, "RestoreBackup"), restored(metav1.ConditionTrue)}, t0.Add(time.Hour), mariadbdriver.Running},
		{"restored and ready", []metav1.Condition{ready(metav1.ConditionTrue, "StatefulSetReady"), restored(metav1.ConditionTrue)}, t0, mariadbdriver.Succeeded},
		{"restored, unhealthy too long", []metav1.Condition{ready(metav1.ConditionFalse, "Failed"), restored(metav1.ConditionTrue)}, t0.Add(wait + time.Second), mariadbdriver.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mariadbdriver.ClassifyRestoredMariaDB("MariaDB ns/x", tc.conds, t0, tc.now, wait)
			if v.Phase != tc.want {
				t.Fatalf("got %s (%s), want %s", v.Phase, v.Message, tc.want)
			}
		})
	}
}

// The condition types, statuses and reasons the driver maps are valid
// under the upstream CRDs' condition schema (status enum, type and reason
// patterns), and the condition types are the ones the CRDs' printer
// columns show. The CRDs enumerate no reason: the list of reasons comes
// from the operator's source (doc.go).
func TestStatesAgainstUpstreamCRD(t *testing.T) {
	crds, err := localcp.ReadCRDFiles(filepath.Join(testenv.SharedDir(t), "crds", "upstream", "mariadb.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range crds {
		byKind[c.Spec.Names.Kind] = c
	}
	type use struct {
		kind, typ string
		status    metav1.ConditionStatus
		reason    string
	}
	var uses []use
	for s := range mariadbdriver.CompleteStates {
		for _, kind := range []string{"Backup", "Restore"} {
			uses = append(uses, use{kind, mariadbdriver.ConditionComplete, s.Status, s.Reason})
		}
	}
	uses = append(uses,
		use{"MariaDB", mariadbdriver.ConditionReady, metav1.ConditionFalse, mariadbdriver.ReasonRestoreBackup},
		use{"MariaDB", mariadbdriver.ConditionReady, metav1.ConditionTrue, "StatefulSetReady"},
		use{"MariaDB", mariadbdriver.ConditionBackupRestored, metav1.ConditionTrue, mariadbdriver.ReasonRestoreBackup},
		use{"MariaDB", mariadbdriver.ConditionBackupRestored, metav1.ConditionFalse, mariadbdriver.ReasonRestoreBackup},
	)
	for _, u := range uses {
		crd := byKind[u.kind]
		if crd == nil {
			t.Fatalf("the upstream CRDs have no kind %s", u.kind)
		}
		v := crd.Spec.Versions[0]
		if v.Name != mariadbdriver.GroupVersion.Version || crd.Spec.Group != mariadbdriver.GroupVersion.Group {
			t.Fatalf("%s is %s/%s, the driver uses %s", u.kind, crd.Spec.Group, v.Name, mariadbdriver.GroupVersion)
		}
		item := v.Schema.OpenAPIV3Schema.Properties["status"].Properties["conditions"].Items.Schema
		var enum []string
		for _, e := range item.Properties["status"].Enum {
			enum = append(enum, strings.Trim(string(e.Raw), `"`))
		}
		if !slices.Contains(enum, string(u.status)) {
			t.Errorf("%s condition %s: status %s is not in the CRD's enum %v", u.kind, u.typ, u.status, enum)
		}
		for field, value := range map[string]string{"type": u.typ, "reason": u.reason} {
			re := regexp.MustCompile(item.Properties[field].Pattern)
			if !re.MatchString(value) {
				t.Errorf("%s condition %s %q does not match the CRD's pattern %s", u.kind, field, value, re)
			}
		}
		shown := false
		for _, col := range v.AdditionalPrinterColumns {
			shown = shown || strings.Contains(col.JSONPath, `@.type=="`+u.typ+`"`)
		}
		if !shown && u.typ != mariadbdriver.ConditionBackupRestored {
			t.Errorf("%s: no printer column of the CRD reads condition %s", u.kind, u.typ)
		}
	}
}
