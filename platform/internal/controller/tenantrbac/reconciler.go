package tenantrbac

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// maxDepth bounds the walk up the parent labels (a cycle set by hand ends
// there).
const maxDepth = 64

// CacheByObject are the cache options the manager needs for this package:
// RoleBindings, ServiceAccounts and ClusterRoleBindings are cached only
// when cozystack-controller wrote them, ClusterRoles only when they are a
// catalog's installer role (v1alpha1.InstallerRoleLabel).
func CacheByObject() map[client.Object]cache.ByObject {
	owned := labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController})
	installers := labels.SelectorFromSet(labels.Set{v1alpha1.InstallerRoleLabel: "true"})
	return map[client.Object]cache.ByObject{
		&rbacv1.RoleBinding{}:        {Label: owned},
		&rbacv1.ClusterRoleBinding{}: {Label: owned},
		&corev1.ServiceAccount{}:     {Label: owned},
		&rbacv1.ClusterRole{}:        {Label: installers},
	}
}

// Setup registers the reconciler with mgr, whose cache must include
// CacheByObject and whose scheme must know helm.toolkit.fluxcd.io/v2
// (a terminating namespace's HelmReleases decide when its installers go).
func Setup(mgr ctrl.Manager) error {
	r := &reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: mgr.GetEventRecorder("cozystack-controller")}
	tenant := func(obj client.Object) bool {
		_, ok := obj.GetLabels()[v1alpha1.LabelTenant]
		return ok
	}
	// A namespace that stops being a tenant matters too: it is unbound.
	isTenant := predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return tenant(e.Object) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return tenant(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return tenant(e.ObjectOld) || tenant(e.ObjectNew) },
		GenericFunc: func(e event.GenericEvent) bool { return tenant(e.Object) },
	}
	// A namespace's change concerns its descendants too (their subjects
	// hold its groups).
	withDescendants := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		names, err := r.descendants(ctx, obj.GetName())
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing tenant namespaces")
		}
		reqs := []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.GetName()}}}
		for _, n := range names {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: n}})
		}
		return reqs
	})
	// An object of ours changed or went: its namespace again.
	// What was written for a tenant namespace outside it (a release
	// storage namespace and its RoleBinding, the ClusterRoleBinding)
	// names it by labelNamespace.
	toNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		ns := obj.GetLabels()[labelNamespace]
		if ns == "" {
			ns = obj.GetNamespace()
		}
		if ns == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: ns}}}
	})
	// A catalog's installer role came or went: every tenant namespace.
	toTenants := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var list corev1.NamespaceList
		if err := r.client.List(ctx, &list, client.HasLabels{v1alpha1.LabelTenant}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing tenant namespaces")
			return nil
		}
		reqs := make([]reconcile.Request, len(list.Items))
		for i, ns := range list.Items {
			reqs[i] = reconcile.Request{NamespacedName: client.ObjectKey{Name: ns.Name}}
		}
		return reqs
	})
	// A namespace's deletion starts its installers' countdown; its
	// recorded parent matters too.
	deleting := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil) ||
			!slices.Equal(e.ObjectOld.GetOwnerReferences(), e.ObjectNew.GetOwnerReferences())
	}}
	// A HelmRelease going from a terminating namespace may be its last.
	// Where a release keeps its records, and as whom it installs, decide
	// its installer's storage rights (storageGuests).
	releases := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*helmv2.HelmRelease), e.ObjectNew.(*helmv2.HelmRelease)
			return n.GetDeletionTimestamp() != nil || o.Spec.ServiceAccountName != n.Spec.ServiceAccountName ||
				o.Spec.StorageNamespace != n.Spec.StorageNamespace
		},
		DeleteFunc: func(event.DeleteEvent) bool { return true },
	}
	return ctrl.NewControllerManagedBy(mgr).Named("tenant-rbac").
		Watches(&rbacv1.ClusterRole{}, toTenants, builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&corev1.Namespace{}, withDescendants, builder.WithPredicates(isTenant, predicate.Or[client.Object](predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deleting))).
		Watches(&helmv2.HelmRelease{}, toNamespace, builder.WithPredicates(releases)).
		Watches(&corev1.Namespace{}, toNamespace, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return obj.GetLabels()[labelNamespace] != "" && obj.GetLabels()[v1alpha1.LabelManagedBy] == v1alpha1.ManagedByController
		}))).
		Watches(&rbacv1.RoleBinding{}, toNamespace).
		Watches(&rbacv1.ClusterRoleBinding{}, toNamespace).
		Watches(&corev1.ServiceAccount{}, toNamespace).
		Complete(r)
}

