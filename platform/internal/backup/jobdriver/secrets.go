package jobdriver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// systemNamespaces never give Secrets to a class, whatever its label says;
// so does every "kube-" namespace and the driver's own.
var systemNamespaces = []string{"default", cozyv1alpha1.SystemNamespace, "flux-system"}

// refusedTypes are Secret types that are never a backup credential: an
// API token, Helm's release records (values, possibly with passwords).
var refusedTypes = []corev1.SecretType{corev1.SecretTypeServiceAccountToken, "helm.sh/release.v1"}

// secretSource returns the namespace the Secrets of class's parameters
// come from, after checking each is one the driver may project (contract
// k7, "Tenant isolation"):
//   - the class exists and still holds the run's strategy (a class
//     deleted and written again by someone else gives its Secrets to
//     nobody's earlier templates);
//   - its label v1alpha1.LabelClassNamespace, which the platform's
//     admission policy sets to the namespace of the ServiceAccount that
//     wrote the class, names a namespace a Package owns (the operator's
//     annotation cozystack.io/package), not the system's (cozy-system,
//     kube-*, default, flux-system, the driver's own), not a tenant's and
//     not a Package's release storage;
//   - each Secret exists there and is not an API token or a Helm record.
//
// Any refusal is a *driver.RunError, reason SecretNotAllowed, naming the
// field, the class and its owner. secrets empty: "" and nil, nothing read.
func secretSource(ctx context.Context, c client.Client, own, class string, strategy v1alpha1.Strategy, secrets []string) (string, error) {
	if len(secrets) == 0 {
		return "", nil
	}
	refuse := func(format string, args ...any) error {
		return driver.Fail(v1alpha1.ReasonSecretNotAllowed, "parameters.secrets of BackupClass %s: %s (contract k7, \"Tenant isolation\")", class, fmt.Sprintf(format, args...))
	}
	bc := &v1alpha1.BackupClass{}
	if err := c.Get(ctx, client.ObjectKey{Name: class}, bc); apierrors.IsNotFound(err) {
		return "", refuse("the class no longer exists, so no namespace is its own: bind the job to a class that does")
	} else if err != nil {
		return "", err
	}
	if !holds(bc, strategy) {
		return "", refuse("the class no longer holds the strategy this run was bound with: start a new job")
	}
	ns := bc.Labels[v1alpha1.LabelClassNamespace]
	if ns == "" {
		return "", refuse("the class records no namespace of its own (label %s, set by the platform when a catalog's installer writes the class): "+
			"a class the cluster operator writes names it by that label", v1alpha1.LabelClassNamespace)
	}
	if slices.Contains(systemNamespaces, ns) || strings.HasPrefix(ns, "kube-") || ns == own {
		return "", refuse("namespace %s (label %s) belongs to the system: Secrets come only from the namespace of the catalog component that ships the class", ns, v1alpha1.LabelClassNamespace)
	}
	n := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, n); apierrors.IsNotFound(err) {
		return "", refuse("namespace %s (label %s) does not exist", ns, v1alpha1.LabelClassNamespace)
	} else if err != nil {
		return "", err
	}
	pkg := n.Annotations[names.AnnotationPackage]
	switch t, tenant := n.Labels[cozyv1alpha1.LabelTenant]; {
	case tenant:
		return "", refuse("namespace %s is the tenant %q's: Secrets come only from the namespace of the catalog component that ships the class", ns, t)
	case pkg == "":
		return "", refuse("namespace %s was not created for a Package (no annotation %s): Secrets come only from the namespace of the catalog component that ships the class", ns, names.AnnotationPackage)
	case ns == names.StorageNamespace(pkg):
		return "", refuse("namespace %s holds Package %s's Helm release records, not credentials", ns, pkg)
	}
	for i, name := range secrets {
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); apierrors.IsNotFound(err) {
			return "", refuse("secrets[%d]: Secret %s/%s (Package %s's namespace) does not exist: its catalog or the cluster operator must create it", i, ns, name, pkg)
		} else if err != nil {
			return "", err
		}
		if slices.Contains(refusedTypes, s.Type) {
			return "", refuse("secrets[%d]: Secret %s/%s is of type %s, not a credential a backup may carry", i, ns, name, s.Type)
		}
	}
	return ns, nil
}

// holds reports whether class bc still has strategy s (kind and
// parameters, compared as JSON values) for some application kind.
func holds(bc *v1alpha1.BackupClass, s v1alpha1.Strategy) bool {
	for _, cs := range bc.Spec.Strategies {
		if cs.Strategy.Kind == s.Kind && sameJSON(cs.Strategy.Parameters, s.Parameters) {
			return true
		}
	}
	return false
}

func sameJSON(a, b *apiextensionsv1.JSON) bool {
	decode := func(j *apiextensionsv1.JSON) any {
		var v any
		if j != nil && len(j.Raw) > 0 {
			_ = json.Unmarshal(j.Raw, &v)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// ensureServiceAccount creates ServiceAccount in namespace ns unless it
// exists: no token mounted, labelled as the driver's. One there that the
// driver did not make (no such label) is refused: its rights are someone
// else's to give.
func ensureServiceAccount(ctx context.Context, c client.Client, ns string) error {
	sa := &corev1.ServiceAccount{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ServiceAccount}, sa)
	if err == nil {
		if sa.Labels[cozyv1alpha1.LabelManagedBy] != managedBy {
			return driver.Fail(v1alpha1.ReasonPodSecurityViolation,
				"ServiceAccount %s/%s, which backup pods run as, was not made by the Job driver (no label %s=%s): whoever made it must delete it; the driver then makes its own",
				ns, ServiceAccount, cozyv1alpha1.LabelManagedBy, managedBy)
		}
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	sa = &corev1.ServiceAccount{}
	sa.Name, sa.Namespace = ServiceAccount, ns
	sa.Labels = map[string]string{cozyv1alpha1.LabelManagedBy: managedBy, v1alpha1.LabelDriver: DefaultName}
	sa.AutomountServiceAccountToken = ptr.To(false)
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// managedBy is the value of app.kubernetes.io/managed-by on the driver's
// ServiceAccounts.
const managedBy = "cozystack-backup-job-driver"
