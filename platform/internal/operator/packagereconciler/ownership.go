package packagereconciler

import (
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

// packageGVK is the kind the operator's owner references name.
var packageGVK = v1alpha1.GroupVersion.WithKind("Package")

// IdentityFinalizer is on every object of a component's identity (its
// ServiceAccount, Role and RoleBinding, and its ClusterRole and
// ClusterRoleBinding): helm-controller uninstalls a HelmRelease through
// them, so they must outlive it however both are deleted (the Package's
// finalizer, a foreground deletion of the Package, the garbage collector
// after the Package's finalizer was bypassed, a namespace deletion). The
// operator removes it once no HelmRelease of the component is left.
const IdentityFinalizer = "cozystack.io/uninstall-identity"

// controlledBy reports whether Package p owns obj: obj's controller
// reference names a Package (group cozystack.io) with p's UID. It is the
// only test of ownership: labels and annotations are never enough, since
// anyone who can write an object can set them (a tenant's application
// passes its labels to its HelmRelease), and a UID cannot be guessed.
func controlledBy(obj metav1.Object, p *v1alpha1.Package) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return p.UID != "" && ref != nil && ref.UID == p.UID && isPackageRef(*ref)
}

// isPackageRef reports whether ref names a Package.
func isPackageRef(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == packageGVK.Group && ref.Kind == packageGVK.Kind
}

// controllerPackage returns the name of the Package obj's controller
// reference names, or "". It routes events to a reconcile, and proves
// nothing.
func controllerPackage(obj metav1.Object) string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil && isPackageRef(*ref) {
		return ref.Name
	}
	return ""
}

// application returns the kind and name of the application whose
// HelmRelease obj is, by the labels cozystack-api sets (K1), or "" when obj
// is no application's release. For messages only: the labels prove
// nothing.
func application(obj client.Object) (kind, name string) {
	if _, ok := obj.(*helmv2.HelmRelease); !ok {
		return "", ""
	}
	l := obj.GetLabels()
	if l[v1alpha1.LabelApplicationKind] == "" || l[v1alpha1.LabelApplicationName] == "" {
		return "", ""
	}
	return l[v1alpha1.LabelApplicationKind], l[v1alpha1.LabelApplicationName]
}

// describeOwner says, for a Conflict, who owns obj, which Package p does not
// control: the controller its controller reference names, or an
// application (by its labels), or nobody, saying what obj only claims.
func describeOwner(obj client.Object, p *v1alpha1.Package) string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		switch {
		case isPackageRef(*ref) && ref.Name == p.Name:
			return fmt.Sprintf("another Package named %q (uid %s; this one is %s): a Package of this name deleted earlier left it behind", ref.Name, ref.UID, p.UID)
		case isPackageRef(*ref):
			return fmt.Sprintf("Package %q", ref.Name)
		default:
			return fmt.Sprintf("%s %q (%s)", ref.Kind, ref.Name, ref.APIVersion)
		}
	}
	if kind, name := application(obj); kind != "" {
		return fmt.Sprintf("application %s %s/%s", kind, obj.GetNamespace(), name)
	}
	if claimed := obj.GetAnnotations()[names.AnnotationPackage]; claimed != "" {
		return fmt.Sprintf("no Package: it has no controller reference, and its annotation %s=%q proves nothing", names.AnnotationPackage, claimed)
	}
	return "no Package (something else created it)"
}

// conflict is an existing object in the way of one the Package would write.
type conflict struct {
	// what is "<Kind> <namespace>/<name>".
	what      string
	component string
	// owner is describeOwner's.
	owner string
	// appKind and appName name the application whose HelmRelease the
	// object is ("" when none); namespace is its namespace.
	appKind, appName, namespace string
}

// newConflict describes cur, of kind, which p does not control, in the way
// of component's object.
func newConflict(kind string, cur client.Object, component string, p *v1alpha1.Package) conflict {
	c := conflict{what: describe(kind, cur), component: component, owner: describeOwner(cur, p), namespace: cur.GetNamespace()}
	if metav1.GetControllerOfNoCopy(cur) == nil {
		c.appKind, c.appName = application(cur)
	}
	return c
}

// conflictMessage is the Conflict message for cs (at least one): each
// object, what owns it, and who must act. An application's release is told
// apart: its tenant (or a cluster admin) must remove it; cozystack-api
// refuses new applications with such names (names.ReservedRelease), so only
// one created before can be in the way.
func conflictMessage(cs []conflict) string {
	var foreign, apps []string
	for _, c := range cs {
		if c.appKind != "" {
			apps = append(apps, fmt.Sprintf("%s (component %s) is the HelmRelease of application %s %s, created in namespace %s before the component was installed: the tenant of namespace %s (or a cluster admin) must delete application %s %s; applications can no longer take such names",
				c.what, c.component, c.appKind, c.appName, c.namespace, c.namespace, c.appKind, c.appName))
			continue
		}
		foreign = append(foreign, fmt.Sprintf("%s (component %s) exists and belongs to %s", c.what, c.component, c.owner))
	}
	var parts []string
	if len(foreign) > 0 {
		parts = append(parts, strings.Join(foreign, "; ")+": it is never overwritten or adopted; delete or rename it, or uninstall its owner")
	}
	parts = append(parts, apps...)
	return strings.Join(parts, "; ") + "; nothing was installed"
}
