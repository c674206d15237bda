package application

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/platform/internal/apiserver/appkinds"
)

// Metadata the platform owns (contract K1,
// contracts/schemas/v1alpha1/k1-application.md, "Metadata the platform
// owns"). An application's labels, annotations and finalizers become its
// HelmRelease's, and the platform and Flux act on some of them: a key
// there would let a tenant steer a controller (which release a Package
// owns, which shard reconciles it, whether helm-controller uninstalls).

// reservedDomains are the label, annotation and finalizer prefixes (the
// domain itself or any subdomain of it) that belong to the platform, Flux
// and Helm.
var reservedDomains = []string{"cozystack.io", "fluxcd.io", "helm.sh"}

// reservedKeys are single keys reserved outside those domains.
var reservedKeys = map[string]bool{
	// The operator and Helm mark what they manage with it.
	"app.kubernetes.io/managed-by": true,
}

// AllowedFluxAnnotations are the Flux annotations a tenant may set on an
// application (K1): they ask helm-controller to reconcile the release now
// (requestedAt), to retry a failed release from scratch (resetAt, with
// requestedAt) or to force an upgrade (forceAt, with requestedAt), as
// `flux reconcile helmrelease [--reset] [--force]` does. Each costs one
// release reconcile, no more than an edit of the spec.
var AllowedFluxAnnotations = []string{
	"reconcile.fluxcd.io/requestedAt",
	"reconcile.fluxcd.io/resetAt",
	"reconcile.fluxcd.io/forceAt",
}

// ReservedKey reports whether a label or annotation key belongs to the
// platform, Flux or Helm: its prefix is cozystack.io, fluxcd.io, helm.sh
// or a subdomain of one, or it is app.kubernetes.io/managed-by; the keys
// of AllowedFluxAnnotations are not reserved.
func ReservedKey(key string) bool {
	if reservedKeys[key] {
		return true
	}
	if slices.Contains(AllowedFluxAnnotations, key) {
		return false
	}
	prefix, _, ok := strings.Cut(key, "/")
	return ok && reservedDomain(prefix)
}

// ReservedFinalizer reports whether a finalizer belongs to the platform,
// Flux or Helm (finalizers.fluxcd.io, helm-controller's, among them): its
// name, or its prefix before "/", is in one of their domains.
func ReservedFinalizer(name string) bool {
	prefix, _, _ := strings.Cut(name, "/")
	return reservedDomain(prefix)
}

func reservedDomain(d string) bool {
	d = strings.ToLower(d)
	for _, r := range reservedDomains {
		if d == r || strings.HasSuffix(d, "."+r) {
			return true
		}
	}
	return false
}

const reservedRule = "keys of cozystack.io, fluxcd.io and helm.sh (and their subdomains) and app.kubernetes.io/managed-by belong to the platform (contract K1)"

