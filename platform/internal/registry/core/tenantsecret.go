package core

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// TenantSecrets is the read-only storage of tenantsecrets: get, list and
// watch, with label and field selectors (metadata.name,
// metadata.namespace, type), resourceVersion semantics, limit and continue
// passed on to kube-apiserver's Secrets. A page may hold fewer items than
// limit (the Secrets that are not TenantSecrets are left out of it).
//
// A Secret ns/name is a TenantSecret when (1) it carries Helm's ownership
// marks of a release in ns (ReleaseOf), (2) that release is the HelmRelease
// of an application (labels apps.cozystack.io/application.{group,kind,name},
// named <prefix><name> of its kind), (3) its kind is served, and (4) the
// kind's ApplicationDefinition spec.secrets selects it for that application
// (Selected). Anything else, a driver's credential copy among them, is
// answered 404 NotFound as if it did not exist.
type TenantSecrets struct {
	// Secrets reads Secrets with cozystack-api's identity.
	Secrets kubernetes.Interface
	// Releases reads HelmReleases (its scheme knows helmv2).
	Releases client.Reader
	// Kinds returns the served application kinds (nil before the first
	// set is resolved: then nothing is a TenantSecret).
	Kinds func() *appkinds.Set
}

var (
	_ rest.Getter               = &TenantSecrets{}
	_ rest.Lister               = &TenantSecrets{}
	_ rest.Watcher              = &TenantSecrets{}
	_ rest.Scoper               = &TenantSecrets{}
	_ rest.SingularNameProvider = &TenantSecrets{}
	_ rest.Storage              = &TenantSecrets{}
)

// New implements rest.Storage.
func (*TenantSecrets) New() runtime.Object { return &TenantSecret{} }

// Destroy implements rest.Storage.
func (*TenantSecrets) Destroy() {}

// NewList implements rest.Lister.
func (*TenantSecrets) NewList() runtime.Object { return &TenantSecretList{} }

// NamespaceScoped implements rest.Scoper.
func (*TenantSecrets) NamespaceScoped() bool { return true }

// GetSingularName implements rest.SingularNameProvider.
func (*TenantSecrets) GetSingularName() string { return "tenantsecret" }

// resolver answers which application a Secret belongs to, for one request.
type resolver struct {
	kinds    map[string]*appkinds.Kind // by Kind
	releases map[string]*helmv2.HelmRelease
	reader   client.Reader
}

func (s *TenantSecrets) resolver() *resolver {
	r := &resolver{kinds: map[string]*appkinds.Kind{}, releases: map[string]*helmv2.HelmRelease{}, reader: s.Releases}
	if s.Kinds != nil {
		if set := s.Kinds(); set != nil {
			for _, k := range set.Served() {
				r.kinds[k.Kind] = k
			}
		}
	}
	return r
}

// preload reads the application HelmReleases of ns ("" for all) at once,
// for a list.
func (r *resolver) preload(ctx context.Context, ns string) error {
	list := &helmv2.HelmReleaseList{}
	if err := r.reader.List(ctx, list, client.InNamespace(ns), client.HasLabels{v1alpha1.LabelApplicationKind}); err != nil {
		return err
	}
	r.releases = map[string]*helmv2.HelmRelease{}
	for i := range list.Items {
		hr := &list.Items[i]
		r.releases[hr.Namespace+"/"+hr.Name] = hr
	}
	r.reader = nil
	return nil
}

// application returns the application sec is a TenantSecret of, and false
// when it is none.
func (r *resolver) application(ctx context.Context, sec *corev1.Secret) (ApplicationReference, bool, error) {
	release := ReleaseOf(sec)
	if release == "" {
		return ApplicationReference{}, false, nil
	}
	key := sec.Namespace + "/" + release
	hr, seen := r.releases[key]
	if !seen && r.reader != nil {
		hr = &helmv2.HelmRelease{}
		if err := r.reader.Get(ctx, client.ObjectKey{Namespace: sec.Namespace, Name: release}, hr); err != nil {
			if !apierrors.IsNotFound(err) {
				return ApplicationReference{}, false, err
			}
			hr = nil
		}
		r.releases[key] = hr
	}
	if hr == nil || hr.Labels[v1alpha1.LabelApplicationGroup] != appkinds.Group {
		return ApplicationReference{}, false, nil
	}
	k := r.kinds[hr.Labels[v1alpha1.LabelApplicationKind]]
	app := hr.Labels[v1alpha1.LabelApplicationName]
	if k == nil || app == "" || k.HelmReleaseName(app) != hr.Name {
		return ApplicationReference{}, false, nil
	}
	if !Selected(k.Secrets, sec, app, sec.Namespace) {
		return ApplicationReference{}, false, nil
	}
	return ApplicationReference{Kind: k.Kind, Name: app}, true, nil
}

