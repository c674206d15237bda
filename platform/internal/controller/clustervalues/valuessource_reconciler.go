package clustervalues

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// Reasons of the events the values-source reconciler emits.
const (
	ReasonValuesSourceSwitched = "ValuesSourceSwitched"
	ReasonInvalidValuesSource  = "InvalidValuesSource"
	ReasonLegacySecretDisabled = "LegacySecretDisabled"
	ReasonValuesSourceNotReady = "ValuesSourceNotReady"
)

// valuesSourceReconciler points the HelmReleases of one tenant namespace
// at the values object its annotation cozystack.io/values-source selects
// (the ConfigMap by default, the legacy Secret during a migration). A
// release is moved only onto an object that holds the current values, so a
// switch never makes a release read stale or missing values. Only
// valuesFrom entries named cozystack-values of kind ConfigMap or Secret
// are touched: they are replaced, at the position of the first, by the one
// entry {kind, cozystack-values, values.yaml}. A release already reading
// the selected kind is left alone.
type valuesSourceReconciler struct {
	client   client.Client
	recorder recorder.EventRecorder
	legacy   bool
	render   *renderer
}

func (r *valuesSourceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, req.NamespacedName, ns); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !isTenant(ns) {
		return ctrl.Result{}, nil
	}
	source, err := v1alpha1.ValuesSource(ns.Annotations)
	if err != nil {
		r.recorder.Eventf(ns, nil, corev1.EventTypeWarning, ReasonInvalidValuesSource, "SwitchValuesSource",
			"%v; releases stay where they are", err)
		return ctrl.Result{}, nil
	}
	kind := v1alpha1.ValuesKind(source)

	var releases helmv2.HelmReleaseList
	if err := r.client.List(ctx, &releases, client.InNamespace(ns.Name)); err != nil {
		return ctrl.Result{}, err
	}
	var moves []*helmv2.HelmRelease
	for i := range releases.Items {
		if _, ok := retarget(releases.Items[i].Spec.ValuesFrom, kind); ok {
			moves = append(moves, &releases.Items[i])
		}
	}
	if len(moves) == 0 {
		return ctrl.Result{}, nil
	}
	if why := r.notReady(ctx, ns, source); why != "" {
		// A watch on the values objects brings us back when it is ready.
		reason := ReasonValuesSourceNotReady
		if source == v1alpha1.ValuesSourceSecret && !r.legacy {
			reason = ReasonLegacySecretDisabled
		}
		r.recorder.Eventf(ns, nil, corev1.EventTypeWarning, reason, "SwitchValuesSource",
			"%d HelmReleases wait to read %s %s: %s", len(moves), kind, v1alpha1.ValuesName, why)
		logger.V(1).Info("values source not ready", "kind", kind, "releases", len(moves), "why", why)
		return ctrl.Result{}, nil
	}
	for _, hr := range moves {
		from, _ := retarget(hr.Spec.ValuesFrom, kind)
		patch := client.MergeFromWithOptions(hr.DeepCopy(), client.MergeFromWithOptimisticLock{})
		hr.Spec.ValuesFrom = from
		if err := r.client.Patch(ctx, hr, patch); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, fmt.Errorf("move HelmRelease %s to %s %s: %w", hr.Name, kind, v1alpha1.ValuesName, err)
		}
		metricReleasesSwitched.WithLabelValues(kind).Inc()
		r.recorder.Eventf(hr, ns, corev1.EventTypeNormal, ReasonValuesSourceSwitched, "SwitchValuesSource",
			"valuesFrom now reads %s %s (namespace annotation %s=%s)", kind, v1alpha1.ValuesName, v1alpha1.AnnotationValuesSource, source)
		logger.Info("moved HelmRelease to another values source", "helmRelease", hr.Name, "kind", kind)
	}
	return ctrl.Result{}, nil
}

// notReady says why the values object of source in ns does not hold the
// current values ("" when it does).
func (r *valuesSourceReconciler) notReady(ctx context.Context, ns *corev1.Namespace, source string) string {
	if source == v1alpha1.ValuesSourceSecret && !r.legacy {
		return "cozystack-controller runs with --legacy-secret=off, so the Secret is not kept current; run it with --legacy-secret=write, or set the annotation to configmap"
	}
	cv, err := getSource(ctx, r.client)
	if err != nil {
		return err.Error()
	}
	if cv == nil {
		return "ClusterValues " + v1alpha1.ClusterValuesName + " does not exist"
	}
	cluster, err := r.render.renderCluster(cv)
	if err != nil {
		return "ClusterValues is invalid: " + err.Error()
	}
	doc, err := r.render.renderNamespace(cluster, ns)
	if err != nil {
		return err.Error()
	}
	key := client.ObjectKey{Namespace: ns.Name, Name: v1alpha1.ValuesName}
	if source == v1alpha1.ValuesSourceSecret {
		s := &corev1.Secret{}
		if err := r.client.Get(ctx, key, s); err != nil || !secretUpToDate(s, desiredSecret(ns.Name, cv.Generation, doc)) {
			return fmt.Sprintf("the Secret does not hold generation %d yet", cv.Generation)
		}
		return ""
	}
	cm := &corev1.ConfigMap{}
	if err := r.client.Get(ctx, key, cm); err != nil || !configMapUpToDate(cm, desiredConfigMap(ns.Name, cv.Generation, doc)) {
		return fmt.Sprintf("the ConfigMap does not hold generation %d yet", cv.Generation)
	}
	return ""
}

// retarget returns from with its cozystack-values entries (kind ConfigMap
// or Secret) replaced, at the position of the first, by the one entry
// reading values.yaml of kind, and whether that is a move: some entry read
// another kind. It never modifies from.
func retarget(from []helmv2.ValuesReference, kind string) ([]helmv2.ValuesReference, bool) {
	isValues := func(ref helmv2.ValuesReference) bool {
		return ref.Name == v1alpha1.ValuesName && (ref.Kind == "ConfigMap" || ref.Kind == "Secret")
	}
	move := false
	for _, ref := range from {
		if isValues(ref) && ref.Kind != kind {
			move = true
		}
	}
	if !move {
		return from, false
	}
	out := make([]helmv2.ValuesReference, 0, len(from))
	placed := false
	for _, ref := range from {
		if !isValues(ref) {
			out = append(out, ref)
			continue
		}
		if !placed {
			out = append(out, helmv2.ValuesReference{Kind: kind, Name: v1alpha1.ValuesName, ValuesKey: v1alpha1.ValuesKey})
			placed = true
		}
	}
	return out, true
}
