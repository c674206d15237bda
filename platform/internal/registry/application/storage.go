package application

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/stackgrow"
)

// FieldManager is the field manager of every HelmRelease write: the
// HelmRelease is written with the API server's own credentials, so its
// managedFields name the server, not the end user.
const FieldManager = "cozystack-api"

// generateNameAttempts bounds the retries when a generated name is taken,
// as the generic registry does (k8s.io/apiserver RetryGenerateName).
const generateNameAttempts = 8

// REST is the storage of one application kind (K1). Objects are
// *unstructured.Unstructured of apps.cozystack.io/v1alpha1, stored only as
// Flux HelmReleases named <prefix><name> in the object's namespace, through
// the Backend with the server's own credentials: there is no other store,
// so resourceVersion, list, watch and conflict semantics are
// kube-apiserver's own for the HelmRelease. Errors name the application
// resource, never the HelmRelease.
type REST struct {
	kind      *appkinds.Kind
	client    client.WithWatch
	releases  *ReleaseCache
	lister    *ReleaseLister
	ns        corelisters.NamespaceLister
	converted memo
	specs     specs
	// authorizer checks owner references with the requester's rights.
	authorizer authorizer.Authorizer

	// destroyed is closed by Destroy: the kind is no longer served this
	// way (removed, renamed or redefined), and open watches end.
	destroyed   chan struct{}
	destroyOnce sync.Once
	// epoch is kind.ResourceVersion as a number (0 when it is not one):
	// watches from an older resourceVersion get 410 Gone.
	epoch uint64
}

// Backend is how a kind's storage reaches the HelmReleases.
type Backend struct {
	// Client reads and writes HelmReleases. Its scheme must know helmv2,
	// and it must talk to kube-apiserver directly (client.NewWithWatch),
	// not read from an informer cache: resourceVersion and consistency
	// semantics are the HelmRelease API's only then.
	Client client.WithWatch
	// Lister, when set, serves lists that go to kube-apiserver as a
	// stream (less memory, and no decoding of unchanged objects); Client
	// lists otherwise.
	Lister *ReleaseLister
	// Releases, when set, serves the lists that may come from a cache
	// (see List).
	Releases *ReleaseCache
	// Namespaces, when set, tells which object (ConfigMap or, during the
	// migration from it, the legacy Secret) new HelmReleases in a
	// namespace take cluster values from: the namespace annotation
	// cozystack.io/values-source (contract K2). Without it, or for a
	// namespace it does not know yet, the ConfigMap.
	Namespaces corelisters.NamespaceLister
	// Authorizer is the server's authorizer (kube-apiserver's RBAC through
	// SubjectAccessReviews): owner references an application adds are
	// checked with the requester's rights. Without it they are refused.
	Authorizer authorizer.Authorizer
}

// NewREST returns the storage of kind. The backend's parts are the
// caller's; Destroy leaves them alone.
func NewREST(kind *appkinds.Kind, b Backend) *REST {
	epoch, _ := strconv.ParseUint(kind.ResourceVersion, 10, 64)
	return &REST{kind: kind, client: b.Client, releases: b.Releases, lister: b.Lister, ns: b.Namespaces, authorizer: b.Authorizer,
		destroyed: make(chan struct{}), epoch: epoch}
}

var (
	_ rest.Storage                    = &REST{}
	_ rest.Scoper                     = &REST{}
	_ rest.KindProvider               = &REST{}
	_ rest.SingularNameProvider       = &REST{}
	_ rest.ShortNamesProvider         = &REST{}
	_ rest.Creater                    = &REST{}
	_ rest.Getter                     = &REST{}
	_ rest.Lister                     = &REST{}
	_ rest.TableConvertor             = &REST{}
	_ rest.Watcher                    = &REST{}
	_ rest.Updater                    = &REST{}
	_ rest.Patcher                    = &REST{}
	_ rest.GracefulDeleter            = &REST{}
	_ rest.MayReturnFullObjectDeleter = &REST{}
	_ rest.CollectionDeleter          = &REST{}
)

// New returns an empty application carrying its apiVersion and kind, the
// signal the decoder needs for unstructured objects.
func (r *REST) New() runtime.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk())
	return u
}

// NewList returns an empty <Kind>List.
func (r *REST) NewList() runtime.Object {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: appkinds.Group, Version: appkinds.Version, Kind: r.kind.ListKind})
	return l
}

// Destroy ends the storage's open watches (their streams close, so
// clients relist); the client belongs to the caller. It is called when the
// kind stops being served this way: its AD removed, renamed or redefined.
func (r *REST) Destroy() {
	r.destroyOnce.Do(func() { close(r.destroyed) })
}

