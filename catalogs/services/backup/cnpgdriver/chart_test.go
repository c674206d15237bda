package cnpgdriver_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/cnpgdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/charttest"
)

// The driver's chart renders with its defaults; its objects pass a strict
// server-side dry-run; the pod runs restricted; and its RBAC is enough: a
// replica impersonating the chart's ServiceAccount, with only the chart's
// ClusterRole and Role, takes a backup, restores it to a new application
// and reclaims it.
func TestChartRBACIsEnough(t *testing.T) {
	c := need(t)
	playApplications(t, c)
	ctx := context.Background()
	ch, err := charttest.Load(filepath.Join("..", "..", "charts", "cnpg-backup-driver"))
	if err != nil {
		t.Fatal(err)
	}
	// A release name of its own: TestChartLint dry-runs the default one.
	const release = "cnpg-backup-driver-rbac"
	// The registration's name: the chart's RBAC names it (resourceNames).
	const name = "cnpg-rbac"
	out, err := charttest.Render(ch, release, charttest.WithK2(map[string]any{"driverName": name}))
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	objs, err := charttest.Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, c, charttest.Namespace)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: credentials, Namespace: ns},
		Data: map[string][]byte{cnpgdriver.KeyAccessKeyID: []byte("AKIA"), cnpgdriver.KeySecretAccessKey: []byte("secret")}}
	if err := c.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, u := range objs {
		kinds[u.GetKind()]++
		if u.GetKind() != "ClusterRole" && u.GetKind() != "ClusterRoleBinding" {
			u.SetNamespace(ns)
		}
		opts := []client.CreateOption{client.FieldValidation(metav1.FieldValidationStrict)}
		if u.GetKind() == "BackupClass" {
			// Cluster-scoped under a name of its own (not the release's):
			// checked, not kept, so TestChartLint's dry-run of the default
			// release does not find it there.
			opts = append(opts, client.DryRunAll)
		}
		if u.GetKind() == "Deployment" {
			// Nothing runs pods here: the Deployment is checked, not kept.
			opts = append(opts, client.DryRunAll)
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
				t.Fatal(err)
			}
			checkRestricted(t, d)
		}
		if u.GetKind() == "ClusterRole" {
			r := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r); err != nil {
				t.Fatal(err)
			}
			for _, rule := range r.Rules {
				for _, v := range slices.Concat(rule.Verbs, rule.Resources, rule.APIGroups) {
					if v == "*" {
						t.Errorf("ClusterRole rule %+v has a wildcard", rule)
					}
				}
				if slices.Contains(rule.Resources, "secrets") && slices.ContainsFunc(rule.Verbs, func(v string) bool { return v == "list" || v == "watch" }) {
					t.Errorf("ClusterRole may list or watch Secrets cluster-wide: %+v", rule)
				}
			}
		}
		if err := c.Create(ctx, u, opts...); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "BackupClass"} {
		if kinds[k] != 1 {
			t.Errorf("the chart renders %d %s, want 1", kinds[k], k)
		}
	}

	// A replica as the ServiceAccount.
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + release}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- cnpgdriver.Start(rctx, cfg, cnpgdriver.Options{Name: name, Namespace: ns, Identity: "rbac-0",
			ClaimDuration: 6 * time.Second, LeaseDuration: 6 * time.Second, SkipNameValidation: true})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("the replica as the ServiceAccount stopped with %v", err)
		}
	})

	tns := namespace(t, c, "rbac-tenant")
	job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: tns},
		Spec: v1alpha1.BackupJobSpec{ApplicationRef: app, BackupClassName: "cnpg"}}
	createBound(t, c, job, name, params(t, objectStoreParams()), nil)
	st := waitJob(t, c, job, func(ctx context.Context) error {
		objs, err := cnpgBackups(ctx, c, job.UID)
		for _, o := range objs {
			err = completeBackup(ctx, c, o)
		}
		return err
	})
	checkEnded(t, st, v1alpha1.PhaseSucceeded, v1alpha1.ReasonSucceeded)

	target := app
	target.Name = "db-restored"
	rj := &v1alpha1.RestoreJob{ObjectMeta: metav1.ObjectMeta{Name: "restore", Namespace: tns},
		Spec: v1alpha1.RestoreJobSpec{BackupRef: v1alpha1.BackupRef{Name: job.Status.BackupName},
			Target: v1alpha1.RestoreTarget{Mode: v1alpha1.RestoreNewApplication, ApplicationName: target.Name}}}
	createBound(t, c, rj, name, params(t, objectStoreParams()), &target)
	st = waitJob(t, c, rj, nil)
	checkEnded(t, st, v1alpha1.PhaseSucceeded, v1alpha1.ReasonSucceeded)

	b := &v1alpha1.Backup{}
	key := types.NamespacedName{Namespace: tns, Name: job.Status.BackupName}
	if err := c.Get(ctx, key, b); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	poll(t, "the Backup reclaimed", func(ctx context.Context) bool {
		objs, _ := cnpgBackups(ctx, c, job.UID)
		return apierrors.IsNotFound(c.Get(ctx, key, &v1alpha1.Backup{})) && len(objs) == 0
	})
}

// checkRestricted checks the pod meets the restricted Pod Security
// Standard's main rules.
func checkRestricted(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	ps := d.Spec.Template.Spec.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v, want runAsNonRoot and seccomp RuntimeDefault", ps)
	}
	for _, ctr := range d.Spec.Template.Spec.Containers {
		sc := ctr.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
			!slices.Contains(sc.Capabilities.Drop, "ALL") || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("container %s securityContext %+v, want no privilege escalation, drop ALL, read-only root", ctr.Name, sc)
		}
	}
}

// The driver's chart renders with its defaults and lints clean; with a
// control plane its objects pass a strict server-side dry-run
// (charttest.RunOperators, as the operator charts).
func TestChartLint(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cfg *rest.Config
	if env != nil {
		c := need(t)
		namespace(t, c, charttest.Namespace)
		cfg = env.Config
	}
	charttest.RunOperators(t, ctx, cfg, filepath.Join("..", "..", "charts"), []string{"cnpg-backup-driver"})
}
