package application

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/platform/internal/apiserver/appkinds"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/valuesschema"
)

// AnnotationManagedFields carries the application's managedFields (JSON) on
// its HelmRelease: the HelmRelease's own managedFields describe writes of
// the HelmRelease, so server-side apply on applications needs its field
// ownership stored beside the object. Users cannot set it.
const AnnotationManagedFields = "apps.cozystack.io/managed-fields"

// ReleaseInterval is the HelmRelease reconcile interval.
const ReleaseInterval = 5 * time.Minute

// ReservedLabel reports whether a label key is one the platform sets on
// the HelmRelease of kind k (the application labels of contract K1 and the
// kind's release labels), so an application may not set it: it would be
// overwritten, and reading it back would not be reversible. Which keys
// belong to the platform at all is ReservedKey's rule.
func ReservedLabel(k *appkinds.Kind, key string) bool {
	switch key {
	case v1alpha1.LabelApplicationKind, v1alpha1.LabelApplicationGroup, v1alpha1.LabelApplicationName:
		return true
	}
	_, ok := k.Release.Labels[key]
	return ok
}

// ToHelmRelease converts an application of kind k into its HelmRelease.
// values are the user's spec only, never schema defaults. metadata.uid,
// resourceVersion, generation and the timestamps are the HelmRelease's own,
// so they carry over untouched. The error lists invalid fields.
func ToHelmRelease(k *appkinds.Kind, app *unstructured.Unstructured) (*helmv2.HelmRelease, error) {
	name := app.GetName()
	labels := map[string]string{}
	var errs field.ErrorList
	for key, v := range app.GetLabels() {
		if ReservedLabel(k, key) {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "labels").Key(key),
				fmt.Sprintf("label %s is set by the platform on every %s", key, k.Kind)))
			continue
		}
		labels[key] = v
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	for key, v := range k.Release.Labels {
		labels[key] = v
	}
	labels[v1alpha1.LabelApplicationKind] = k.Kind
	labels[v1alpha1.LabelApplicationGroup] = appkinds.Group
	labels[v1alpha1.LabelApplicationName] = name

	spec, _, err := unstructured.NestedMap(app.Object, "spec")
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	var values *apiextensionsv1.JSON
	if len(spec) > 0 {
		raw, err := json.Marshal(spec)
		if err != nil {
			return nil, fmt.Errorf("spec: %w", err)
		}
		values = &apiextensionsv1.JSON{Raw: raw}
	}

	annotations := map[string]string{}
	for key, v := range app.GetAnnotations() {
		if key != AnnotationManagedFields {
			annotations[key] = v
		}
	}
	if mf := app.GetManagedFields(); len(mf) > 0 {
		raw, err := json.Marshal(mf)
		if err != nil {
			return nil, fmt.Errorf("metadata.managedFields: %w", err)
		}
		annotations[AnnotationManagedFields] = string(raw)
	}
	if len(annotations) == 0 {
		annotations = nil
	}

	hr := &helmv2.HelmRelease{
		TypeMeta: metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:              k.HelmReleaseName(name),
			Namespace:         app.GetNamespace(),
			Labels:            labels,
			Annotations:       annotations,
			UID:               app.GetUID(),
			ResourceVersion:   app.GetResourceVersion(),
			Generation:        app.GetGeneration(),
			CreationTimestamp: app.GetCreationTimestamp(),
			DeletionTimestamp: app.GetDeletionTimestamp(),
			Finalizers:        app.GetFinalizers(),
			OwnerReferences:   app.GetOwnerReferences(),
		},
		Spec: helmv2.HelmReleaseSpec{
			ChartRef: &helmv2.CrossNamespaceSourceReference{
				APIVersion: k.Release.ChartRef.APIVersion,
				Kind:       k.Release.ChartRef.Kind,
				Name:       k.Release.ChartRef.Name,
				Namespace:  k.Release.ChartRef.Namespace,
			},
			Interval: metav1.Duration{Duration: ReleaseInterval},
			// helm-controller installs as the tenant's installer, never
			// as itself (contract K5, "Tenant roles").
			ServiceAccountName: k.Release.ServiceAccountName,
			ValuesFrom:         []helmv2.ValuesReference{v1alpha1.ValuesReference(v1alpha1.ValuesSourceConfigMap, false)},
			Values:             values,
			// Ready means the objects are there: helm-controller compares
			// the cluster with the release at every reconcile (the
			// interval, or a requestedAt annotation) and restores what
			// someone else deleted or changed (contract K1).
			DriftDetection: &helmv2.DriftDetection{Mode: helmv2.DriftDetectionEnabled},
			// Never take another release's objects (Helm's
			// --take-ownership, which helm-controller v1.4 uses unless
			// told not to): a colliding install fails with Conflict and
			// the owner's object stays untouched.
			// No hooks: Helm creates hook objects outside the release's
			// ownership checks (a before-hook-creation hook deletes
			// whatever holds its name, another application's object too).
			Install: &helmv2.Install{
				Timeout:              k.Release.InstallTimeout,
				DisableWait:          k.Release.InstallDisableWait,
				DisableTakeOwnership: true,
				DisableHooks:         true,
			},
			Upgrade: &helmv2.Upgrade{
				Timeout:              k.Release.UpgradeTimeout,
				DisableWait:          k.Release.UpgradeDisableWait,
				DisableTakeOwnership: true,
				DisableHooks:         true,
			},
			Rollback:  &helmv2.Rollback{DisableHooks: true},
			Uninstall: &helmv2.Uninstall{DisableHooks: true},
		},
	}
	if r := k.Release.InstallRetries; r != nil {
		hr.Spec.Install.Remediation = &helmv2.InstallRemediation{Retries: *r}
	}
	if r := k.Release.UpgradeRetries; r != nil {
		hr.Spec.Upgrade.Remediation = &helmv2.UpgradeRemediation{Retries: *r}
	}
	return hr, nil
}

