package apply

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Status applies status (a struct or map that marshals to the status
// object, holding only the fields manager owns: use omitempty fields) to
// the status subresource of obj (only its kind, namespace and name are
// read), as manager, forcing ownership of the fields it sends. obj is not
// changed. Errors are the API server's (422 Invalid names a CEL rule, e.g.
// a changed binding) or the encoding's.
func Status(ctx context.Context, c client.Client, obj client.Object, status any, manager string) error {
	u, err := object(c, obj, "status", status)
	if err != nil {
		return err
	}
	return c.SubResource("status").Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(manager), client.ForceOwnership)
}

// StatusAt is Status with obj's resourceVersion as a precondition: the
// apply fails with 409 Conflict when obj changed since it was read (a
// forced apply alone never conflicts, so two writers deciding from stale
// reads would both win; a driver's claim must not). On success obj's
// resourceVersion is the new one.
func StatusAt(ctx context.Context, c client.Client, obj client.Object, status any, manager string) error {
	u, err := object(c, obj, "status", status)
	if err != nil {
		return err
	}
	u.SetResourceVersion(obj.GetResourceVersion())
	if err := c.SubResource("status").Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return err
	}
	obj.SetResourceVersion(u.GetResourceVersion())
	return nil
}

// Object applies fields (a map of top-level fields other than apiVersion,
// kind and metadata, e.g. {"spec": ...}) plus labels and annotations to
// obj's kind, namespace and name, as manager; it creates obj if absent.
func Object(ctx context.Context, c client.Client, obj client.Object, fields map[string]any, manager string) error {
	u, err := object(c, obj, "", nil)
	if err != nil {
		return err
	}
	for k, v := range fields {
		m, err := toJSONValue(v)
		if err != nil {
			return err
		}
		u.Object[k] = m
	}
	if l := obj.GetLabels(); len(l) > 0 {
		u.SetLabels(l)
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		u.SetAnnotations(a)
	}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(manager), client.ForceOwnership)
}

func object(c client.Client, obj client.Object, field string, value any) (*unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, fmt.Errorf("apply: kind of %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	if field != "" {
		m, err := toJSONValue(value)
		if err != nil {
			return nil, err
		}
		u.Object[field] = m
	}
	return u, nil
}

func toJSONValue(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("apply: encode: %w", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("apply: decode: %w", err)
	}
	return out, nil
}
