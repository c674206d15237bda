package application

import (
	"context"
	"encoding/json"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/valuesschema"
	"cozystack.io/platform/internal/stackgrow"
)

// updateAttempts bounds the recomputations of an update that lost a race
// with another writer of the HelmRelease.
const updateAttempts = 5

// Update replaces application name with objInfo's object, computed from
// the current one, with optimistic concurrency: a resourceVersion on the new
// object goes to the HelmRelease update, so a stale one is a 409; an empty
// one means the current (an unconditional update, as for custom resources
// on PATCH). When the HelmRelease changes between the read and the write
// (helm-controller writing its status) and the new object carried the
// resourceVersion just read, as a patch's does, the update is computed again
// from the fresh object, as the generic registry's GuaranteedUpdate does,
// instead of failing a request the client could not have made stale. The
// HelmRelease keeps everything the application does not own (status, spec
// fields the application does not set, top-level "_" values). With
// forceAllowCreate (server-side apply) a missing application is created;
// created is true then.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	stackgrow.Grow() // as in Create
	if options == nil {
		options = &metav1.UpdateOptions{}
	}
	for attempt := 1; ; attempt++ {
		out, created, retry, err := r.update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
		if retry && attempt < updateAttempts {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		return out, created, nil
	}
}

// update is one attempt of Update; retry reports a conflict that a fresh
// read may resolve.
func (r *REST) update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (out *unstructured.Unstructured, created, retry bool, err error) {
	current, err := r.getHelmRelease(ctx, name, nil)
	if apierrors.IsNotFound(err) && forceAllowCreate {
		obj, err := objInfo.UpdatedObject(ctx, r.New())
		if err != nil {
			return nil, false, false, err
		}
		app, err := r.requestApplication(ctx, obj)
		if err != nil {
			return nil, false, false, err
		}
		if app.GetName() == "" {
			app.SetName(name)
		}
		out, err := r.create(ctx, app, createValidation, options.DryRun, options.FieldValidation)
		return out, err == nil, false, err
	}
	if err != nil {
		return nil, false, false, err
	}
	// Validation reads the namespace's other Tenants (quotas.go): Tenant
	// creates and updates in one namespace are serialized from that read
	// to the write.
	defer r.strategy.lockTenants(current.Namespace)()
	old, err := r.fromHelmRelease(current)
	if err != nil {
		return nil, false, false, err
	}
	if err := r.checkPreconditions(name, objInfo.Preconditions(), current); err != nil {
		return nil, false, false, err
	}
	obj, err := objInfo.UpdatedObject(ctx, old.DeepCopy())
	if err != nil {
		return nil, false, false, err
	}
	app, err := r.requestApplication(ctx, obj)
	if err != nil {
		return nil, false, false, err
	}
	r.strategy.PrepareForUpdate(app, old, current.ResourceVersion)
	if errs := r.strategy.validateUpdate(ctx, app, old, options.FieldValidation); len(errs) > 0 {
		return nil, false, false, apierrors.NewInvalid(r.gvk().GroupKind(), name, errs)
	}
	if updateValidation != nil {
		if err := updateValidation(ctx, app.DeepCopyObject(), old.DeepCopyObject()); err != nil {
			return nil, false, false, err
		}
	}
	var currentValues []byte
	if current.Spec.Values != nil {
		currentValues = current.Spec.Values.Raw
	}
	stored, err := userValues(currentValues)
	if err != nil {
		return nil, false, false, apierrors.NewInternalError(fmt.Errorf("HelmRelease %s/%s values: %w", current.Namespace, current.Name, err))
	}
	readSpec, _ := old.Object["spec"].(map[string]any)
	spec, _ := app.Object["spec"].(map[string]any)
	written := writtenSpec(spec, stored, readSpec)
	app.Object["spec"] = written
	desired, err := ToHelmRelease(r.kind, app)
	if err != nil {
		return nil, false, false, apierrors.NewBadRequest(err.Error())
	}
	if err := checkHandover(r.groupResource(), r.kind, current, desired); err != nil {
		return nil, false, false, err
	}
	hr := current.DeepCopy()
	hr.ResourceVersion = app.GetResourceVersion()
	// What the platform and Flux set stays (K1, metadata.go).
	hr.Labels = keepReserved(desired.Labels, current.Labels, ReservedKey)
	hr.Annotations = keepReserved(desired.Annotations, current.Annotations, func(key string) bool {
		return key != AnnotationManagedFields && ReservedKey(key)
	})
	if errs := validateAnnotationBudget(hr.Annotations); len(errs) > 0 {
		return nil, false, false, apierrors.NewInvalid(r.gvk().GroupKind(), name, errs)
	}
	// A handover, once done, is spent (checkHandover).
	delete(hr.Annotations, AnnotationHandover)
	hr.Finalizers = keepReservedFinalizers(desired.Finalizers, current.Finalizers)
	hr.OwnerReferences = desired.OwnerReferences
	hr.Spec.ChartRef = desired.Spec.ChartRef
	hr.Spec.ServiceAccountName = desired.Spec.ServiceAccountName
	hr.Spec.Rollback = desired.Spec.Rollback
	hr.Spec.Uninstall = desired.Spec.Uninstall
	hr.Spec.ValuesFrom = keepValuesSource(current.Spec.ValuesFrom, desired.Spec.ValuesFrom)
	hr.Spec.Install = desired.Spec.Install
	hr.Spec.Upgrade = desired.Spec.Upgrade
	hr.Spec.Interval = desired.Spec.Interval
	hr.Spec.DriftDetection = desired.Spec.DriftDetection
	if equality.Semantic.DeepEqual(written, stored) {
		// Byte for byte what was stored: a metadata-only change never
		// rewrites the values.
		hr.Spec.Values = current.Spec.Values
	} else if hr.Spec.Values, err = keepInjectedValues(desired.Spec.Values, current.Spec.Values); err != nil {
		return nil, false, false, apierrors.NewInternalError(err)
	}
	if err := r.client.Update(ctx, hr, &client.UpdateOptions{DryRun: options.DryRun, FieldManager: FieldManager, FieldValidation: backendFieldValidation}); err != nil {
		raced := apierrors.IsConflict(err) && hr.ResourceVersion == current.ResourceVersion
		return nil, false, raced, r.mapError(err, name)
	}
	out, err = r.fromHelmRelease(hr)
	return out, false, false, err
}