// FromHelmRelease converts a HelmRelease of kind k back into the
// application: the spec is the values without top-level keys beginning with
// "_" (platform-injected), with schema defaults applied; the status is
// synthesized from the HelmRelease's conditions. It fails when the
// HelmRelease does not belong to k.
func FromHelmRelease(k *appkinds.Kind, hr *helmv2.HelmRelease) (*unstructured.Unstructured, error) {
	return fromHelmRelease(k, hr, Spec, statusHooks{})
}

// Spec returns the application spec held in HelmRelease values (JSON, nil
// or empty for none) of kind k: a fresh map without the top-level keys
// beginning with "_", with the schema defaults applied. The error says
// when values are not a JSON object.
func Spec(k *appkinds.Kind, values []byte) (map[string]any, error) {
	spec := map[string]any{}
	if len(values) > 0 {
		// utiljson keeps integers as int64, as the API machinery does.
		if err := utiljson.Unmarshal(values, &spec); err != nil {
			return nil, fmt.Errorf("values are not a JSON object: %w", err)
		}
	}
	for key := range spec {
		if valuesschema.IsPlatformKey(key) {
			delete(spec, key)
		}
	}
	k.Schema.Default(spec)
	return spec, nil
}

// fromHelmRelease is FromHelmRelease with the spec made by spec.
func fromHelmRelease(k *appkinds.Kind, hr *helmv2.HelmRelease, spec func(*appkinds.Kind, []byte) (map[string]any, error), hooks statusHooks) (*unstructured.Unstructured, error) {
	name, ok := k.ApplicationName(hr.Name)
	if !ok || hr.Labels[v1alpha1.LabelApplicationKind] != k.Kind {
		return nil, fmt.Errorf("HelmRelease %s/%s is not a %s", hr.Namespace, hr.Name, k.Kind)
	}
	var values []byte
	if hr.Spec.Values != nil {
		values = hr.Spec.Values.Raw
	}
	specMap, err := spec(k, values)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s/%s: %w", hr.Namespace, hr.Name, err)
	}

	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": appkinds.Group + "/" + appkinds.Version,
		"kind":       k.Kind,
		"spec":       specMap,
	}}
	app.SetName(name)
	app.SetNamespace(hr.Namespace)
	app.SetUID(hr.UID)
	app.SetResourceVersion(hr.ResourceVersion)
	app.SetGeneration(hr.Generation)
	app.SetCreationTimestamp(hr.CreationTimestamp)
	app.SetDeletionTimestamp(hr.DeletionTimestamp)
	app.SetFinalizers(hr.Finalizers)
	app.SetOwnerReferences(hr.OwnerReferences)
	annotations := map[string]string{}
	for key, v := range hr.Annotations {
		if key != AnnotationManagedFields {
			annotations[key] = v
		}
	}
	if len(annotations) > 0 {
		app.SetAnnotations(annotations)
	}
	if raw := hr.Annotations[AnnotationManagedFields]; raw != "" {
		var mf []metav1.ManagedFieldsEntry
		if err := json.Unmarshal([]byte(raw), &mf); err != nil {
			return nil, fmt.Errorf("HelmRelease %s/%s: annotation %s is not managedFields JSON: %w", hr.Namespace, hr.Name, AnnotationManagedFields, err)
		}
		app.SetManagedFields(mf)
	}
	userLabels := map[string]string{}
	for key, v := range hr.Labels {
		if !ReservedLabel(k, key) {
			userLabels[key] = v
		}
	}
	if len(userLabels) > 0 {
		app.SetLabels(userLabels)
	}
	if err := unstructured.SetNestedField(app.Object, status(hr, hooks), "status"); err != nil {
		return nil, err
	}
	return app, nil
}

