package restore

import (
	"context"
	"fmt"
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// ReviewUser is the user of the SubjectAccessReviews the core sends
// before it creates a NewApplication target. It is a name only, never an
// identity anything authenticates as: what the review asks about is its
// groups, those of the tenant level checked.
const ReviewUser = "cozystack-backup-core:restore-check"

// requiredLevel is the tenant level a NewApplication restore asks for:
// the least level that may create a RestoreJob (platform/tenantaccess,
// cozy:tenant:admin:backups).
const requiredLevel = v1alpha1.TenantLevelAdmin

// accessReview is the SubjectAccessReview asking whether the members of
// tenant namespace ns's group of level (v1alpha1.TenantGroup) may create
// the target t's resource in ns. It names no object, as kube-apiserver
// authorizes a create (RBAC's resourceNames never allow one).
func accessReview(ns, level string, t *target) *authorizationv1.SubjectAccessReview {
	return &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   ReviewUser,
		Groups: []string{v1alpha1.TenantGroup(ns, level), "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns,
			Verb:      "create",
			Group:     t.gvr.Group,
			Version:   t.gvr.Version,
			Resource:  t.gvr.Resource,
		},
	}}
}

// allowed sends the review of level for t in ns and returns its answer.
// An evaluation error without an allow is a refusal (RBAC evaluates every
// rule it can; an allow is never lost to one). Errors are the API's.
func allowed(ctx context.Context, c client.Client, ns, level string, t *target) (bool, error) {
	sar := accessReview(ns, level, t)
	if err := c.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("SubjectAccessReview of %s %s/%s for group %s: %w", t.ref.Kind, ns, t.ref.Name, v1alpha1.TenantGroup(ns, level), err)
	}
	return sar.Status.Allowed, nil
}

// mayCreate decides whether the core may create target t for job, which
// it does with its own identity: only when job's namespace is a tenant
// namespace (labelled v1alpha1.LabelTenant) whose admins could create t
// themselves. Otherwise the job fails with TargetForbidden, naming the
// kind, the namespace, the level it takes and the way out. A namespace
// that is no tenant's is not checked: tenant roles are bound only in
// tenant namespaces (platform/internal/controller/tenantrbac), so only
// cluster administrators (and whom they give rights there) create
// RestoreJobs in it. Namespaces are read from the API server (the
// reader's), not a cache: a security decision rests on them. Errors are
// the API's.
func mayCreate(ctx context.Context, c client.Client, r client.Reader, job *backupsv1alpha1.RestoreJob, b *backupsv1alpha1.Backup, t *target) (outcome, error) {
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: job.Namespace}, ns); err != nil {
		return outcome{}, fmt.Errorf("get namespace %s: %w", job.Namespace, err)
	}
	if _, tenant := ns.Labels[v1alpha1.LabelTenant]; !tenant {
		return outcome{}, nil
	}
	ok, err := allowed(ctx, c, job.Namespace, requiredLevel, t)
	if err != nil || ok {
		return outcome{}, err
	}
	// Refused: find the level it takes, for the message (the job fails
	// either way).
	needed := ""
	above := v1alpha1.TenantLevels[slices.Index(v1alpha1.TenantLevels, requiredLevel)+1:]
	for _, level := range above {
		ok, err := allowed(ctx, c, job.Namespace, level, t)
		if err != nil {
			return outcome{}, err
		}
		if ok {
			needed = level
			break
		}
	}
	return forbidden(job, b, t, needed), nil
}

// forbidden is the TargetForbidden failure of job, whose target t takes
// tenant level needed ("" when no tenant level may create it) in the
// job's namespace. The way out is to create the application as someone
// who may, and restore into it InPlace, which only a Backup of the job's
// namespace can.
func forbidden(job *backupsv1alpha1.RestoreJob, b *backupsv1alpha1.Backup, t *target, needed string) outcome {
	ns := job.Namespace
	takes, who := "no tenant level may create it there, only a cluster administrator", "a cluster administrator"
	if needed != "" {
		takes = fmt.Sprintf("that takes the level %s (group %s)", needed, v1alpha1.TenantGroup(ns, needed))
		who = "a " + needed + " of the tenant"
	}
	way := fmt.Sprintf("create the application %s %s in namespace %s yourself (as %s) and restore Backup %s into it with target.mode InPlace",
		t.ref.Kind, b.Spec.ApplicationRef.Name, ns, who, b.Name)
	if b.Namespace != ns {
		way = fmt.Sprintf("create the application %s yourself (as %s) and restore it with target.mode InPlace, from a Backup of namespace %s (InPlace does not restore Backup %s/%s of another namespace)",
			t.ref.Kind, who, ns, b.Namespace, b.Name)
	}
	return failed(backupsv1alpha1.ReasonTargetForbidden,
		"the backup core creates the application of a NewApplication restore with its own identity, so it creates only a kind the tenant's admins (group %s) may create themselves, and they may not create %s (%s %s) in namespace %s: %s. Nothing was created; %s",
		v1alpha1.TenantGroup(ns, requiredLevel), t.ref.Kind, t.gvr.Group, t.gvr.Resource, ns, takes, way)
}
