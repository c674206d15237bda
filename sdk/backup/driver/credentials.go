package driver

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// ProjectSecret copies the Secret name in namespace from into owner's
// namespace as target (a name derived from the job, ObjectName), labelled
// with labels (which must hold the run label), owned by owner (an
// ownerReference, so the copy goes with the job), and returns target.
// Idempotent: an existing copy of this run is adopted and its data and type
// brought in line with the source's (a rotated credential); a same-named
// Secret of anyone else is a *ConflictError. A missing source is a
// *RunError with reason BackendFailed naming it. c reads live.
func ProjectSecret(ctx context.Context, c client.Client, from, name string, owner client.Object, labels map[string]string, target string) (string, error) {
	src := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: from, Name: name}, src); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return "", Fail(v1alpha1.ReasonBackendFailed, "credential Secret %s/%s (in the driver's namespace) does not exist: create it or fix the strategy parameters", from, name)
		}
		return "", err
	}
	gvk, err := apiutil.GVKForObject(owner, c.Scheme())
	if err != nil {
		return "", fmt.Errorf("project secret: kind of owner: %w", err)
	}
	dst := &corev1.Secret{}
	dst.Name, dst.Namespace = target, owner.GetNamespace()
	dst.Labels = maps.Clone(labels)
	dst.Type = src.Type
	dst.Data = maps.Clone(src.Data)
	dst.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID(),
	}}
	run := types.UID(labels[v1alpha1.LabelRun])
	adopted, err := CreateOrAdopt(ctx, c, run, dst)
	if err != nil || !adopted {
		return target, err
	}
	if maps.EqualFunc(dst.Data, src.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
		return target, nil
	}
	dst.Data = maps.Clone(src.Data)
	return target, c.Update(ctx, dst)
}
