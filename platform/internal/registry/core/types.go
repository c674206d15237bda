package core

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TenantSecret is a Secret of an application, as its tenant reads it: the
// Secret's name, namespace, uid, resourceVersion, creationTimestamp, labels
// and annotations (no managedFields, no ownerReferences), its type and its
// data, and the application it belongs to.
type TenantSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Type is the Secret's type, e.g. Opaque.
	Type corev1.SecretType `json:"type,omitempty"`
	// Data is the Secret's data (base64 in JSON, as a Secret's).
	Data map[string][]byte `json:"data,omitempty"`
	// Application is the application whose release made the Secret.
	Application ApplicationReference `json:"application"`
}

// ApplicationReference names an application of apps.cozystack.io in the
// TenantSecret's namespace.
type ApplicationReference struct {
	// Kind is the application kind, e.g. Postgres.
	Kind string `json:"kind"`
	// Name is the application's name, e.g. db.
	Name string `json:"name"`
}

// TenantSecretList is a list of TenantSecrets.
type TenantSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TenantSecret `json:"items"`
}

// DeepCopyInto copies s into out.
func (s *TenantSecret) DeepCopyInto(out *TenantSecret) {
	*out = *s
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if s.Data != nil {
		out.Data = make(map[string][]byte, len(s.Data))
		for k, v := range s.Data {
			out.Data[k] = append([]byte(nil), v...)
		}
	}
}

// DeepCopy returns a copy of s.
func (s *TenantSecret) DeepCopy() *TenantSecret {
	if s == nil {
		return nil
	}
	out := &TenantSecret{}
	s.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (s *TenantSecret) DeepCopyObject() runtime.Object { return s.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *TenantSecretList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &TenantSecretList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]TenantSecret, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// fromSecret is the TenantSecret of Secret sec of application app.
func fromSecret(sec *corev1.Secret, app ApplicationReference) *TenantSecret {
	return &TenantSecret{
		TypeMeta: metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "TenantSecret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: sec.Name, Namespace: sec.Namespace, UID: sec.UID, ResourceVersion: sec.ResourceVersion,
			CreationTimestamp: sec.CreationTimestamp, DeletionTimestamp: sec.DeletionTimestamp,
			Labels: maps.Clone(sec.Labels), Annotations: maps.Clone(sec.Annotations),
		},
		Type:        sec.Type,
		Data:        maps.Clone(sec.Data),
		Application: app,
	}
}