// valuesKind is the kind of the K2 values object of namespace ns: what its
// annotation cozystack.io/values-source selects, or ConfigMap.
func (r *REST) valuesKind(ns string) string {
	if r.strategy.ns == nil {
		return v1alpha1.ValuesKind(v1alpha1.ValuesSourceConfigMap)
	}
	n, err := r.strategy.ns.Get(ns)
	if err != nil {
		return v1alpha1.ValuesKind(v1alpha1.ValuesSourceConfigMap)
	}
	source, err := v1alpha1.ValuesSource(n.Annotations)
	if err != nil {
		// A bad annotation is cozystack-controller's to report (Stalled);
		// the ConfigMap is the source of truth meanwhile.
		source = v1alpha1.ValuesSourceConfigMap
	}
	return v1alpha1.ValuesKind(source)
}

// keepValuesSource is the valuesFrom of an updated HelmRelease: desired's,
// except that a K2 reference the current one has keeps its kind.
// cozystack-controller moves references between the ConfigMap and the
// legacy Secret during the migration (contract K2, k2-migration.md); an
// update of the application must not move it back.
func keepValuesSource(current, desired []helmv2.ValuesReference) []helmv2.ValuesReference {
	out := append([]helmv2.ValuesReference(nil), desired...)
	for i := range out {
		if out[i].Name != v1alpha1.ValuesName {
			continue
		}
		for _, c := range current {
			if c.Name == v1alpha1.ValuesName && (c.Kind == "Secret" || c.Kind == "ConfigMap") {
				out[i].Kind = c.Kind
			}
		}
	}
	return out
}

// checkPreconditions applies objInfo's preconditions to the stored object,
// failing with 409 as the generic registry does.
func (r *REST) checkPreconditions(name string, p *metav1.Preconditions, current *helmv2.HelmRelease) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != current.UID {
		return apierrors.NewConflict(r.groupResource(), name, fmt.Errorf(
			"Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, current.UID))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != current.ResourceVersion {
		return apierrors.NewConflict(r.groupResource(), name, fmt.Errorf(
			"Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, current.ResourceVersion))
	}
	return nil
}

// keepInjectedValues adds to values the top-level "_" keys of the current
// values: the platform injects them and the application never shows them,
// so an update must not drop them.
func keepInjectedValues(values, current *apiextensionsv1.JSON) (*apiextensionsv1.JSON, error) {
	if current == nil || len(current.Raw) == 0 {
		return values, nil
	}
	var cur map[string]json.RawMessage
	if err := json.Unmarshal(current.Raw, &cur); err != nil {
		return nil, fmt.Errorf("current HelmRelease values: %w", err)
	}
	injected := map[string]json.RawMessage{}
	for k, v := range cur {
		if valuesschema.IsPlatformKey(k) {
			injected[k] = v
		}
	}
	if len(injected) == 0 {
		return values, nil
	}
	merged := map[string]json.RawMessage{}
	if values != nil && len(values.Raw) > 0 {
		if err := json.Unmarshal(values.Raw, &merged); err != nil {
			return nil, err
		}
	}
	for k, v := range injected {
		merged[k] = v
	}
	raw, err := json.Marshal(merged)
	if err != nil {
		return nil, err
	}
	return &apiextensionsv1.JSON{Raw: raw}, nil
}