// NamespaceScoped is true: applications live in tenant namespaces.
func (r *REST) NamespaceScoped() bool { return true }

// Kind is the kind's name, e.g. "Postgres".
func (r *REST) Kind() string { return r.kind.Kind }

// GetSingularName is the AD's singular name.
func (r *REST) GetSingularName() string { return r.kind.Singular }

// ShortNames are the AD's short names.
func (r *REST) ShortNames() []string { return r.kind.ShortNames }

// DeleteReturnsDeletedObject is true: Delete returns the application, not a
// Status.
func (r *REST) DeleteReturnsDeletedObject() bool { return true }

func (r *REST) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: appkinds.Group, Version: appkinds.Version, Kind: r.kind.Kind}
}

func (r *REST) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: appkinds.Group, Resource: r.kind.Plural}
}

func (r *REST) key(ctx context.Context, name string) client.ObjectKey {
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	return client.ObjectKey{Namespace: ns, Name: r.kind.HelmReleaseName(name)}
}

// owns reports whether hr is the HelmRelease of an application of this kind.
func (r *REST) owns(hr *helmv2.HelmRelease) bool {
	_, ok := r.kind.ApplicationName(hr.Name)
	return ok && hr.Labels[v1alpha1.LabelApplicationKind] == r.kind.Kind
}

// getHelmRelease reads the HelmRelease of application name; one that is not
// labelled as this kind's is NotFound, so the API never shows or changes a
// HelmRelease it did not write.
func (r *REST) getHelmRelease(ctx context.Context, name string, opts *metav1.GetOptions) (*helmv2.HelmRelease, error) {
	hr := &helmv2.HelmRelease{}
	get := &client.GetOptions{}
	if opts != nil {
		get.Raw = opts.DeepCopy()
	}
	if err := r.client.Get(ctx, r.key(ctx, name), hr, get); err != nil {
		return nil, r.mapError(err, name)
	}
	if !r.owns(hr) {
		return nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	return hr, nil
}

func (r *REST) fromHelmRelease(hr *helmv2.HelmRelease) (*unstructured.Unstructured, error) {
	app, err := fromHelmRelease(r.kind, hr, Spec, r.statusHooks())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return app, nil
}

// Get returns application name from the request namespace. options
// (resourceVersion) go to the HelmRelease read unchanged.
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	hr, err := r.getHelmRelease(ctx, name, options)
	if err != nil {
		return nil, err
	}
	app, err := r.fromHelmRelease(hr)
	if err != nil {
		return nil, err
	}
	return app, nil
}

