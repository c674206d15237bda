package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"cozystack.io/platform/internal/registry/core"
)

// APIServiceName is the APIService of the application API.
const APIServiceName = "v1alpha1.apps.cozystack.io"

// Registration says where kube-apiserver finds a cozystack-api that runs as
// a host process on the same machine (the local control plane).
type Registration struct {
	// Namespace and Service name the ExternalName Service created for it.
	Namespace, Service string
	// Port is the server's secure port on localhost.
	Port int
	// CABundle is the PEM CA that signed the server's certificate, whose
	// SANs must include <Service>.<Namespace>.svc.
	CABundle []byte
}

// RegisterLocal creates or updates the ExternalName Service (pointing at
// localhost) and the APIServices v1alpha1.apps.cozystack.io and
// v1alpha1.core.cozystack.io (CoreAPIServiceName), both served by this
// server. An ExternalName
// Service is used because kube-apiserver would otherwise dial the Service's
// cluster IP, and on the local control plane nothing may dial the service
// range (docs/contributor/development.md, "The local control plane": aggregated servers are
// registered behind an ExternalName Service pointing at localhost). In a
// real cluster the Helm chart registers a ClusterIP Service instead.
func RegisterLocal(ctx context.Context, c client.Client, r Registration) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", r.Namespace, err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: r.Service, Namespace: r.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, svc, func() error {
		svc.Spec = corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports: []corev1.ServicePort{{
				Name: "https", Port: int32(r.Port), TargetPort: intstr.FromInt32(int32(r.Port)), Protocol: corev1.ProtocolTCP,
			}},
		}
		return nil
	}); err != nil {
		return fmt.Errorf("Service %s/%s: %w", r.Namespace, r.Service, err)
	}
	for name, gv := range map[string]schema.GroupVersion{APIServiceName: GroupVersion, CoreAPIServiceName: core.GroupVersion} {
		apiSvc := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := controllerutil.CreateOrUpdate(ctx, c, apiSvc, func() error {
			apiSvc.Spec = apiregistrationv1.APIServiceSpec{
				Group:                gv.Group,
				Version:              gv.Version,
				Service:              &apiregistrationv1.ServiceReference{Namespace: r.Namespace, Name: r.Service, Port: ptr.To(int32(r.Port))},
				CABundle:             r.CABundle,
				GroupPriorityMinimum: 1000,
				VersionPriority:      15,
			}
			return nil
		}); err != nil {
			return fmt.Errorf("APIService %s: %w", name, err)
		}
	}
	return nil
}

// APIServiceAvailable reports whether kube-apiserver considers the
// APIService of apps.cozystack.io Available, and when RegisterLocal
// registered it, that of core.cozystack.io too; the message of the first
// that is not otherwise.
func APIServiceAvailable(ctx context.Context, c client.Client) (bool, string, error) {
	for _, name := range []string{APIServiceName, CoreAPIServiceName} {
		var svc apiregistrationv1.APIService
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &svc); err != nil {
			if name == CoreAPIServiceName && apierrors.IsNotFound(err) {
				continue // registered by hand, without the core group
			}
			return false, "", err
		}
		ok, msg := false, "no Available condition yet"
		for _, cond := range svc.Status.Conditions {
			if cond.Type == apiregistrationv1.Available {
				ok, msg = cond.Status == apiregistrationv1.ConditionTrue, cond.Reason+": "+cond.Message
			}
		}
		if !ok {
			return false, name + ": " + msg, nil
		}
	}
	return true, "", nil
}