// labelNamespace names, on a ClusterRoleBinding, the tenant namespace it
// was written for.
const labelNamespace = "cozystack.io/tenant-namespace"

type reconciler struct {
	client client.Client
	// reader reads past the cache what decides a recorded parent.
	reader   client.Reader
	recorder recorder.EventRecorder
}

// descendants returns the tenant namespaces below name, from the cache.
func (r *reconciler) descendants(ctx context.Context, name string) ([]string, error) {
	var list corev1.NamespaceList
	if err := r.client.List(ctx, &list, client.HasLabels{v1alpha1.LabelTenant}); err != nil {
		return nil, err
	}
	children := map[string][]string{}
	for _, ns := range list.Items {
		if p := ns.Labels[v1alpha1.LabelParent]; p != "" {
			children[p] = append(children[p], ns.Name)
		}
	}
	var out []string
	seen := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out, nil
}

// Ancestors returns the tenant namespaces above ns, nearest first, by
// recorded parents (ParentOwner: the ownerReference a namespace's parent
// label is verified into), never by a label alone: each parent must exist
// with the recorded UID and be a tenant namespace; the walk stops at the
// first that is not (a parent re-created under the same name is not an
// ancestor of its namespace's former children), at a namespace with no
// recorded parent, or at tenant-root, which has no parent.
func Ancestors(ctx context.Context, c client.Reader, ns *corev1.Namespace) ([]string, error) {
	var out []string
	seen := map[string]bool{ns.Name: true}
	cur := ns
	for len(out) < maxDepth {
		parent := cur.Labels[v1alpha1.LabelParent]
		if parent == "" || seen[parent] {
			break
		}
		owner := ParentOwner(cur)
		if owner == nil {
			break
		}
		next := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: parent}, next); apierrors.IsNotFound(err) {
			break
		} else if err != nil {
			return nil, err
		}
		if next.UID != owner.UID {
			break
		}
		if _, ok := next.Labels[v1alpha1.LabelTenant]; !ok {
			break
		}
		out = append(out, parent)
		seen[parent] = true
		cur = next
	}
	return out, nil
}

