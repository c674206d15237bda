package jobdriver_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/jobdriver"
	"cozystack.io/platform/tenantaccess"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/backup/conformance"
	"cozystack.io/sdk/backup/driver"
)

// The catalogs of the red-team cases: each owns one namespace, marked as
// its Package's by the operator's annotation, and writes its BackupClass
// through its installer ServiceAccount there, holding exactly the rights
// the shipped driver charts hold: create on backupclasses, the rest on its
// own class by name.
const (
	evilNS   = "cozy-evil-driver"
	goodNS   = "cozy-good-driver"
	victimNS = "tenant-victim"
)

// redteam sets up the platform's policies, the cozy-system Secret the
// attack wants and the victim tenant namespace (Pod Security restricted,
// as the Tenant chart labels it), and runs one Job driver replica.
func redteam(t *testing.T) (context.Context, client.Client) {
	t.Helper()
	c := fullClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	if err := tenantaccess.Apply(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: driverNamespace}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cozy-system"}},
		{ObjectMeta: metav1.ObjectMeta{Name: victimNS, Labels: map[string]string{
			"namespace.cozystack.io/tenant": "victim", "pod-security.kubernetes.io/enforce": "restricted",
			"pod-security.kubernetes.io/enforce-version": "latest"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: evilNS, Annotations: map[string]string{"cozystack.io/package": "evil"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: goodNS, Annotations: map[string]string{"cozystack.io/package": "good"}}},
	} {
		if err := c.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "platform-credentials", Namespace: "cozy-system"}, StringData: map[string]string{"token": "platform-secret"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: goodNS}, StringData: map[string]string{"key": "good-catalog-key"}},
	} {
		if err := c.Create(ctx, s); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	// The victim's fingerprint includes its ServiceAccounts: wait for the
	// one kube-controller-manager adds to every namespace.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: victimNS, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	}); err != nil {
		t.Fatal(err)
	}
	// The mutating policy takes effect a moment after it and the CRD
	// are written: until a ServiceAccount's dry-run class comes back
	// labelled, a class would be stored without its namespace.
	probe := installer(t, ctx, c, goodNS, "probe")
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		bc := &v1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: v1alpha1.BackupClassSpec{
			Strategies: []v1alpha1.ClassStrategy{{ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"},
				Strategy: v1alpha1.Strategy{Kind: jobdriver.StrategyKind, Parameters: params(t, validParams())}}},
		}}
		if err := probe.Create(ctx, bc, client.DryRunAll); err != nil {
			return false, nil
		}
		return bc.Labels[v1alpha1.LabelClassNamespace] == goodNS, nil
	}); err != nil {
		t.Fatalf("the policy backupclass-owner.cozystack.io never labelled a dry-run class: %v", err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- start(rctx, conformance.Replica{Identity: "redteam-0", ClaimDuration: 6 * time.Second, LeaseDuration: 6 * time.Second})
	}()
	t.Cleanup(func() { stop(); <-done })
	return ctx, c
}

// fullClient is need's client with every built-in kind (RBAC too).
func fullClient(t *testing.T) client.Client {
	t.Helper()
	need(t)
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// installer returns a client acting as the installer ServiceAccount of the
// catalog component in namespace ns, with the shipped driver charts' rights
// on BackupClasses (create; the rest on class by name).
func installer(t *testing.T, ctx context.Context, c client.Client, ns, class string) client.Client {
	t.Helper()
	name := "driver--0123456789-installer"
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "redteam:" + ns + ":" + class}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"backupclasses"}, Verbs: []string{"create"}},
			{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"backupclasses"}, ResourceNames: []string{class}, Verbs: []string{"get", "update", "patch", "delete"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "redteam:" + ns + ":" + class},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "redteam:" + ns + ":" + class},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	// The admin's mapper: what a kind maps to does not depend on who asks.
	ic, err := client.New(cfg, client.Options{Scheme: c.Scheme(), Mapper: c.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	return ic
}

// writeClass creates (or replaces) BackupClass name, Postgres by the Job
// strategy with params, as w; labels are what the writer sends.
func writeClass(t *testing.T, ctx context.Context, w, admin client.Client, name string, labels map[string]string, p map[string]any) *v1alpha1.BackupClass {
	t.Helper()
	old := &v1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := admin.Delete(ctx, old); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	bc := &v1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: v1alpha1.BackupClassSpec{
		Strategies: []v1alpha1.ClassStrategy{{ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"},
			Strategy: v1alpha1.Strategy{Kind: jobdriver.StrategyKind, Parameters: params(t, p)}}},
	}}
	if err := createClass(ctx, w, bc); err != nil {
		t.Fatalf("write BackupClass %s: %T %v", name, err, err)
	}
	return bc
}

