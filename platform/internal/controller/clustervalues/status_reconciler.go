package clustervalues

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/status"
)

// statusReconciler computes, for the ClusterValues singleton, how many
// tenant namespaces carry its current generation, and reports it as
// status, events and metrics. It never writes values objects.
type statusReconciler struct {
	client   client.Client
	recorder recorder.EventRecorder
	legacy   bool
	failures *failures
	render   *renderer
	// interval is the least time between two status writes while the
	// projection progresses; a converged or stalled status is written at
	// once.
	interval time.Duration

	// Only the reconcile loop (one worker) touches these.
	lastWrite  time.Time
	lastSource string
}

// Reconcile measures every tenant namespace against the ClusterValues
// singleton and writes what it found as its status (metrics and events
// follow the same summary).
func (r *statusReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	tenants, err := listTenants(ctx, r.client)
	if err != nil {
		return ctrl.Result{}, err
	}
	metricNamespacesTotal.Set(float64(len(tenants)))
	cv, err := getSource(ctx, r.client)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cv == nil {
		// There is no object to put a condition on: a log line on the
		// transition, and the metrics.
		r.noteSource(ctx, sourceMissing, nil, len(tenants), nil)
		metricGeneration.Set(0)
		recordSummary(summary{})
		return ctrl.Result{}, nil
	}
	metricGeneration.Set(float64(cv.Generation))
	objects, err := r.valuesObjects(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	s, conds := r.measure(ctx, cv, tenants, objects)
	recordSummary(s)
	updated := desiredStatus(cv, s, conds)
	if equality.Semantic.DeepEqual(cv.Status, updated.Status) {
		return ctrl.Result{}, nil
	}
	if wait := r.batchWait(cv, updated, s); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return r.writeStatus(ctx, cv, updated)
}

// noteSource logs each transition of the source's state (sourceMissing,
// sourceInvalid with specErr, sourceValid) once, and sets its metric.
func (r *statusReconciler) noteSource(ctx context.Context, state string, cv *v1alpha1.ClusterValues, tenants int, specErr error) {
	logger := log.FromContext(ctx)
	if r.lastSource != state {
		switch state {
		case sourceMissing:
			logger.Error(nil, "ClusterValues "+v1alpha1.ClusterValuesName+" does not exist: nothing is projected and tenant namespaces keep the values they have; create it",
				"tenantNamespaces", tenants)
		case sourceInvalid:
			logger.Error(specErr, "ClusterValues cannot be projected; nothing is written until it is fixed", "generation", cv.Generation)
		case sourceValid:
			if r.lastSource != "" {
				logger.Info("ClusterValues is valid: projecting it", "generation", cv.Generation)
			}
		}
	}
	r.lastSource = state
	setSourceState(state)
}

// measure is where every tenant namespace stands against cv, summarized,
// and the conditions the summary calls for. While cv's spec does not
// render, every namespace lags and the conditions say why.
func (r *statusReconciler) measure(ctx context.Context, cv *v1alpha1.ClusterValues, tenants []corev1.Namespace, objects *valuesObjects) (summary, []metav1.Condition) {
	statuses := make([]nsStatus, len(tenants))
	cluster, specErr := r.render.renderCluster(cv)
	if specErr != nil {
		r.noteSource(ctx, sourceInvalid, cv, len(tenants), specErr)
		for i, ns := range tenants {
			statuses[i] = nsStatus{name: ns.Name, state: nsLagging, carried: objects.carried(ns.Name, r.legacy)}
		}
		return summarize(cv.Generation, statuses), invalidSpecConditions(cv.Generation, specErr)
	}
	r.noteSource(ctx, sourceValid, cv, len(tenants), nil)
	names := make(map[string]bool, len(tenants))
	for i := range tenants {
		statuses[i] = r.namespaceStatus(cluster, &tenants[i], objects)
		names[tenants[i].Name] = true
	}
	r.render.keep(names)
	s := summarize(cv.Generation, statuses)
	return s, s.conditions()
}

// recordSummary sets the namespace gauges from s (all 0 for the zero
// summary).
func recordSummary(s summary) {
	metricNamespacesProjected.Set(float64(s.projected))
	metricNamespacesInvalid.Set(float64(len(s.invalid)))
	metricGenerationLag.Set(float64(s.lag))
}

// desiredStatus is cv with the status s and conds call for; the
// conditions go through status.Set, which keeps the transition times of
// those that did not change.
func desiredStatus(cv *v1alpha1.ClusterValues, s summary, conds []metav1.Condition) *v1alpha1.ClusterValues {
	updated := cv.DeepCopy()
	updated.Status.ObservedGeneration = cv.Generation
	updated.Status.TotalNamespaces = s.total
	updated.Status.ProjectedNamespaces = s.projected
	status.Set(updated, ownedConditions, conds...)
	return updated
}

// batchWait is how long to hold back writing updated. While namespaces are
// being written, the counts change with every write: those status writes
// are batched, at most one per r.interval. A converged or stalled status,
// or one for a new generation, is written at once (0).
func (r *statusReconciler) batchWait(cv, updated *v1alpha1.ClusterValues, s summary) time.Duration {
	stalled := apimeta.IsStatusConditionTrue(updated.Status.Conditions, v1alpha1.ConditionStalled)
	if s.converged() || stalled || cv.Status.ObservedGeneration != cv.Generation {
		return 0
	}
	return r.interval - time.Since(r.lastWrite)
}

// writeStatus patches cv's status to updated's with fluxcd/pkg/runtime's
// patch helper: the conditions the projection owns overwrite the stored
// ones, the rest of the status is merged. A conflict is retried soon; a
// ClusterValues deleted meanwhile is left to its delete event.
func (r *statusReconciler) writeStatus(ctx context.Context, cv, updated *v1alpha1.ClusterValues) (ctrl.Result, error) {
	helper, err := patch.NewHelper(cv, r.client)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := helper.Patch(ctx, updated, patch.WithOwnedConditions{Conditions: ownedConditions}, patch.WithFieldOwner(v1alpha1.FieldManagerController)); err != nil {
		switch {
		case apierrors.IsConflict(err):
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		case apierrors.IsNotFound(err):
			return ctrl.Result{}, nil // deleted meanwhile: its delete event follows
		}
		return ctrl.Result{}, err
	}
	r.lastWrite = time.Now()
	r.recordTransition(cv, updated)
	return ctrl.Result{}, nil
}

// namespaceStatus is where tenant namespace ns stands against cluster.
func (r *statusReconciler) namespaceStatus(cluster *clusterValues, ns *corev1.Namespace, objects *valuesObjects) nsStatus {
	st := nsStatus{name: ns.Name, carried: objects.carried(ns.Name, r.legacy)}
	doc, err := r.render.renderNamespace(cluster, ns)
	if err != nil {
		st.state, st.reason = nsInvalid, err.Error()
		return st
	}
	// A namespace whose releases read the legacy Secret is projected only
	// while the Secret is kept current.
	switch source, err := v1alpha1.ValuesSource(ns.Annotations); {
	case err != nil:
		st.state, st.reason = nsInvalid, err.Error()
		return st
	case source == v1alpha1.ValuesSourceSecret && !r.legacy:
		st.state, st.reason = nsInvalid, fmt.Sprintf("its releases read the legacy Secret (annotation %s=%s), which is not written (--legacy-secret=off) and goes stale: "+
			"set the annotation to %s, or run cozystack-controller with --legacy-secret=write",
			v1alpha1.AnnotationValuesSource, v1alpha1.ValuesSourceSecret, v1alpha1.ValuesSourceConfigMap)
		return st
	}
	current := false
	if cm, ok := objects.configMaps[ns.Name]; ok {
		current = configMapUpToDate(cm, desiredConfigMap(ns.Name, cluster.generation, doc))
	}
	if current && r.legacy {
		secret, ok := objects.secrets[ns.Name]
		current = ok && secretUpToDate(secret, desiredSecret(ns.Name, cluster.generation, doc))
	}
	switch msg, failed := r.failures.get(ns.Name); {
	case current:
		st.state = nsProjected
	case failed:
		st.state, st.reason = nsFailed, msg
	default:
		st.state = nsLagging
	}
	return st
}

// recordTransition emits an event on cv when the Projected condition
// changes in a way a person should see.
func (r *statusReconciler) recordTransition(old, cur *v1alpha1.ClusterValues) {
	was := apimeta.FindStatusCondition(old.Status.Conditions, v1alpha1.ConditionProjected)
	now := apimeta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionProjected)
	if now == nil || (was != nil && was.Status == now.Status && was.Reason == now.Reason && was.ObservedGeneration == now.ObservedGeneration) {
		return
	}
	switch now.Reason {
	case v1alpha1.ReasonProjected, v1alpha1.ReasonNoTenantNamespaces:
		r.recorder.Eventf(cur, nil, corev1.EventTypeNormal, now.Reason, "Project", "%s", now.Message)
	case v1alpha1.ReasonInvalidSpec, v1alpha1.ReasonInvalidNamespaceValues, v1alpha1.ReasonWriteFailed:
		r.recorder.Eventf(cur, nil, corev1.EventTypeWarning, now.Reason, "Project", "%s", now.Message)
	}
}