// Subjects returns the groups holding level in a namespace whose tenant
// chain (the namespace, then its ancestors) is chain: for each namespace
// of the chain, the groups of level and every level above it.
func Subjects(level string, chain []string) []rbacv1.Subject {
	from := 0
	for i, l := range v1alpha1.TenantLevels {
		if l == level {
			from = i
		}
	}
	var out []rbacv1.Subject
	for _, ns := range chain {
		for _, l := range v1alpha1.TenantLevels[from:] {
			out = append(out, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: v1alpha1.TenantGroup(ns, l)})
		}
	}
	return out
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, req.NamespacedName, ns); apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	} else if err != nil {
		return reconcile.Result{}, err
	}
	if ns.DeletionTimestamp != nil {
		// What was written here goes with the namespace, but only after
		// the last release that installs as it (FinalizerTenantReleases);
		// the ClusterRoleBinding is owned by the namespace, so garbage
		// collection takes it after the namespace is gone.
		_, err := r.releaseFinalizers(ctx, ns.Name)
		return reconcile.Result{}, err
	}
	if strings.HasPrefix(ns.Name, v1alpha1.ReleaseStorageNamespacePrefix) {
		// A release storage namespace is never a tenant namespace; what
		// it holds is its tenant namespace's.
		return reconcile.Result{}, nil
	}
	if _, ok := ns.Labels[v1alpha1.LabelTenant]; !ok {
		// No longer a tenant: no tenant group or installer keeps rights
		// here.
		return reconcile.Result{}, r.unbind(ctx, ns.Name)
	}
	if ns.Labels[v1alpha1.LabelParent] != "" && ParentOwner(ns) == nil {
		// First seen: the parent the label names becomes an ancestor only
		// once verified and recorded by UID.
		if err := r.recordParent(ctx, ns); err != nil {
			return reconcile.Result{}, err
		}
	}
	ancestors, err := Ancestors(ctx, r.client, ns)
	if err != nil {
		return reconcile.Result{}, err
	}
	installers, err := r.installers(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	guests, err := r.storageGuests(ctx, ns.Name, installers)
	if err != nil {
		return reconcile.Result{}, err
	}
	want := Objects(ns, append([]string{ns.Name}, ancestors...), installers, guests)
	for _, obj := range want {
		if err := r.client.Patch(ctx, obj, client.Apply, client.FieldOwner(v1alpha1.FieldManagerController), client.ForceOwnership); err != nil {
			return reconcile.Result{}, fmt.Errorf("apply %s %s in %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), ns.Name, err)
		}
	}
	return reconcile.Result{}, r.prune(ctx, ns.Name, want)
}

// installers returns the catalogs' installer roles: ClusterRole name by
// PackageSource name (v1alpha1.AnnotationPackageSource).
func (r *reconciler) installers(ctx context.Context) (map[string]string, error) {
	var roles rbacv1.ClusterRoleList
	if err := r.client.List(ctx, &roles, client.MatchingLabels{v1alpha1.InstallerRoleLabel: "true"}); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, role := range roles.Items {
		if src := role.Annotations[v1alpha1.AnnotationPackageSource]; src != "" && role.DeletionTimestamp == nil {
			out[src] = role.Name
		}
	}
	return out, nil
}

// storageGuests returns, by namespace holding Helm's records, the catalogs
// (PackageSource names, of installers) with a HelmRelease in tenant
// namespace ns that installs as the catalog's installer and keeps its
// records there, when that is not the catalog's own storage namespace:
// ns itself (no spec.storageNamespace: a release created before release
// storage namespaces, whose records are found only there), or another
// catalog's storage namespace in ns (a release handed over to this
// catalog, K1 "Who serves a kind", keeps where its records are).
func (r *reconciler) storageGuests(ctx context.Context, ns string, installers map[string]string) (map[string][]string, error) {
	var list helmv2.HelmReleaseList
	if err := r.client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	bySA := map[string]string{}
	for src := range installers {
		bySA[v1alpha1.CatalogInstallerServiceAccount(src)] = src
	}
	out := map[string][]string{}
	for _, hr := range list.Items {
		src, ok := bySA[hr.Spec.ServiceAccountName]
		if !ok {
			continue
		}
		at := hr.Spec.StorageNamespace
		if at == "" {
			at = ns
		}
		if at != v1alpha1.ApplicationReleaseStorageNamespace(ns, src) && !slices.Contains(out[at], src) {
			out[at] = append(out[at], src)
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out, nil
}

// prune deletes the catalog installers (ServiceAccount and RoleBinding)
// of namespace ns that want no longer holds: their catalog went. So goes
// such a catalog's release storage namespace of ns (pruneStorage).
func (r *reconciler) prune(ctx context.Context, ns string, want []client.Object) error {
	keep := map[string]bool{}
	for _, o := range want {
		keep[o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName()] = true
	}
	if err := r.deleteWritten(ctx, ns, client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelCatalogInstaller: "true"}, keep); err != nil {
		return err
	}
	return r.pruneStorage(ctx, ns, keep)
}

// helmReleaseType is the Secret type of Helm's release records.
const helmReleaseType = "helm.sh/release.v1"

// pruneStorage deletes the release storage namespaces this package
// created for tenant namespace ns (v1alpha1.ApplicationReleaseStorageNamespace)
// that keep does not hold, their catalog being gone, unless one still
// holds a Helm release record: a release handed over to another catalog
// keeps its records where they are (K1, "Who serves a kind"), so its
// storage namespace stays until the tenant namespace goes.
func (r *reconciler) pruneStorage(ctx context.Context, ns string, keep map[string]bool) error {
	var list corev1.NamespaceList
	if err := r.client.List(ctx, &list, client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelNamespace: ns}); err != nil {
		return err
	}
	for i := range list.Items {
		s := &list.Items[i]
		if keep["Namespace/"+s.Name] || !strings.HasPrefix(s.Name, v1alpha1.ReleaseStorageNamespacePrefix) ||
			s.Annotations[v1alpha1.AnnotationPackageSource] == "" || s.DeletionTimestamp != nil || !appliedHere(s) {
			continue
		}
		var records corev1.SecretList
		if err := r.reader.List(ctx, &records, client.InNamespace(s.Name), client.Limit(1),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("type", helmReleaseType)}); err != nil {
			return fmt.Errorf("list Helm's records in %s: %w", s.Name, err)
		}
		if len(records.Items) > 0 {
			continue
		}
		if err := r.client.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete release storage namespace %s of %s: %w", s.Name, ns, err)
		}
	}
	return nil
}

