package restore

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

func vaultTarget(name string) *target {
	return &target{
		gvr: AppsGroupVersion.WithResource("restorevaults"),
		ref: backupsv1alpha1.ApplicationRef{ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: AppsGroupVersion.Group, Kind: "RestoreVault"}, Name: name},
	}
}

// The review asks about the tenant group of the level in the job's
// namespace, for a create of the target's resource there, by no object
// name (RBAC's resourceNames never allow a create).
func TestAccessReview(t *testing.T) {
	for _, tc := range []struct {
		name string
		// why is the rule the case pins.
		why    string
		ns     string
		level  string
		target *target
		want   authorizationv1.SubjectAccessReviewSpec
	}{
		{
			name:   "admin of a tenant",
			why:    "the review asks whether the tenant's admin group may create the target kind in its namespace",
			ns:     "tenant-alice",
			level:  v1alpha1.TenantLevelAdmin,
			target: vaultTarget("copy"),
			want: authorizationv1.SubjectAccessReviewSpec{
				User:   ReviewUser,
				Groups: []string{"tenant-alice-admin", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: "tenant-alice", Verb: "create", Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "restorevaults",
				},
			},
		},
		{
			name:   "super-admin of a nested tenant",
			why:    "the group is the namespace's, at the level asked, for a nested tenant too",
			ns:     "tenant-root-acme",
			level:  v1alpha1.TenantLevelSuperAdmin,
			target: vaultTarget("x"),
			want: authorizationv1.SubjectAccessReviewSpec{
				User:   ReviewUser,
				Groups: []string{"tenant-root-acme-super-admin", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: "tenant-root-acme", Verb: "create", Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "restorevaults",
				},
			},
		},
		{
			name:  "the resource is the plural served",
			why:   "the review names the resource as the application API serves it (its plural), not the kind",
			ns:    "tenant-bob",
			level: v1alpha1.TenantLevelAdmin,
			target: &target{
				gvr: AppsGroupVersion.WithResource("tenants"),
				ref: backupsv1alpha1.ApplicationRef{ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: AppsGroupVersion.Group, Kind: "Tenant"}, Name: "child"},
			},
			want: authorizationv1.SubjectAccessReviewSpec{
				User:   ReviewUser,
				Groups: []string{"tenant-bob-admin", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: "tenant-bob", Verb: "create", Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "tenants",
				},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := accessReview(tc.ns, tc.level, tc.target)
			if d := cmp.Diff(tc.want, got.Spec); d != "" {
				t.Errorf("SubjectAccessReview spec (-want +got), %s:\n%s", tc.why, d)
			}
			if got.Name != "" || got.Namespace != "" {
				t.Errorf("SubjectAccessReview %s/%s: want no name (cluster-scoped, not stored)", got.Namespace, got.Name)
			}
		})
	}
}

// mayCreate sends no review for a namespace that is no tenant's, allows
// what the admins may create, and otherwise fails with TargetForbidden,
// naming the least level above admin that may (asked by further reviews),
// or none.
func TestMayCreate(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	namespace := func(name string, tenant bool) *corev1.Namespace {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if tenant {
			ns.Labels = map[string]string{v1alpha1.LabelTenant: strings.TrimPrefix(name, "tenant-")}
		}
		return ns
	}
	for _, tc := range []struct {
		name string
		// why is the rule the case pins.
		why string
		ns  *corev1.Namespace
		// allowed are the groups the fake authorizer allows.
		allowed       []string
		backupNS      string
		wantReviews   []string
		wantFail      bool
		wantInMessage []string
	}{
		{
			name:     "not a tenant namespace",
			why:      "outside tenant namespaces no review is sent: only a cluster administrator creates there",
			ns:       namespace("plain", false),
			backupNS: "plain",
			wantFail: false,
		},
		{
			name:        "admins may",
			why:         "what the tenant's admins may create is allowed after one review",
			ns:          namespace("tenant-alice", true),
			allowed:     []string{"tenant-alice-admin"},
			backupNS:    "tenant-alice",
			wantReviews: []string{"tenant-alice-admin"},
			wantFail:    false,
		},
		{
			name:        "super-admins only",
			why:         "a kind only super-admins may create fails naming the level, its group and how to restore it yourself",
			ns:          namespace("tenant-alice", true),
			allowed:     []string{"tenant-alice-super-admin"},
			backupNS:    "tenant-alice",
			wantReviews: []string{"tenant-alice-admin", "tenant-alice-super-admin"},
			wantFail:    true,
			wantInMessage: []string{"RestoreVault (apps.cozystack.io restorevaults) in namespace tenant-alice", "takes the level super-admin (group tenant-alice-super-admin)",
				"Nothing was created", "RestoreVault vault in namespace tenant-alice yourself (as a super-admin of the tenant)", "target.mode InPlace"},
		},
		{
			name:          "no tenant level",
			why:           "a kind no tenant level may create fails naming the cluster administrator",
			ns:            namespace("tenant-alice", true),
			backupNS:      "tenant-alice",
			wantReviews:   []string{"tenant-alice-admin", "tenant-alice-super-admin"},
			wantFail:      true,
			wantInMessage: []string{"only a cluster administrator", "(as a cluster administrator)"},
		},
		{
			name:          "a Backup of another namespace",
			why:           "a restore into another namespace names both namespaces and that InPlace does not apply",
			ns:            namespace("tenant-bob", true),
			allowed:       []string{"tenant-bob-super-admin"},
			backupNS:      "tenant-alice",
			wantReviews:   []string{"tenant-bob-admin", "tenant-bob-super-admin"},
			wantFail:      true,
			wantInMessage: []string{"in namespace tenant-bob", "from a Backup of namespace tenant-bob", "InPlace does not restore Backup tenant-alice/vault-1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reviews []string
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.ns).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					sar, ok := obj.(*authorizationv1.SubjectAccessReview)
					if !ok {
						return c.Create(ctx, obj, opts...)
					}
					group := sar.Spec.Groups[0]
					reviews = append(reviews, group)
					for _, g := range tc.allowed {
						sar.Status.Allowed = sar.Status.Allowed || g == group
					}
					return nil
				},
			}).Build()
			job := &backupsv1alpha1.RestoreJob{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns.Name, Name: "copy"}}
			b := &backupsv1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: tc.backupNS, Name: "vault-1"},
				Spec: backupsv1alpha1.BackupSpec{ApplicationRef: backupsv1alpha1.ApplicationRef{Name: "vault"}}}
			o, err := mayCreate(context.Background(), c, c, job, b, vaultTarget("copy"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantReviews, reviews); d != "" {
				t.Errorf("reviews of groups (-want +got), %s:\n%s", tc.why, d)
			}
			if o.wait != nil || (o.fail != nil) != tc.wantFail {
				t.Fatalf("outcome %+v, want failure %v: %s", o, tc.wantFail, tc.why)
			}
			if o.fail == nil {
				return
			}
			t.Logf("TargetForbidden: %s", o.fail.message)
			if o.fail.reason != backupsv1alpha1.ReasonTargetForbidden || o.fail.status != metav1.ConditionFalse {
				t.Errorf("verdict %+v, want False TargetForbidden", o.fail)
			}
			for _, want := range tc.wantInMessage {
				if !strings.Contains(o.fail.message, want) {
					t.Errorf("message %q lacks %q: %s", o.fail.message, want, tc.why)
				}
			}
		})
	}
}