// Status synthesizes an application's status from its HelmRelease: the
// Ready and Released conditions (Ready is Unknown, reason Reconciling, until
// helm-controller has reported; False, reason WaitingForClusterValues, while
// helm-controller cannot read the K2 values object; False, reason Conflict,
// when Helm refused to take an object another release owns),
// observedGeneration when
// the HelmRelease has been reconciled, and version, the chart revision last
// attempted.
func Status(hr *helmv2.HelmRelease) map[string]any { return status(hr, statusHooks{}) }

// statusHooks let the storage add what the HelmRelease alone does not say.
type statusHooks struct {
	// describe names the application behind a conflicting release (nil:
	// the release only).
	describe OwnerDescriber
	// missing returns what a Ready release lacks that it made (for a
	// Tenant: its namespace), or "" (nil: nothing is checked).
	missing func(*helmv2.HelmRelease) string
}

// ReasonMissing is the reason of an application's Ready condition when
// helm-controller reports its release Ready but an object the release made
// is gone (a Tenant's namespace deleted outside the platform).
const ReasonMissing = "Missing"

// status is Status with hooks.
func status(hr *helmv2.HelmRelease, hooks statusHooks) map[string]any {
	var conds []any
	ready := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition)
	if c := conflictCondition(ready, hr.Namespace, hooks.describe); c != nil {
		ready = c
	} else if c := forbiddenCondition(ready, hr.Namespace); c != nil {
		ready = c
	} else if ready != nil && ready.Status == metav1.ConditionTrue && hooks.missing != nil {
		if msg := hooks.missing(hr); msg != "" {
			missing := *ready
			missing.Status, missing.Reason, missing.Message = metav1.ConditionFalse, ReasonMissing, msg
			ready = &missing
		}
	} else if ready == nil {
		ready = &metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionUnknown, Reason: "Reconciling",
			Message: "waiting for helm-controller to reconcile the HelmRelease", LastTransitionTime: hr.CreationTimestamp}
	} else if ready.Status == metav1.ConditionFalse && ready.Reason == v1alpha1.HelmReasonValuesError && strings.Contains(ready.Message, v1alpha1.ValuesName) {
		waiting := *ready
		waiting.Reason = v1alpha1.ReasonWaitingForClusterValues
		waiting.Message = fmt.Sprintf("waiting for the cluster values %s in namespace %s, which cozystack-controller projects into every tenant namespace (helm-controller: %s)",
			v1alpha1.ValuesName, hr.Namespace, ready.Message)
		ready = &waiting
	}
	for _, c := range []*metav1.Condition{ready, apimeta.FindStatusCondition(hr.Status.Conditions, helmv2.ReleasedCondition)} {
		if c == nil {
			continue
		}
		conds = append(conds, map[string]any{
			"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message,
			"lastTransitionTime": c.LastTransitionTime.UTC().Format(time.RFC3339),
		})
	}
	sort.SliceStable(conds, func(i, j int) bool {
		return conds[i].(map[string]any)["type"].(string) < conds[j].(map[string]any)["type"].(string)
	})
	status := map[string]any{"conditions": conds}
	if hr.Status.ObservedGeneration > 0 {
		status["observedGeneration"] = hr.Status.ObservedGeneration
	}
	if v := hr.Status.LastAttemptedRevision; v != "" {
		status["version"] = v
	}
	return status
}