// Get implements rest.Getter: 404 for a Secret that is not a TenantSecret.
func (s *TenantSecrets) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	ns := genericapirequest.NamespaceValue(ctx)
	o := metav1.GetOptions{}
	if opts != nil {
		o = *opts
	}
	sec, err := s.Secrets.CoreV1().Secrets(ns).Get(ctx, name, o)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(TenantSecretsGroupResource, name)
	}
	if err != nil {
		return nil, err
	}
	app, ok, err := s.resolver().application(ctx, sec)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(TenantSecretsGroupResource, name)
	}
	return fromSecret(sec, app), nil
}

func listOptions(in *metainternalversion.ListOptions) (metav1.ListOptions, error) {
	out := metav1.ListOptions{}
	if in == nil {
		return out, nil
	}
	err := metainternalversion.Convert_internalversion_ListOptions_To_v1_ListOptions(in, &out, nil)
	return out, err
}

// List implements rest.Lister.
func (s *TenantSecrets) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	ns := genericapirequest.NamespaceValue(ctx)
	o, err := listOptions(opts)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	secrets, err := s.Secrets.CoreV1().Secrets(ns).List(ctx, o)
	if err != nil {
		return nil, err
	}
	r := s.resolver()
	if err := r.preload(ctx, ns); err != nil {
		return nil, err
	}
	out := &TenantSecretList{TypeMeta: metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: TenantSecretKind + "List"}, ListMeta: secrets.ListMeta, Items: []TenantSecret{}}
	for i := range secrets.Items {
		app, ok, err := r.application(ctx, &secrets.Items[i])
		if err != nil {
			return nil, err
		}
		if ok {
			out.Items = append(out.Items, *fromSecret(&secrets.Items[i], app))
		}
	}
	return out, nil
}

// Watch implements rest.Watcher: Secret events of TenantSecrets only,
// bookmarks and errors as they come. A Secret that stops being a
// TenantSecret (its application's release is gone) sends no further event.
func (s *TenantSecrets) Watch(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	ns := genericapirequest.NamespaceValue(ctx)
	o, err := listOptions(opts)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	o.Watch = true
	w, err := s.Secrets.CoreV1().Secrets(ns).Watch(ctx, o)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		sec, ok := ev.Object.(*corev1.Secret)
		if !ok {
			return ev, ev.Type == watch.Error
		}
		if ev.Type == watch.Bookmark {
			bm := &TenantSecret{TypeMeta: metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: TenantSecretKind}}
			bm.ResourceVersion, bm.Annotations = sec.ResourceVersion, sec.Annotations
			return watch.Event{Type: ev.Type, Object: bm}, true
		}
		app, ok, err := s.resolver().application(ctx, sec)
		if err != nil {
			return watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}, true
		}
		if !ok {
			return ev, false
		}
		return watch.Event{Type: ev.Type, Object: fromSecret(sec, app)}, true
	}), nil
}

// ConvertToTable implements rest.TableConvertor: NAME, TYPE, DATA (the
// number of keys), APPLICATION (<kind>/<name>), AGE.
func (s *TenantSecrets) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name of the Secret"},
		{Name: "Type", Type: "string", Description: "Type of the Secret"},
		{Name: "Data", Type: "integer", Description: "Number of data keys"},
		{Name: "Application", Type: "string", Description: "The application (kind/name) whose release made the Secret"},
		{Name: "Age", Type: "string", Description: "Time since the Secret was created"},
	}}
	row := func(ts *TenantSecret) metav1.TableRow {
		age := "<unknown>"
		if !ts.CreationTimestamp.IsZero() {
			age = duration.HumanDuration(time.Since(ts.CreationTimestamp.Time))
		}
		return metav1.TableRow{
			Cells:  []any{ts.Name, string(ts.Type), int64(len(ts.Data)), ts.Application.Kind + "/" + ts.Application.Name, age},
			Object: runtime.RawExtension{Object: ts},
		}
	}
	switch v := obj.(type) {
	case *TenantSecret:
		t.ResourceVersion = v.ResourceVersion
		t.Rows = []metav1.TableRow{row(v)}
	case *TenantSecretList:
		t.ListMeta = v.ListMeta
		for i := range v.Items {
			t.Rows = append(t.Rows, row(&v.Items[i]))
		}
	default:
		return nil, fmt.Errorf("tenantsecrets table: unexpected %T", obj)
	}
	return t, nil
}