// valuesObjects are the values objects the cache holds (those carrying our
// label), by namespace: the cache's own objects, read-only.
type valuesObjects struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

func (r *statusReconciler) valuesObjects(ctx context.Context) (*valuesObjects, error) {
	objs := &valuesObjects{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	var cms corev1.ConfigMapList
	if err := r.client.List(ctx, &cms, ownedSelector(), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range cms.Items {
		if cm := &cms.Items[i]; cm.Name == v1alpha1.ValuesName {
			objs.configMaps[cm.Namespace] = cm
		}
	}
	if r.legacy {
		var secrets corev1.SecretList
		if err := r.client.List(ctx, &secrets, ownedSelector(), client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		for i := range secrets.Items {
			if s := &secrets.Items[i]; s.Name == v1alpha1.ValuesName {
				objs.secrets[s.Namespace] = s
			}
		}
	}
	return objs, nil
}

// carried is the oldest generation namespace's values objects carry; 0
// when one is missing.
func (o *valuesObjects) carried(namespace string, legacy bool) int64 {
	cm, ok := o.configMaps[namespace]
	if !ok {
		return 0
	}
	g := carriedGeneration(cm)
	if legacy {
		s, ok := o.secrets[namespace]
		if !ok {
			return 0
		}
		g = min(g, carriedGeneration(s))
	}
	return g
}
