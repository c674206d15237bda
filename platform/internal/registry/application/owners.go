package application

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// validateOwnerReferences checks every owner reference app adds (one the
// stored application old lacks, by UID) with the requester's own rights.
// The HelmRelease is written with cozystack-api's identity, so
// kube-apiserver's OwnerReferencesPermissionEnforcement admission would
// judge the server, not the tenant: here the requester must be allowed to
// get the owner and, for blockOwnerDeletion, to update its finalizers
// subresource, the rule that admission plugin applies (contract K1,
// k1-application.md, "Metadata the platform owns"). Without an authorizer
// (the storage built without one) new owner references are refused.
func (s *strategy) validateOwnerReferences(ctx context.Context, app, old *unstructured.Unstructured) field.ErrorList {
	known := map[string]bool{}
	if old != nil {
		for _, ref := range old.GetOwnerReferences() {
			known[string(ref.UID)] = true
		}
	}
	var errs field.ErrorList
	for i, ref := range app.GetOwnerReferences() {
		if known[string(ref.UID)] {
			continue
		}
		path := metadataPath.Child("ownerReferences").Index(i)
		if msg := s.ownerRefused(ctx, app.GetNamespace(), ref); msg != "" {
			errs = append(errs, field.Forbidden(path, msg))
		}
	}
	return errs
}

// ownerRefused returns why the requester may not name ref as an owner of
// an application in namespace ns, or "".
func (s *strategy) ownerRefused(ctx context.Context, ns string, ref metav1.OwnerReference) string {
	owner := fmt.Sprintf("%s %s (%s)", ref.Kind, ref.Name, ref.APIVersion)
	if s.authorizer == nil {
		return fmt.Sprintf("owner reference to %s: this server cannot check the requester's rights on owners", owner)
	}
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return fmt.Sprintf("owner reference to %s: the request has no user", owner)
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return fmt.Sprintf("owner reference to %s: apiVersion: %v", owner, err)
	}
	mapping, err := s.client.RESTMapper().RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return fmt.Sprintf("owner reference to %s: the kind is not served by this cluster (%v)", owner, err)
	}
	attrs := authorizer.AttributesRecord{
		User: user, Verb: "get", APIGroup: mapping.Resource.Group, APIVersion: mapping.Resource.Version,
		Resource: mapping.Resource.Resource, Name: ref.Name, ResourceRequest: true,
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		// Owners of a namespaced object live in its namespace.
		attrs.Namespace = ns
	}
	if msg := s.authorize(ctx, attrs); msg != "" {
		return fmt.Sprintf("owner reference to %s: %s may not get it (%s); an application names only owners its requester may read", owner, user.GetName(), msg)
	}
	if ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
		attrs.Verb, attrs.Subresource = "update", "finalizers"
		if msg := s.authorize(ctx, attrs); msg != "" {
			return fmt.Sprintf("owner reference to %s with blockOwnerDeletion: %s may not update its finalizers (%s); drop blockOwnerDeletion or ask for that right", owner, user.GetName(), msg)
		}
	}
	return ""
}

// authorize returns "" when attrs are allowed, or the reason.
func (s *strategy) authorize(ctx context.Context, attrs authorizer.AttributesRecord) string {
	decision, reason, err := s.authorizer.Authorize(ctx, attrs)
	switch {
	case err != nil:
		return err.Error()
	case decision != authorizer.DecisionAllow:
		if reason == "" {
			reason = "not allowed"
		}
		return reason
	}
	return ""
}
