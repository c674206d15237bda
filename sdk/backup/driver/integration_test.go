package driver

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

func live(t *testing.T) client.Client {
	t.Helper()
	testenv.Need(t, env)
	if err := crds.Apply(context.Background(), env.Config); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func namespace(t *testing.T, c client.Client, ns string) {
	t.Helper()
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

// TestClaimWriteIsExclusive: of two replicas that read the same unclaimed
// job, the second claim write fails 409 (the resourceVersion
// precondition), instead of overwriting the first as a forced
// server-side apply would.
func TestClaimWriteIsExclusive(t *testing.T) {
	c := live(t)
	ctx := context.Background()
	namespace(t, c, "claims")
	job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "claims"},
		Spec: v1alpha1.BackupJobSpec{BackupClassName: "x", ApplicationRef: v1alpha1.ApplicationRef{
			ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db"}}}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	seenByA, seenByB := job.DeepCopy(), job.DeepCopy()
	claim := func(who string) *intent {
		now := time.Now()
		in := &intent{}
		in.Claim, _ = nextClaim(nil, claimAcquire, who, time.Minute, now)
		in.running("claimed by "+who, 1)
		return in
	}
	if err := applyJobStatus(ctx, c, seenByA, claim("a"), v1alpha1.DriverFieldManager("d")); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	err := applyJobStatus(ctx, c, seenByB, claim("b"), v1alpha1.DriverFieldManager("d"))
	if !apierrors.IsConflict(err) {
		t.Fatalf("second claim from a stale view: %v, want 409 Conflict", err)
	}
	got := &v1alpha1.BackupJob{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Claim == nil || got.Status.Claim.HolderIdentity != "a" || got.ResourceVersion != seenByA.ResourceVersion {
		t.Errorf("claim %+v (resourceVersion %s), want a's (%s)", got.Status.Claim, got.ResourceVersion, seenByA.ResourceVersion)
	}
}

// TestCreateOrAdopt: the first call creates, a retry of the same run
// adopts, another run's call is a *ConflictError naming the object.
func TestCreateOrAdopt(t *testing.T) {
	c := live(t)
	ctx := context.Background()
	namespace(t, c, "adopt")
	mk := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "job-1-backup", Namespace: "adopt"}, Data: map[string]string{"k": "v"}}
	}
	for _, tc := range []struct {
		name    string
		run     types.UID
		adopted bool
		err     bool
	}{
		{"creates", "run-1", false, false},
		{"same run adopts", "run-1", true, false},
		{"other run conflicts", "run-2", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := mk()
			adopted, err := CreateOrAdopt(ctx, c, tc.run, cm)
			var ce *ConflictError
			if tc.err {
				if !errors.As(err, &ce) || ce.Object != "ConfigMap adopt/job-1-backup" || ce.Found != "run-1" {
					t.Fatalf("error %v, want a *ConflictError naming ConfigMap adopt/job-1-backup of run-1", err)
				}
				return
			}
			if err != nil || adopted != tc.adopted || cm.Labels[v1alpha1.LabelRun] != "run-1" || cm.UID == "" {
				t.Fatalf("CreateOrAdopt = %v, %v (labels %v)", adopted, err, cm.Labels)
			}
		})
	}
}