// unbind deletes what this package wrote for namespace ns: its
// RoleBindings, ServiceAccounts and the Tenant chart's ClusterRoleBinding.
func (r *reconciler) unbind(ctx context.Context, ns string) error {
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: TenantInstallerBindingName(ns)}}
	if err := r.client.Delete(ctx, crb); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s of former tenant namespace %s: %w", crb.Name, ns, err)
	}
	return r.deleteWritten(ctx, ns, client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController}, nil)
}

// deleteWritten deletes the ServiceAccounts and RoleBindings of namespace
// ns that sel selects, but those keep names ("ServiceAccount/<name>",
// "RoleBinding/<name>"). Their FinalizerTenantReleases goes first: they
// are no longer wanted in a namespace that stays.
func (r *reconciler) deleteWritten(ctx context.Context, ns string, sel client.MatchingLabels, keep map[string]bool) error {
	objs, err := r.written(ctx, ns, sel)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if keep[o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName()] || !appliedHere(o) {
			continue
		}
		if err := r.dropFinalizer(ctx, o); err != nil {
			return err
		}
		if err := r.client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete %s in %s: %w", o.GetName(), ns, err)
		}
	}
	return nil
}

// appliedHere says whether this package wrote o: the API server's record
// of o's writers (metadata.managedFields) holds a server-side apply by
// v1alpha1.FieldManagerController. The labels select what to look at; they decide nothing, so
// an object someone else labelled alike is never deleted.
func appliedHere(o client.Object) bool {
	for _, f := range o.GetManagedFields() {
		if f.Manager == v1alpha1.FieldManagerController && f.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// written lists the ServiceAccounts and RoleBindings of namespace ns that
// sel selects, each with its kind set.
func (r *reconciler) written(ctx context.Context, ns string, sel client.MatchingLabels) ([]client.Object, error) {
	var sas corev1.ServiceAccountList
	if err := r.client.List(ctx, &sas, client.InNamespace(ns), sel); err != nil {
		return nil, err
	}
	var rbs rbacv1.RoleBindingList
	if err := r.client.List(ctx, &rbs, client.InNamespace(ns), sel); err != nil {
		return nil, err
	}
	var out []client.Object
	for i := range sas.Items {
		sas.Items[i].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceAccount"))
		out = append(out, &sas.Items[i])
	}
	for i := range rbs.Items {
		rbs.Items[i].SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("RoleBinding"))
		out = append(out, &rbs.Items[i])
	}
	return out, nil
}

// labelCatalogInstaller marks the ServiceAccount and RoleBinding of one
// catalog's installer in a tenant namespace, which go when the catalog's
// installer role goes.
const labelCatalogInstaller = "cozystack.io/catalog-installer"

// Objects returns what tenant namespace ns, with tenant chain chain (ns,
// then its ancestors), holds when the catalogs' installer roles are
// installers (ClusterRole name by PackageSource name) and guests names, by
// namespace, the catalogs with releases whose Helm records are there but
// not in their own storage namespace (storageGuests):
// the four tenant RoleBindings; per catalog, its installer ServiceAccount
// (v1alpha1.CatalogInstallerServiceAccount) bound to its role, its release
// storage namespace (v1alpha1.ApplicationReleaseStorageNamespace, owned by
// ns so collected after it, i.e. after its releases) with a RoleBinding
// giving that installer, and those of its guests, Helm's storage there,
// and, for a guest of ns only, a RoleBinding (LegacyStorageBinding) giving
// it Helm's storage in ns too; the
// installer of applications of no catalog (v1alpha1.InstallerServiceAccount,
// Helm's storage only); and the Tenant chart's ServiceAccount, its
// RoleBinding and its ClusterRoleBinding.
func Objects(ns *corev1.Namespace, chain []string, installers map[string]string, guests map[string][]string) []client.Object {
	managed := map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController}
	// Each outlives the releases of the namespace (FinalizerTenantReleases).
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns.Name, Labels: managed, Finalizers: []string{FinalizerTenantReleases}}
	}
	rbTypes := metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"}
	clusterRole := func(name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	}
	sa := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns.Name}
	}
	var out []client.Object
	for _, level := range v1alpha1.TenantLevels {
		name := v1alpha1.TenantRoleName(level)
		out = append(out, &rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: meta(name), RoleRef: clusterRole(name), Subjects: Subjects(level, chain)})
	}
	for _, name := range []string{v1alpha1.InstallerServiceAccount, v1alpha1.TenantInstallerServiceAccount} {
		out = append(out, &corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta(name),
			// Only helm-controller acts as these, by impersonation.
			AutomountServiceAccountToken: ptr.To(false),
		})
	}
	out = append(out,
		&rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: meta(v1alpha1.InstallerServiceAccount),
			RoleRef: clusterRole(HelmStorageRoleName), Subjects: []rbacv1.Subject{sa(v1alpha1.InstallerServiceAccount)}},
		&rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: meta(v1alpha1.TenantInstallerServiceAccount),
			RoleRef: clusterRole(HelmStorageRoleName), Subjects: []rbacv1.Subject{sa(v1alpha1.TenantInstallerServiceAccount)}},
	)
	for _, source := range slices.Sorted(maps.Keys(installers)) {
		name := v1alpha1.CatalogInstallerServiceAccount(source)
		m := meta(name)
		m.Labels = map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelCatalogInstaller: "true"}
		m.Annotations = map[string]string{v1alpha1.AnnotationPackageSource: source}
		out = append(out,
			&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: m,
				AutomountServiceAccountToken: ptr.To(false)},
			&rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: *m.DeepCopy(),
				RoleRef: clusterRole(installers[source]), Subjects: []rbacv1.Subject{sa(name)}},
		)
		if slices.Contains(guests[ns.Name], source) {
			l := *m.DeepCopy()
			l.Name = LegacyStorageBinding(source)
			out = append(out, &rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: l,
				RoleRef: clusterRole(HelmStorageRoleName), Subjects: []rbacv1.Subject{sa(name)}})
		}
		// No finalizer here: the storage namespace goes after ns (its
		// owner), and a finalizer no one removes would keep it.
		storage := v1alpha1.ApplicationReleaseStorageNamespace(ns.Name, source)
		subjects := []rbacv1.Subject{sa(name)}
		for _, g := range guests[storage] {
			subjects = append(subjects, sa(v1alpha1.CatalogInstallerServiceAccount(g)))
		}
		storageLabels := map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelNamespace: ns.Name}
		storageAnnotations := map[string]string{v1alpha1.AnnotationPackageSource: source, annotationTenantNamespace: ns.Name}
		out = append(out,
			&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{
				Name: storage, Labels: storageLabels, Annotations: storageAnnotations,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID}},
			}},
			&rbacv1.RoleBinding{TypeMeta: rbTypes,
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: storage, Labels: storageLabels, Annotations: storageAnnotations},
				RoleRef:    clusterRole(HelmStorageRoleName), Subjects: subjects},
		)
	}
	crbLabels := map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelNamespace: ns.Name}
	out = append(out, &rbacv1.ClusterRoleBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{
			Name: TenantInstallerBindingName(ns.Name), Labels: crbLabels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID}},
		},
		RoleRef:  clusterRole(TenantInstallerRoleName),
		Subjects: []rbacv1.Subject{sa(v1alpha1.TenantInstallerServiceAccount)},
	})
	return out
}