// createClass creates bc as w, again while the kind is not known yet: a
// client made right after the CRDs were applied may not find it in
// discovery, and the API server's admission (the mutating policy
// backupclass-owner.cozystack.io) answers NotFound "Resource kind ... not
// found" until it has the new CRD's schema. Any other error is returned.
func createClass(ctx context.Context, w client.Client, bc *v1alpha1.BackupClass) error {
	var err error
	for i := 0; i < 150; i++ {
		if err = w.Create(ctx, bc); !apimeta.IsNoMatchError(err) && !(apierrors.IsNotFound(err) && strings.Contains(err.Error(), "Resource kind")) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return err
}

// runJob creates BackupJob name in ns for class bc and binds it to the Job
// driver the way the core does (the class's strategy copied), then waits
// for a terminal phase and returns the job.
func runJob(t *testing.T, ctx context.Context, c client.Client, ns, name string, bc *v1alpha1.BackupClass) *v1alpha1.BackupJob {
	t.Helper()
	job := &v1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{v1alpha1.LabelDriver: jobdriver.DefaultName}},
		Spec: v1alpha1.BackupJobSpec{BackupClassName: bc.Name, ApplicationRef: v1alpha1.ApplicationRef{
			ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db"}},
	}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	st := map[string]any{
		"phase": "Pending",
		"binding": v1alpha1.Binding{
			DriverRef:       v1alpha1.DriverRef{Name: jobdriver.DefaultName, ProtocolVersion: v1alpha1.ProtocolVersion},
			Strategy:        bc.Spec.Strategies[0].Strategy,
			BackupClassName: bc.Name, Timeouts: bc.Timeouts(), BoundTime: metav1.Now(),
		},
		"applicationSnapshot": map[string]any{"version": "16"},
	}
	if err := apply.Status(ctx, c, job, st, v1alpha1.CoreFieldManager); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.BackupJob{}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, got); err != nil {
			return false, err
		}
		if got.Status.Phase.Terminal() {
			return true, nil
		}
		// Nothing runs pods here: once the Job exists, complete it as the
		// Job controller would.
		var jobs batchv1.JobList
		if err := c.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRun: string(got.UID)}); err != nil {
			return false, err
		}
		for i := range jobs.Items {
			if err := complete(ctx, c, &jobs.Items[i]); err != nil && !apierrors.IsConflict(err) {
				return false, err
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("job %s/%s did not end: %v (status %+v)", ns, name, err, got.Status)
	}
	return got
}

// fingerprint is a digest of every Secret, ServiceAccount, Job and Pod of
// namespace ns, and of the Namespace itself (its labels): the victim's state.
func fingerprint(t *testing.T, ctx context.Context, c client.Client, ns string) string {
	t.Helper()
	h := sha256.New()
	n := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(h, n.Labels, n.Annotations)
	var secrets corev1.SecretList
	var sas corev1.ServiceAccountList
	var jobs batchv1.JobList
	var pods corev1.PodList
	for _, l := range []client.ObjectList{&secrets, &sas, &jobs, &pods} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	var lines []string
	for _, s := range secrets.Items {
		d, _ := json.Marshal(s.Data)
		lines = append(lines, "secret "+s.Name+" "+s.ResourceVersion+" "+string(d))
	}
	for _, s := range sas.Items {
		lines = append(lines, "sa "+s.Name+" "+s.ResourceVersion)
	}
	for _, j := range jobs.Items {
		lines = append(lines, "job "+j.Name)
	}
	for _, p := range pods.Items {
		lines = append(lines, "pod "+p.Name)
	}
	slices.Sort(lines)
	fmt.Fprintln(h, strings.Join(lines, "\n"))
	return fmt.Sprintf("%x", h.Sum(nil))
}

