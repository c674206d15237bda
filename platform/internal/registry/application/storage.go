package application

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	corelisters "k8s.io/client-go/listers/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// FieldManager is the field manager of every HelmRelease write: the
// HelmRelease is written with the API server's own credentials, so its
// managedFields name the server, not the end user.
const FieldManager = "cozystack-api"

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
	converted memo
	specs     specs
	// strategy prepares and validates what creates and updates write.
	strategy *strategy

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
	// RootChildTenants bounds the child Tenants of a namespace no Tenant
	// renders, such as tenant-root (contract K2, Tenant quotas); 0 means
	// DefaultRootChildTenants.
	RootChildTenants int
	// RestoreIdentities are the user names that may set restore-only
	// fields (contract K1, "Restore-only fields"): the backup core's
	// identity, which creates restored applications; none when empty.
	RestoreIdentities []string
}

// NewREST returns the storage of kind. The backend's parts are the
// caller's; Destroy leaves them alone.
func NewREST(kind *appkinds.Kind, b Backend) *REST {
	epoch, _ := strconv.ParseUint(kind.ResourceVersion, 10, 64)
	return &REST{kind: kind, client: b.Client, releases: b.Releases, lister: b.Lister,
		strategy: &strategy{kind: kind, client: b.Client, authorizer: b.Authorizer, ns: b.Namespaces,
			rootChildTenants: b.RootChildTenants, restorers: b.RestoreIdentities},
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

// backendFieldValidation is the field validation of HelmRelease writes.
// The HelmRelease is built here from a validated application, and
// kube-apiserver prunes fields its schema does not know whatever the
// directive; "Ignore" only spares it the strict second decoding that
// "Strict" and "Warn" (the default) cost on every write, about 0.07 ms of
// its CPU per create (BenchmarkApplicationAPI).
const backendFieldValidation = metav1.FieldValidationIgnore

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