// The cluster-wide roles of platform/tenantaccess/roles.yaml this package
// binds.
const (
	HelmStorageRoleName     = "cozy:tenant:installer:helm-storage"
	TenantInstallerRoleName = "cozy:tenant-installer"
)

// annotationTenantNamespace names, on a release storage namespace and its
// RoleBinding, the exact tenant namespace they were written for (the label
// labelNamespace selects; a label value could not hold every name).
const annotationTenantNamespace = "cozystack.io/tenant-namespace"

// LegacyStorageBinding is the RoleBinding, in a tenant namespace, giving
// the installer of catalog source Helm's storage there while a release of
// the catalog created before release storage namespaces keeps its records
// there: "<installer>-helm-storage", cut with a hash when too long.
func LegacyStorageBinding(source string) string {
	const suffix, limit = "-helm-storage", 253
	name := v1alpha1.CatalogInstallerServiceAccount(source)
	if len(name)+len(suffix) <= limit {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(source))
	return name[:limit-len(suffix)-9] + "-" + hex.EncodeToString(sum[:4]) + suffix
}

// TenantInstallerBindingName is the ClusterRoleBinding of tenant
// namespace ns's cozy-tenant-installer: "cozy:tenant-installer:<ns>".
func TenantInstallerBindingName(ns string) string { return TenantInstallerRoleName + ":" + ns }