// compliant is a Job template as a plain class writes it: image and args,
// no securityContext (the driver adds restricted's defaults).
func compliant(role string) map[string]any { return jobTemplate(role, role, "{{ .Application.Name }}") }

// attack is the Job template of the issue: a privileged container with the
// node's root file system, the host's PID and network namespaces, as the
// namespace's default ServiceAccount.
func attack() map[string]any {
	return map[string]any{"spec": map[string]any{"backoffLimit": 0, "template": map[string]any{"spec": map[string]any{
		"restartPolicy": "Never", "hostPID": true, "hostNetwork": true, "serviceAccountName": "default",
		"containers": []any{map[string]any{"name": "backup", "image": "registry.example/backup-tool:1",
			"args":            []any{"sh", "-c", "cat /host/etc/shadow; cat /creds/token"},
			"securityContext": map[string]any{"privileged": true},
			"volumeMounts":    []any{map[string]any{"name": "root", "mountPath": "/host"}}}},
		"volumes": []any{map[string]any{"name": "root", "hostPath": map[string]any{"path": "/"}}},
	}}}}
}

// TestRedTeamBackupClasses: a privileged catalog with
// only the shipped driver charts' rights on BackupClasses writes a Job
// class; the Job driver refuses every pod that fails Pod Security
// "restricted" or runs as another ServiceAccount, and every Secret that is
// not in the class's own namespace, naming the fields, the class and who
// must act; nothing is created in the tenant namespace and the cozy-system
// Secret is not copied. A compliant class of a catalog's own Secret runs.
func TestRedTeamBackupClasses(t *testing.T) {
	ctx, c := redteam(t)
	evil := installer(t, ctx, c, evilNS, "evil")
	platformSecret := fingerprint(t, ctx, c, "cozy-system")

	for _, tc := range []struct {
		name string
		// writer writes the class: the evil catalog, or the admin (a
		// person: the cluster operator).
		writer client.Client
		labels map[string]string
		params map[string]any
		reason string
		want   []string
	}{{
		name: "privileged-host-pod", writer: evil,
		params: map[string]any{"backup": attack(), "secrets": []any{"platform-credentials"}},
		reason: v1alpha1.ReasonPodSecurityViolation,
		want: []string{"BackupClass evil", `fails Pod Security "restricted"`, "privileged", "hostNetwork=true", "hostPID=true", "hostPath",
			`backup.spec.template.spec.serviceAccountName is "default"`, "catalog that ships the class"},
	}, {
		name: "installer-service-account", writer: evil,
		params: map[string]any{"backup": withSpec(compliant("backup"), "serviceAccountName", "cozy-tenant-installer")},
		reason: v1alpha1.ReasonPodSecurityViolation,
		want:   []string{"BackupClass evil", `serviceAccountName is "cozy-tenant-installer"`, jobdriver.ServiceAccount},
	}, {
		name: "token", writer: evil,
		params: map[string]any{"backup": withSpec(compliant("backup"), "automountServiceAccountToken", true)},
		reason: v1alpha1.ReasonPodSecurityViolation,
		want:   []string{"automountServiceAccountToken is true"},
	}, {
		// The catalog asks for cozy-system's Secret by labelling its class
		// cozy-system: the platform sets the label to the writer's own
		// namespace, where no such Secret is.
		name: "platform-secret-by-label", writer: evil,
		labels: map[string]string{v1alpha1.LabelClassNamespace: "cozy-system"},
		params: map[string]any{"backup": compliant("backup"), "secrets": []any{"platform-credentials"}},
		reason: v1alpha1.ReasonSecretNotAllowed,
		want:   []string{"BackupClass evil", "Secret " + evilNS + "/platform-credentials", "Package evil", "does not exist"},
	}, {
		// Even the cluster operator's class cannot hand out a system
		// namespace's Secrets.
		name: "operator-class-of-system-namespace", writer: c,
		labels: map[string]string{v1alpha1.LabelClassNamespace: "cozy-system"},
		params: map[string]any{"backup": compliant("backup"), "secrets": []any{"platform-credentials"}},
		reason: v1alpha1.ReasonSecretNotAllowed,
		want:   []string{"BackupClass evil", "namespace cozy-system", "belongs to the system"},
	}, {
		// Nor the Job driver's own namespace (cozy-system in a platform
		// install), where the driver used to read them from.
		name: "driver-namespace", writer: c,
		labels: map[string]string{v1alpha1.LabelClassNamespace: driverNamespace},
		params: map[string]any{"backup": compliant("backup"), "secrets": []any{"x"}},
		reason: v1alpha1.ReasonSecretNotAllowed,
		want:   []string{"namespace " + driverNamespace, "belongs to the system"},
	}, {
		name: "tenant-namespace", writer: c,
		labels: map[string]string{v1alpha1.LabelClassNamespace: victimNS},
		params: map[string]any{"backup": compliant("backup"), "secrets": []any{"x"}},
		reason: v1alpha1.ReasonSecretNotAllowed,
		want:   []string{"namespace " + victimNS, `tenant "victim"`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			victim := fingerprint(t, ctx, c, victimNS)
			bc := writeClass(t, ctx, tc.writer, c, "evil", tc.labels, tc.params)
			if tc.writer == evil {
				got := &v1alpha1.BackupClass{}
				if err := c.Get(ctx, client.ObjectKey{Name: "evil"}, got); err != nil {
					t.Fatal(err)
				}
				if ns := got.Labels[v1alpha1.LabelClassNamespace]; ns != evilNS {
					t.Fatalf("a class written by %s's installer records namespace %q, want %s (set by the platform)", evilNS, ns, evilNS)
				}
				bc = got
			}
			job := runJob(t, ctx, c, victimNS, "redteam-"+tc.name, bc)
			ready := apimeta.FindStatusCondition(job.Status.Conditions, v1alpha1.ConditionReady)
			if job.Status.Phase != v1alpha1.PhaseFailed || ready == nil || ready.Reason != tc.reason {
				t.Fatalf("phase %s, Ready %+v; want Failed with reason %s", job.Status.Phase, ready, tc.reason)
			}
			for _, s := range tc.want {
				if !strings.Contains(ready.Message, s) {
					t.Errorf("message %q does not name %q", ready.Message, s)
				}
			}
			if after := fingerprint(t, ctx, c, victimNS); after != victim {
				t.Errorf("the tenant namespace changed (a Secret, ServiceAccount, Job or Pod was created)")
			}
			if after := fingerprint(t, ctx, c, "cozy-system"); after != platformSecret {
				t.Errorf("cozy-system changed")
			}
			var secrets corev1.SecretList
			if err := c.List(ctx, &secrets, client.MatchingLabels{v1alpha1.LabelRun: string(job.UID)}); err != nil {
				t.Fatal(err)
			}
			if len(secrets.Items) != 0 {
				t.Errorf("%d Secrets projected for a refused run, e.g. %s/%s", len(secrets.Items), secrets.Items[0].Namespace, secrets.Items[0].Name)
			}
		})
	}

	// A compliant class of a catalog, with its own Secret: the Job runs
	// as cozy-backup-job with no token and restricted's defaults, the
	// Secret is its catalog's, and the real Pod Security admission of the
	// restricted tenant namespace admits the pod.
	t.Run("compliant-class-runs", func(t *testing.T) {
		good := installer(t, ctx, c, goodNS, "good")
		bc := writeClass(t, ctx, good, c, "good", nil, map[string]any{
			"backup": compliant("backup"), "secrets": []any{"s3"},
			"driverData": map[string]any{"path": "s3://b/{{ .Application.Namespace }}/{{ .Job.UID }}"}})
		got := &v1alpha1.BackupClass{}
		if err := c.Get(ctx, client.ObjectKey{Name: bc.Name}, got); err != nil {
			t.Fatal(err)
		}
		job := runJob(t, ctx, c, victimNS, "compliant", got)
		if job.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Fatalf("phase %s, conditions %+v; want Succeeded", job.Status.Phase, job.Status.Conditions)
		}
		var jobs batchv1.JobList
		if err := c.List(ctx, &jobs, client.InNamespace(victimNS), client.MatchingLabels{v1alpha1.LabelRun: string(job.UID)}); err != nil {
			t.Fatal(err)
		}
		if len(jobs.Items) != 1 {
			t.Fatalf("%d Jobs, want 1", len(jobs.Items))
		}
		spec := jobs.Items[0].Spec.Template.Spec
		if spec.ServiceAccountName != jobdriver.ServiceAccount || spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			t.Errorf("pod runs as %q, automount %v; want %s with no token", spec.ServiceAccountName, spec.AutomountServiceAccountToken, jobdriver.ServiceAccount)
		}
		sa := &corev1.ServiceAccount{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: victimNS, Name: jobdriver.ServiceAccount}, sa); err != nil {
			t.Fatalf("the driver's ServiceAccount: %v", err)
		}
		var bindings rbacv1.RoleBindingList
		if err := c.List(ctx, &bindings, client.InNamespace(victimNS)); err != nil {
			t.Fatal(err)
		}
		for _, b := range bindings.Items {
			for _, s := range b.Subjects {
				if s.Kind == rbacv1.ServiceAccountKind && s.Name == jobdriver.ServiceAccount {
					t.Errorf("RoleBinding %s binds %s", b.Name, jobdriver.ServiceAccount)
				}
			}
		}
		cred := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: victimNS, Name: driver.ObjectName("compliant", "cred-s3")}, cred); err != nil {
			t.Fatalf("the projected Secret: %v", err)
		}
		if string(cred.Data["key"]) != "good-catalog-key" {
			t.Errorf("projected %q, want the good catalog's key", cred.Data["key"])
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "psa-probe", Namespace: victimNS}, Spec: spec}
		if err := c.Create(ctx, pod, client.DryRunAll); err != nil {
			t.Errorf("Pod Security of %s refuses the driver's pod: %v", victimNS, err)
		}
		// The attack's pod, by contrast, is refused by the namespace's
		// own admission too.
		bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "psa-probe-bad", Namespace: victimNS}, Spec: spec}
		bad.Spec.HostPID = true
		if err := c.Create(ctx, bad, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "restricted") {
			t.Errorf("Pod Security of %s admits a hostPID pod: %v", victimNS, err)
		}
	})
}

