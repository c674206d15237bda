package application

import (
	"context"
	"fmt"
	"regexp"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// ReasonConflict is the reason of an application's Ready condition when
// its release would take an object another release, or nobody through
// Helm, owns: application HelmReleases never take ownership
// (DisableTakeOwnership), so Helm refuses the install or upgrade, and the
// owner's object is left as it is (contract K1, "The HelmRelease of an
// object").
const ReasonConflict = "Conflict"

// Helm (helm.sh/helm/v3 action, validate.go) refuses an object it does not
// own with "<Kind> "<name>" in namespace "<ns>" exists and cannot be
// imported into the current release: invalid ownership metadata; ...",
// naming the owning release when the object has one: `key
// "meta.helm.sh/release-name" must equal "<ours>": current value is
// "<theirs>"`, and the same for meta.helm.sh/release-namespace.
var (
	helmTakenObject    = regexp.MustCompile(`(\S+ "[^"]*" in namespace "[^"]*") exists and cannot be imported into the current release`)
	helmOwnerRelease   = regexp.MustCompile(`key "meta\.helm\.sh/release-name" must equal "[^"]*": current value is "([^"]*)"`)
	helmOwnerNamespace = regexp.MustCompile(`key "meta\.helm\.sh/release-namespace" must equal "[^"]*": current value is "([^"]*)"`)
)

// OwnerDescriber names what stands behind Helm release name in namespace
// ns, for a Conflict message: the application whose HelmRelease it is, or
// "" when that cannot be told.
type OwnerDescriber func(ns, name string) string

// conflictCondition returns the Ready condition of an application whose
// release failed because an object it renders belongs to someone else:
// reason Conflict, a message naming the object and its owner (the release
// and, through describe, the application behind it), and who must act. It
// returns nil when ready is not such a failure.
func conflictCondition(ready *metav1.Condition, releaseNamespace string, describe OwnerDescriber) *metav1.Condition {
	if ready == nil || ready.Status != metav1.ConditionFalse {
		return nil
	}
	taken := helmTakenObject.FindStringSubmatch(ready.Message)
	if taken == nil {
		return nil
	}
	owner := "no Helm release: it was made outside the platform"
	if rel := helmOwnerRelease.FindStringSubmatch(ready.Message); rel != nil {
		ns := releaseNamespace
		if m := helmOwnerNamespace.FindStringSubmatch(ready.Message); m != nil {
			ns = m[1]
		}
		owner = fmt.Sprintf("Helm release %s/%s", ns, rel[1])
		if describe != nil {
			if app := describe(ns, rel[1]); app != "" {
				owner += ", the release of " + app
			}
		}
	}
	c := *ready
	c.Reason = ReasonConflict
	c.Message = fmt.Sprintf("%s belongs to %s; this application never takes another's objects: choose a name whose objects do not collide, or remove the other owner's object (helm-controller: %s)",
		taken[1], owner, ready.Message)
	return &c
}

// describeRelease names the application whose HelmRelease ns/name is, from
// the release cache (the labels cozystack-api sets, K1): "<Kind> <ns>/<name>",
// or "" when the cache does not know it.
func (r *REST) describeRelease(ns, name string) string {
	hr, ok := r.releases.Get(ns, name)
	if !ok {
		return ""
	}
	return describeApplication(hr.Labels, hr.Namespace)
}

// describeApplication is "application <Kind> <ns>/<name>" from an
// application HelmRelease's labels, or "".
func describeApplication(labels map[string]string, ns string) string {
	kind, name := labels[v1alpha1.LabelApplicationKind], labels[v1alpha1.LabelApplicationName]
	if kind == "" || name == "" {
		return ""
	}
	return fmt.Sprintf("application %s %s/%s", kind, ns, name)
}

// takenBy returns the error of a create whose HelmRelease name hr another
// kind's application (or something that is no application) already holds:
// 409 AlreadyExists naming the holder, since "postgreses db already exists"
// would be false. It returns nil when the holder is an application of this
// kind (the plain AlreadyExists is right then) or cannot be read.
func (r *REST) takenBy(ctx context.Context, hr *helmv2.HelmRelease) error {
	cur := &helmv2.HelmRelease{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(hr), cur); err != nil || r.owns(cur) {
		return nil
	}
	name, _ := r.kind.ApplicationName(hr.Name)
	holder := describeApplication(cur.Labels, cur.Namespace)
	if holder == "" {
		holder = "a HelmRelease that is no application's"
	}
	err := apierrors.NewAlreadyExists(r.groupResource(), name)
	err.ErrStatus.Message = fmt.Sprintf("%s %q cannot be created: its HelmRelease %s/%s is already held by %s; choose another name",
		r.groupResource(), name, hr.Namespace, hr.Name, holder)
	return err
}
