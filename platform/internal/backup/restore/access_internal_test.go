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
		name, ns, level string
		target          *target
		want            authorizationv1.SubjectAccessReviewSpec
	}{
		{"admin of a tenant", "tenant-alice", v1alpha1.TenantLevelAdmin, vaultTarget("copy"), authorizationv1.SubjectAccessReviewSpec{
			User:   ReviewUser,
			Groups: []string{"tenant-alice-admin", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "tenant-alice", Verb: "create", Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "restorevaults",
			},
		}},
		{"super-admin of a nested tenant", "tenant-root-acme", v1alpha1.TenantLevelSuperAdmin, vaultTarget("x"), authorizationv1.SubjectAccessReviewSpec{
			User:   ReviewUser,
			Groups: []string{"tenant-root-acme-super-admin", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "tenant-root-acme", Verb: "create", Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "restorevaults",
			},
		}},
		{"the resource is the plural served", "tenant-bob", v1alpha1.TenantLevelAdmin, &target{
			gvr: AppsGroupVersion.WithResource("tenants"),
			ref: backupsv1alpha1.ApplicationRef{ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: AppsGroupVersion.Group, Kind: "Tenant"}, Name: "child"},
		}, authorizationv1.SubjectAccessReviewSpec{
			User:   ReviewUser,
			Groups: []string{"tenant-bob-admin", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "tenant-bob", Verb: "create", Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "tenants",
			},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := accessReview(tc.ns, tc.level, tc.target)
			if d := cmp.Diff(tc.want, got.Spec); d != "" {
				t.Errorf("SubjectAccessReview spec (-want +got):\n%s", d)
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
		ns   *corev1.Namespace
		// allowed are the groups the fake authorizer allows.
		allowed       []string
		backupNS      string
		wantReviews   []string
		wantFail      bool
		wantInMessage []string
	}{
		{"not a tenant namespace", namespace("plain", false), nil, "plain", nil, false, nil},
		{"admins may", namespace("tenant-alice", true), []string{"tenant-alice-admin"}, "tenant-alice",
			[]string{"tenant-alice-admin"}, false, nil},
		{"super-admins only", namespace("tenant-alice", true), []string{"tenant-alice-super-admin"}, "tenant-alice",
			[]string{"tenant-alice-admin", "tenant-alice-super-admin"}, true,
			[]string{"RestoreVault (apps.cozystack.io restorevaults) in namespace tenant-alice", "takes the level super-admin (group tenant-alice-super-admin)",
				"Nothing was created", "RestoreVault vault in namespace tenant-alice yourself (as a super-admin of the tenant)", "target.mode InPlace"}},
		{"no tenant level", namespace("tenant-alice", true), nil, "tenant-alice",
			[]string{"tenant-alice-admin", "tenant-alice-super-admin"}, true,
			[]string{"only a cluster administrator", "(as a cluster administrator)"}},
		{"a Backup of another namespace", namespace("tenant-bob", true), []string{"tenant-bob-super-admin"}, "tenant-alice",
			[]string{"tenant-bob-admin", "tenant-bob-super-admin"}, true,
			[]string{"in namespace tenant-bob", "from a Backup of namespace tenant-bob", "InPlace does not restore Backup tenant-alice/vault-1"}},
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
				t.Errorf("reviews of groups (-want +got):\n%s", d)
			}
			if o.wait != nil || (o.fail != nil) != tc.wantFail {
				t.Fatalf("outcome %+v, want failure %v", o, tc.wantFail)
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
					t.Errorf("message %q lacks %q", o.fail.message, want)
				}
			}
		})
	}
}