// withSpec sets key of a Job template's pod spec.
func withSpec(tmpl map[string]any, key string, value any) map[string]any {
	tmpl["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)[key] = value
	return tmpl
}

// TestReservedClassNames: BackupClass "default" (and "job") cannot be
// written by a catalog's ServiceAccount, even one holding create on
// backupclasses; the refusal names the policy's rule. The cluster
// operator (system:masters) writes it.
func TestReservedClassNames(t *testing.T) {
	c := fullClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := tenantaccess.Apply(ctx, c); err != nil {
		t.Fatal(err)
	}
	const squatter = "cozy-squatter"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: squatter}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	for _, name := range v1alpha1.ReservedClassNames {
		w := installer(t, ctx, c, squatter, name)
		bc := &v1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.BackupClassSpec{
			Strategies: []v1alpha1.ClassStrategy{{ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"},
				Strategy: v1alpha1.Strategy{Kind: jobdriver.StrategyKind, Parameters: params(t, validParams())}}},
		}}
		// A policy takes effect a moment after it is written: a create
		// that got through before is undone and tried again.
		var err error
		for i := 0; i < 50; i++ {
			if err = createClass(ctx, w, bc.DeepCopy()); err != nil {
				break
			}
			if err := c.Delete(ctx, bc.DeepCopy()); client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "BackupClass "+name+" is reserved for the platform") ||
			!strings.Contains(err.Error(), "backupclass-reserved-names.cozystack.io") {
			t.Errorf("a catalog's installer creating BackupClass %s: %v; want the policy's refusal", name, err)
		}
		if err := c.Create(ctx, bc.DeepCopy(), client.DryRunAll); err != nil {
			t.Errorf("the cluster operator creating BackupClass %s: %v", name, err)
		}
	}
}