// List returns the applications of the kind in the request namespace (all
// namespaces when it is empty), sorted by namespace and name as
// kube-apiserver returns them. Label and field selectors, resourceVersion,
// resourceVersionMatch, limit and continue apply to the HelmRelease list
// unchanged, so consistency and paging are kube-apiserver's; the list
// carries the HelmRelease list's resourceVersion and continue token. The one
// exception: a list with resourceVersion "0" ("any version") and no paging
// is served from the ReleaseCache once it has synced, as kube-apiserver
// serves it from its watch cache, with the cache's resourceVersion.
// HelmReleases that carry the kind label but not the kind's name prefix are
// skipped.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	out := newList(r.NewList().(*unstructured.UnstructuredList))
	lo, selectable, err := r.listOptions(ctx, options, false)
	if err != nil || !selectable {
		return out, err
	}
	complete := (lo.LabelSelector == nil || len(mustRequirements(lo.LabelSelector)) == 1) && lo.FieldSelector == nil && lo.Namespace == "" && lo.Limit == 0
	r.converted.begin(complete)
	defer r.converted.end(complete)
	if anyVersion(options) && lo.Limit == 0 && lo.Continue == "" {
		if hrs, ok := r.releases.List(r.kind.Kind, lo.Namespace); ok {
			out.SetResourceVersion(r.releases.LastSyncResourceVersion())
			sort.Slice(hrs, func(i, j int) bool {
				if hrs[i].Namespace != hrs[j].Namespace {
					return hrs[i].Namespace < hrs[j].Namespace
				}
				return hrs[i].Name < hrs[j].Name
			})
			for _, hr := range hrs {
				if !lo.LabelSelector.Matches(labels.Set(hr.Labels)) ||
					(lo.FieldSelector != nil && !lo.FieldSelector.Matches(fields.Set{"metadata.name": hr.Name, "metadata.namespace": hr.Namespace})) {
					continue
				}
				if err := r.addItem(out, hr); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	}
	if r.lister != nil {
		meta, err := r.lister.List(ctx, lo.Namespace, lo.AsListOptions(), func(item *ListItem) error {
			if encoded := r.converted.get(item.UID, item.ResourceVersion); encoded != nil && r.memoizable() {
				out.add(encoded)
				return nil
			}
			hr, err := item.Decode()
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			return r.addItem(out, hr)
		})
		if err != nil {
			return nil, r.mapError(err, "")
		}
		out.SetResourceVersion(meta.ResourceVersion)
		out.SetContinue(meta.Continue)
		out.SetRemainingItemCount(meta.RemainingItemCount)
		return out, nil
	}
	hrs := &helmv2.HelmReleaseList{}
	if err := r.client.List(ctx, hrs, lo); err != nil {
		return nil, r.mapError(err, "")
	}
	out.SetResourceVersion(hrs.ResourceVersion)
	out.SetContinue(hrs.Continue)
	out.SetRemainingItemCount(hrs.RemainingItemCount)
	for i := range hrs.Items {
		if err := r.addItem(out, &hrs.Items[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addItem converts hr and appends it to out, through the memo of
// conversions: lists share one encoding per HelmRelease resourceVersion,
// and conversions share one spec per distinct values (specs). A
// HelmRelease that is not an application of the kind is skipped.
func (r *REST) addItem(out *List, hr *helmv2.HelmRelease) error {
	if encoded := r.converted.get(hr.UID, hr.ResourceVersion); encoded != nil && r.memoizable() {
		out.add(encoded)
		return nil
	}
	app, err := fromHelmRelease(r.kind, hr, r.specs.get, r.statusHooks())
	if err != nil {
		klog.V(2).InfoS("Skipping HelmRelease", "kind", r.kind.Kind, "err", err)
		return nil
	}
	encoded, err := json.Marshal(app.Object)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("encoding %s %s/%s: %w", r.kind.Kind, app.GetNamespace(), app.GetName(), err))
	}
	if r.memoizable() {
		r.converted.put(hr.UID, hr.ResourceVersion, encoded)
	}
	out.add(encoded)
	return nil
}

// anyVersion reports whether a list may be served at any resourceVersion:
// resourceVersion "0" with no match or NotOlderThan (API concepts,
// "Semantics for get and list").
func anyVersion(o *metainternalversion.ListOptions) bool {
	return o != nil && o.ResourceVersion == "0" &&
		(o.ResourceVersionMatch == "" || o.ResourceVersionMatch == metav1.ResourceVersionMatchNotOlderThan)
}

func mustRequirements(s labels.Selector) labels.Requirements {
	reqs, _ := s.Requirements()
	return reqs
}

// listOptions translates a list or watch request into the HelmRelease
// list: the kind label AND the user's label selector, and the field selector
// with metadata.name mapped to the HelmRelease name. selectable is false
// when the label selector can match nothing.
func (r *REST) listOptions(ctx context.Context, options *metainternalversion.ListOptions, watch bool) (lo *client.ListOptions, selectable bool, err error) {
	if options == nil {
		options = &metainternalversion.ListOptions{}
	}
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	kindReq, err := labels.NewRequirement(v1alpha1.LabelApplicationKind, selection.Equals, []string{r.kind.Kind})
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	sel := labels.NewSelector().Add(*kindReq)
	if options.LabelSelector != nil {
		reqs, ok := options.LabelSelector.Requirements()
		if !ok {
			return nil, false, nil
		}
		sel = sel.Add(reqs...)
	}
	fsel, err := r.fieldSelector(options.FieldSelector)
	if err != nil {
		return nil, false, err
	}
	raw := &metav1.ListOptions{
		ResourceVersion:      options.ResourceVersion,
		ResourceVersionMatch: options.ResourceVersionMatch,
		TimeoutSeconds:       options.TimeoutSeconds,
	}
	if watch {
		raw.AllowWatchBookmarks = options.AllowWatchBookmarks
		raw.SendInitialEvents = options.SendInitialEvents
	}
	return &client.ListOptions{
		Namespace:     ns,
		LabelSelector: sel,
		FieldSelector: fsel,
		Limit:         options.Limit,
		Continue:      options.Continue,
		Raw:           raw,
	}, true, nil
}

// fieldSelector maps the supported field selectors (metadata.name,
// metadata.namespace, as for custom resources) onto the HelmRelease; any
// other field is a 400.
func (r *REST) fieldSelector(s fields.Selector) (fields.Selector, error) {
	if s == nil || s.Empty() {
		return nil, nil
	}
	return s.Transform(func(f, v string) (string, string, error) {
		switch f {
		case "metadata.name":
			return f, r.kind.HelmReleaseName(v), nil
		case "metadata.namespace":
			return f, v, nil
		}
		return "", "", apierrors.NewBadRequest(fmt.Sprintf(
			"field label not supported for %s: %s (supported: metadata.name, metadata.namespace)", r.groupResource(), f))
	})
}

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
	rest.WipeObjectMetaSystemFields(app)
	app.SetResourceVersion("")
	app.SetGeneration(0)
	generated := app.GetName() == "" && app.GetGenerateName() != ""
	if generated {
		app.SetName(r.generateName(app.GetGenerateName()))
	}
	if errs := r.validateCreate(ctx, app, directive); len(errs) > 0 {
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
		err = r.client.Create(ctx, hr, &client.CreateOptions{DryRun: dryRun, FieldManager: FieldManager, FieldValidation: backendFieldValidation})
		if err == nil {
			return r.fromHelmRelease(hr)
		}
		if generated && apierrors.IsAlreadyExists(err) {
			if attempt < generateNameAttempts {
				// Same base, same length: the new name is as valid as the
				// one validated above.
				app.SetName(r.generateName(app.GetGenerateName()))
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

// backendFieldValidation is the field validation of HelmRelease writes.
// The HelmRelease is built here from a validated application, and
// kube-apiserver prunes fields its schema does not know whatever the
// directive; "Ignore" only spares it the strict second decoding that
// "Strict" and "Warn" (the default) cost on every write, about 0.07 ms of
// its CPU per create (BenchmarkApplicationAPI).
const backendFieldValidation = metav1.FieldValidationIgnore

// updateAttempts bounds the recomputations of an update that lost a race
// with another writer of the HelmRelease.
const updateAttempts = 5

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
	// As rest.BeforeUpdate: system fields come from the stored object.
	app.SetGeneration(old.GetGeneration())
	if app.GetUID() == "" {
		app.SetUID(old.GetUID())
	}
	app.SetCreationTimestamp(old.GetCreationTimestamp())
	if old.GetDeletionTimestamp() != nil {
		app.SetDeletionTimestamp(old.GetDeletionTimestamp())
	}
	if app.GetResourceVersion() == "" {
		app.SetResourceVersion(current.ResourceVersion)
	}
	if errs := r.validateUpdate(ctx, app, old, options.FieldValidation); len(errs) > 0 {
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
	if r.ns == nil {
		return v1alpha1.ValuesKind(v1alpha1.ValuesSourceConfigMap)
	}
	n, err := r.ns.Get(ns)
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
		if strings.HasPrefix(k, "_") {
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

// Delete deletes application name's HelmRelease, passing preconditions (the
// application's UID and resourceVersion are the HelmRelease's), propagation
// policy, grace period and dryRun through. It returns the application and
// deleted=true when the HelmRelease is gone at once, or the application
// marked for deletion and deleted=false while finalizers hold it, as the
// generic registry does.
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if options == nil {
		options = &metav1.DeleteOptions{}
	}
	current, err := r.getHelmRelease(ctx, name, nil)
	if err != nil {
		return nil, false, err
	}
	app, err := r.fromHelmRelease(current)
	if err != nil {
		return nil, false, err
	}
	if deleteValidation != nil {
		if err := deleteValidation(ctx, app.DeepCopyObject()); err != nil {
			return nil, false, err
		}
	}
	del := &client.DeleteOptions{
		GracePeriodSeconds: options.GracePeriodSeconds,
		Preconditions:      options.Preconditions,
		PropagationPolicy:  options.PropagationPolicy,
		DryRun:             options.DryRun,
		Raw:                options.DeepCopy(),
	}
	if err := r.client.Delete(ctx, current, del); err != nil {
		return nil, false, r.mapError(err, name)
	}
	if len(options.DryRun) > 0 {
		return app, deletesAtOnce(current, options), nil
	}
	// The client drops the DELETE response; read again to tell "gone" from
	// "marked for deletion".
	after := &helmv2.HelmRelease{}
	err = r.client.Get(ctx, r.key(ctx, name), after)
	switch {
	case apierrors.IsNotFound(err), err == nil && after.UID != current.UID:
		return app, true, nil
	case err != nil:
		// The delete succeeded; only its outcome is unknown.
		klog.V(2).InfoS("Reading HelmRelease after delete", "kind", r.kind.Kind, "name", name, "err", err)
		return app, false, nil
	}
	if !r.owns(after) {
		return app, true, nil
	}
	out, err := r.fromHelmRelease(after)
	if err != nil {
		return nil, false, err
	}
	return out, false, nil
}

// deletesAtOnce predicts a dry-run delete's outcome: the object stays while
// it has finalizers, and orphan or foreground propagation add one.
func deletesAtOnce(hr *helmv2.HelmRelease, options *metav1.DeleteOptions) bool {
	if len(hr.Finalizers) > 0 {
		return false
	}
	if p := options.PropagationPolicy; p != nil && (*p == metav1.DeletePropagationOrphan || *p == metav1.DeletePropagationForeground) {
		return false
	}
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured by kube-apiserver.
	return options.OrphanDependents == nil || !*options.OrphanDependents
}

// DeleteCollection deletes every application listOptions select (all pages)
// one by one with Delete; ones already gone are skipped. It returns the
// deleted applications as a <Kind>List. Not atomic, as in the generic
// registry.
func (r *REST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	lo := &metainternalversion.ListOptions{}
	if listOptions != nil {
		lo = listOptions.DeepCopy()
	}
	lo.Limit, lo.Continue = 0, ""
	listed, err := r.List(ctx, lo)
	if err != nil {
		return nil, err
	}
	l := listed.(*List)
	if err := l.Materialize(); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out := r.NewList().(*unstructured.UnstructuredList)
	for _, item := range l.Items {
		var opts *metav1.DeleteOptions
		if options != nil {
			opts = options.DeepCopy()
		}
		obj, _, err := r.Delete(genericapirequest.WithNamespace(ctx, item.GetNamespace()), item.GetName(), deleteValidation, opts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *obj.(*unstructured.Unstructured))
	}
	return out, nil
}

// application checks that obj is an application of this kind and returns a
// copy with apiVersion and kind set.
func (r *REST) application(obj runtime.Object) (*unstructured.Unstructured, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a %s object: %T", r.kind.Kind, obj))
	}
	if (u.GetKind() != "" && u.GetKind() != r.kind.Kind) || (u.GetAPIVersion() != "" && u.GetAPIVersion() != r.gvk().GroupVersion().String()) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s is not %s", u.GroupVersionKind(), r.gvk()))
	}
	u = u.DeepCopy()
	u.SetGroupVersionKind(r.gvk())
	return u, nil
}

// requestApplication is application(obj), and checks that the object's
// namespace, if set, is the request's (and sets it otherwise).
func (r *REST) requestApplication(ctx context.Context, obj runtime.Object) (*unstructured.Unstructured, error) {
	app, err := r.application(obj)
	if err != nil {
		return nil, err
	}
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(ns, app); err != nil {
		return nil, err
	}
	return app, nil
}

// mapError rewrites an error about the HelmRelease of application name
// (name may be empty for lists) into the same error about the application:
// status details, message and causes name the application resource and
// name, so NotFound, AlreadyExists, Conflict and Invalid read as they would
// for any Kubernetes resource. Errors about other resources (a missing
// namespace) and errors without a status pass through.
func (r *REST) mapError(err error, name string) error {
	var apiStatus apierrors.APIStatus
	if err == nil || !errors.As(err, &apiStatus) {
		return err
	}
	status := apiStatus.Status()
	st := status.DeepCopy()
	st.Message = r.rewrite(st.Message, name)
	if d := st.Details; d != nil && d.Group == helmv2.GroupVersion.Group {
		d.Group = appkinds.Group
		switch d.Kind {
		case "helmreleases":
			d.Kind = r.kind.Plural
		case helmv2.HelmReleaseKind:
			d.Kind = r.kind.Kind
		}
		if name != "" && d.Name == r.kind.HelmReleaseName(name) {
			d.Name = name
		}
		for i := range d.Causes {
			d.Causes[i].Message = r.rewrite(d.Causes[i].Message, name)
		}
	}
	return &apierrors.StatusError{ErrStatus: *st}
}

func (r *REST) rewrite(msg, name string) string {
	pairs := []string{
		"helmreleases." + helmv2.GroupVersion.Group, r.groupResource().String(),
		helmv2.HelmReleaseKind + "." + helmv2.GroupVersion.Group, r.kind.Kind + "." + appkinds.Group,
	}
	if name != "" {
		pairs = append(pairs, strconv.Quote(r.kind.HelmReleaseName(name)), strconv.Quote(name))
	}
	return strings.NewReplacer(pairs...).Replace(msg)
}