// TestProjectSecret: the copy lands in the job's namespace, owned by the
// job and labelled with the run; a rotated source is copied again.
func TestProjectSecret(t *testing.T) {
	c := live(t)
	ctx := context.Background()
	namespace(t, c, "drv")
	namespace(t, c, "tenant")
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: "drv"}, Data: map[string][]byte{"key": []byte("one")}}
	if err := c.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "tenant"},
		Spec: v1alpha1.BackupJobSpec{BackupClassName: "x", ApplicationRef: v1alpha1.ApplicationRef{
			ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db"}}}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{v1alpha1.LabelRun: string(job.UID), v1alpha1.LabelDriver: "d"}
	for _, want := range []string{"one", "two"} {
		if want == "two" {
			src.Data["key"] = []byte("two")
			if err := c.Update(ctx, src); err != nil {
				t.Fatal(err)
			}
		}
		name, err := ProjectSecret(ctx, c, "drv", "s3", job, labels, ObjectName(job.Name, "cred-s3"))
		if err != nil {
			t.Fatal(err)
		}
		got := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "tenant", Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if string(got.Data["key"]) != want || len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != job.UID ||
			got.Labels[v1alpha1.LabelRun] != string(job.UID) {
			t.Errorf("copy %s: data %q, owners %+v, labels %v; want %q owned by the job", name, got.Data["key"], got.OwnerReferences, got.Labels, want)
		}
	}
	if _, err := ProjectSecret(ctx, c, "drv", "absent", job, labels, "x"); err == nil {
		t.Error("a missing source Secret is no error")
	} else if reason, _, ok := terminal(err); !ok || reason != v1alpha1.ReasonBackendFailed {
		t.Errorf("missing source: %v, want BackendFailed", err)
	}
}

// TestOrphan: only what an earlier job of the same kind, namespace and
// name left, of which no Backup exists, is an orphan Run.CreateOrAdopt
// deletes; an object a Backup still needs, one of another job, one without
// the driver's label, or any object met by a reclaim, is a conflict
// (contract k7, "Deletion").
func TestOrphan(t *testing.T) {
	c := live(t)
	ctx := context.Background()
	namespace(t, c, "orphans")
	job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "orphans"},
		Spec: v1alpha1.BackupJobSpec{BackupClassName: "x", ApplicationRef: v1alpha1.ApplicationRef{
			ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db"}}}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	run := &Run{Driver: "d", Client: c, obj: job, kind: "BackupJob"}
	kept := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "orphans", Labels: map[string]string{v1alpha1.LabelRun: "with-backup"}},
		Spec: v1alpha1.BackupSpec{ApplicationRef: job.Spec.ApplicationRef, DriverRef: v1alpha1.DriverRef{Name: "d", ProtocolVersion: v1alpha1.ProtocolVersion},
			Strategy: v1alpha1.Strategy{Kind: "Job"}, BackupJobName: "nightly", TakenAt: metav1.Now()}}
	if err := c.Create(ctx, kept); err != nil {
		t.Fatal(err)
	}
	left := func(runLabel, driverName, jobRef string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nightly-backup", Namespace: "orphans",
			Labels: map[string]string{v1alpha1.LabelRun: runLabel, v1alpha1.LabelDriver: driverName}}}
		if jobRef != "" {
			cm.Annotations = map[string]string{AnnotationJob: jobRef}
		}
		return cm
	}
	ours := "BackupJob/orphans/nightly"
	for _, tc := range []struct {
		name    string
		obj     *corev1.ConfigMap
		reclaim bool
		want    bool
	}{
		{"earlier job without Backup", left("earlier", "d", ours), false, true},
		{"earlier job whose Backup exists", left("with-backup", "d", ours), false, false},
		{"this run", left(string(job.UID), "d", ours), false, false},
		{"another driver's", left("earlier", "other", ours), false, false},
		{"another job's", left("earlier", "d", "BackupJob/orphans/other"), false, false},
		{"a RestoreJob's of the name", left("earlier", "d", "RestoreJob/orphans/nightly"), false, false},
		{"no annotation", left("earlier", "d", ""), false, false},
		{"met by a reclaim", left("earlier", "d", ours), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run
			if tc.reclaim {
				r = &Run{Driver: "d", Client: c, obj: kept, kind: "Backup"}
			}
			got, err := r.Orphan(ctx, tc.obj)
			if err != nil || got != tc.want {
				t.Errorf("Orphan = %v, %v; want %v", got, err, tc.want)
			}
		})
	}

	// CreateOrAdopt replaces an orphan and keeps what a Backup needs.
	orphan := left("earlier", "d", ours)
	if err := c.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nightly-backup", Namespace: "orphans"}}
	if adopted, err := run.CreateOrAdopt(ctx, cm); err != nil || adopted || cm.UID == orphan.UID || cm.Labels[v1alpha1.LabelRun] != string(job.UID) {
		t.Fatalf("CreateOrAdopt over an orphan = %v, %v (uid %s, labels %v); want a new object of this run", adopted, err, cm.UID, cm.Labels)
	}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	needed := left("with-backup", "d", ours)
	if err := c.Create(ctx, needed); err != nil {
		t.Fatal(err)
	}
	cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nightly-backup", Namespace: "orphans"}}
	var ce *ConflictError
	if _, err := run.CreateOrAdopt(ctx, cm); !errors.As(err, &ce) || ce.Found != "with-backup" {
		t.Fatalf("CreateOrAdopt over an object a Backup needs = %v, want a *ConflictError", err)
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "orphans", Name: "nightly-backup"}, cm); err != nil || cm.UID != needed.UID {
		t.Fatalf("the object a Backup needs is gone or replaced: %v", err)
	}
}
