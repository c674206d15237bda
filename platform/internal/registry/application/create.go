package application

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/stackgrow"
)

// generateNameAttempts bounds the retries when a generated name is taken,
// as the generic registry does (k8s.io/apiserver RetryGenerateName).
const generateNameAttempts = 8

// Create stores a new application as its HelmRelease. The name may be
// generated from metadata.generateName; the object is validated (metadata,
// the kind's name rules, spec against the kind's schema) and passed to
// createValidation (admission) before anything is written. The HelmRelease
// values are the user's spec without schema defaults. options.DryRun and the
// field validation directive are honoured.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	// The rest of a create is deep (validation, conversion, the client of
	// kube-apiserver): see package stackgrow.
	stackgrow.Grow()
	if options == nil {
		options = &metav1.CreateOptions{}
	}
	app, err := r.requestApplication(ctx, obj)
	if err != nil {
		return nil, err
	}
	out, err := r.create(ctx, app, createValidation, options.DryRun, options.FieldValidation)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (r *REST) create(ctx context.Context, app *unstructured.Unstructured, createValidation rest.ValidateObjectFunc, dryRun []string, directive string) (*unstructured.Unstructured, error) {
	// System fields are the HelmRelease's; kube-apiserver sets them. The
	// managedFields the request handler computed are the application's
	// own and are kept (in an annotation, see AnnotationManagedFields).
	if r.kind.Terminating {
		// As kube-apiserver answers a create of a custom resource whose
		// definition is terminating.
		err := apierrors.NewMethodNotSupported(r.groupResource(), "create")
		err.ErrStatus.Message = fmt.Sprintf("create not allowed while ApplicationDefinition %s is terminating: kind %s is being removed and serves only its existing applications until they are deleted (contract K1, \"Lifecycle of a kind\")",
			r.kind.Definition, r.kind.Kind)
		return nil, err
	}
	// As in update: Tenant writes of a namespace are serialized.
	defer r.strategy.lockTenants(app.GetNamespace())()
	generated := app.GetName() == "" && app.GetGenerateName() != ""
	r.strategy.PrepareForCreate(app)
	if errs := r.strategy.validateCreate(ctx, app, directive); len(errs) > 0 {
		return nil, apierrors.NewInvalid(r.gvk().GroupKind(), app.GetName(), errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, app.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	for attempt := 1; ; attempt++ {
		hr, err := ToHelmRelease(r.kind, app)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if errs := validateAnnotationBudget(hr.Annotations); len(errs) > 0 {
			return nil, apierrors.NewInvalid(r.gvk().GroupKind(), app.GetName(), errs)
		}
		hr.Spec.ValuesFrom[0].Kind = r.valuesKind(app.GetNamespace())
		// A new release of a catalog's application keeps Helm's records
		// apart from the tenant namespace, where its installer reads no
		// Secret (v1alpha1.ApplicationReleaseStorageNamespace). Only here:
		// update keeps what the stored HelmRelease has, since changing it
		// makes helm-controller uninstall and reinstall the release.
		if src := r.kind.Release.Catalog; src != "" {
			hr.Spec.StorageNamespace = v1alpha1.ApplicationReleaseStorageNamespace(app.GetNamespace(), src)
		}
		err = r.client.Create(ctx, hr, &client.CreateOptions{DryRun: dryRun, FieldManager: FieldManager, FieldValidation: backendFieldValidation})
		if err == nil {
			return r.fromHelmRelease(hr)
		}
		if generated && apierrors.IsAlreadyExists(err) {
			if attempt < generateNameAttempts {
				// Same base, same length: the new name is as valid as the
				// one validated above.
				app.SetName(r.strategy.generateName(app.GetGenerateName()))
				continue
			}
			return nil, apierrors.NewGenerateNameConflict(r.groupResource(), app.GetName(), 1)
		}
		if apierrors.IsAlreadyExists(err) {
			if taken := r.takenBy(ctx, hr); taken != nil {
				return nil, taken
			}
		}
		return nil, r.mapError(err, app.GetName())
	}
}