// validateReservedMetadata refuses reserved labels, annotations and
// finalizers on app that the stored application old (nil on create) does
// not carry with the same value: a tenant may keep what the platform set,
// never add or change it. A tenant adds no finalizer at all, reserved or
// not (the allow-list of tenant finalizers is empty): the HelmRelease
// would keep it, and deleting the tenant's namespace, which its parent
// tenant may do at any time, would wait for it forever. A finalizer the
// stored application has may stay or go, so anyone with the right to
// update the application (the parent tenant's admins among them) can
// remove one set before this rule. Labels the platform sets on the kind's every
// release (ReservedLabel) are refused always: reads never show them, and
// they would be overwritten.
func validateReservedMetadata(k *appkinds.Kind, app, old *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	var oldLabels, oldAnnotations map[string]string
	var oldFinalizers []string
	if old != nil {
		oldLabels, oldAnnotations, oldFinalizers = old.GetLabels(), old.GetAnnotations(), old.GetFinalizers()
	}
	check := func(what string, path *field.Path, now, before map[string]string) {
		for _, key := range slices.Sorted(maps.Keys(now)) {
			if what == "label" && ReservedLabel(k, key) {
				errs = append(errs, field.Forbidden(path.Key(key),
					fmt.Sprintf("label %s is set by the platform on every %s", key, k.Kind)))
				continue
			}
			if !ReservedKey(key) {
				continue
			}
			if v, ok := before[key]; ok && v == now[key] {
				continue
			}
			errs = append(errs, field.Forbidden(path.Key(key), fmt.Sprintf(
				"%s %s is reserved: %s; remove it (Flux annotations a tenant may set: %s)",
				what, key, reservedRule, strings.Join(AllowedFluxAnnotations, ", "))))
		}
	}
	check("label", metadataPath.Child("labels"), app.GetLabels(), oldLabels)
	check("annotation", metadataPath.Child("annotations"), app.GetAnnotations(), oldAnnotations)
	for i, f := range app.GetFinalizers() {
		if slices.Contains(oldFinalizers, f) {
			continue
		}
		if ReservedFinalizer(f) {
			errs = append(errs, field.Forbidden(metadataPath.Child("finalizers").Index(i), fmt.Sprintf(
				"finalizer %s is reserved: finalizers of cozystack.io, fluxcd.io and helm.sh belong to the platform and Flux (contract K1); remove it", f)))
			continue
		}
		errs = append(errs, field.Forbidden(metadataPath.Child("finalizers").Index(i), fmt.Sprintf(
			"finalizer %s: an application's finalizers belong to the platform and Flux, a tenant adds none (contract K1, Metadata the platform owns): one that only its holder removes would keep the tenant's namespace, and the parent deleting it, from ever finishing; remove it", f)))
	}
	return errs
}

// keepReserved returns desired with the reserved entries of current that
// desired lacks: an update of the application never removes what the
// platform or Flux set on its HelmRelease (helm-controller's finalizer
// among them, without which it would never uninstall the release).
func keepReserved(desired, current map[string]string, reserved func(string) bool) map[string]string {
	var out map[string]string
	for key, v := range current {
		if !reserved(key) {
			continue
		}
		if _, ok := desired[key]; ok {
			continue
		}
		if out == nil {
			out = maps.Clone(desired)
			if out == nil {
				out = map[string]string{}
			}
		}
		out[key] = v
	}
	if out == nil {
		return desired
	}
	return out
}

// keepReservedFinalizers is keepReserved for finalizers, in current's
// order after desired's.
func keepReservedFinalizers(desired, current []string) []string {
	out := desired
	for _, f := range current {
		if ReservedFinalizer(f) && !slices.Contains(out, f) {
			out = append(slices.Clone(out), f)
		}
	}
	return out
}

// totalAnnotationBudget is kube-apiserver's limit on the total size of an
// object's annotations (apimachinery's TotalAnnotationSizeLimitB).
const totalAnnotationBudget = apivalidation.TotalAnnotationSizeLimitB

// validateAnnotationBudget checks, before any write, that the
// HelmRelease's annotations (the application's own, and its managed fields
// kept in AnnotationManagedFields) fit kube-apiserver's 256 KiB limit, and
// says which part takes what: otherwise the write would fail with an error
// about the HelmRelease the user never wrote.
func validateAnnotationBudget(annotations map[string]string) field.ErrorList {
	total, managed := 0, 0
	for k, v := range annotations {
		total += len(k) + len(v)
		if k == AnnotationManagedFields {
			managed = len(k) + len(v)
		}
	}
	if total <= totalAnnotationBudget {
		return nil
	}
	return field.ErrorList{field.Invalid(metadataPath.Child("annotations"), fmt.Sprintf("%d bytes", total), fmt.Sprintf(
		"the annotations and the managed fields (kept in annotation %s, %d bytes) take %d bytes together, more than the %d kube-apiserver allows on the HelmRelease; remove annotations, or reset managedFields (set metadata.managedFields to [{}])",
		AnnotationManagedFields, managed, total, totalAnnotationBudget))}
}
