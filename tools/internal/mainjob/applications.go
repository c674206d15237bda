package mainjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

func (j *job) createTenant(ctx context.Context) error {
	if err := j.createApp(ctx, tenantsGVR, "Tenant", RootNamespace, TenantName, map[string]any{}); err != nil {
		return err
	}
	if err := j.waitApp(ctx, tenantsGVR, RootNamespace, TenantName); err != nil {
		return err
	}
	// The tenant's namespace carries its values once cozystack-controller
	// has projected them.
	return j.poll(ctx, func() (bool, error) {
		cm := &corev1.ConfigMap{}
		err := j.c.Get(ctx, client.ObjectKey{Namespace: TenantNS, Name: v1alpha1.ValuesName}, cm)
		return err == nil, nil
	})
}

func (j *job) createPostgres(ctx context.Context) error {
	if err := j.createApp(ctx, postgresGVR, "Postgres", TenantNS, PostgresName, map[string]any{"replicas": int64(1)}); err != nil {
		return err
	}
	return j.waitApp(ctx, postgresGVR, TenantNS, PostgresName)
}

func (j *job) createVM(ctx context.Context) error {
	if err := j.createApp(ctx, vmGVR, "VMInstance", TenantNS, VMName, map[string]any{}); err != nil {
		return err
	}
	return j.waitApp(ctx, vmGVR, TenantNS, VMName)
}

func (j *job) createApp(ctx context.Context, gvr schema.GroupVersionResource, kind, ns, name string, spec map[string]any) error {
	var err error
	// The kind is served as soon as cozystack-api has read its AD.
	pollErr := j.poll(ctx, func() (bool, error) {
		_, err = j.dyn.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.cozystack.io/v1alpha1", "kind": kind,
			"metadata": map[string]any{"name": name}, "spec": spec,
		}}, metav1.CreateOptions{FieldManager: string(fieldManager)})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err == nil, nil
	})
	if pollErr != nil {
		return fmt.Errorf("create %s %s/%s: %v", kind, ns, name, err)
	}
	j.printf("  %s %s/%s created", kind, ns, name)
	return nil
}

// waitApp waits for the application's Ready condition.
func (j *job) waitApp(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) error {
	last, kind, version := "not found", "", ""
	err := j.poll(ctx, func() (bool, error) {
		u, err := j.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		kind = u.GetKind()
		version, _, _ = unstructured.NestedString(u.Object, "status", "version")
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Ready" {
				last = fmt.Sprintf("Ready=%v %v: %v", m["status"], m["reason"], m["message"])
				return m["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("%s %s/%s never Ready (last: %s)", gvr.Resource, ns, name, last)
	}
	j.printf("  %s %s/%s: %s", gvr.Resource, ns, name, last)
	j.rows = append(j.rows, row{kind: kind, name: name, ready: "True", version: version})
	return nil
}
