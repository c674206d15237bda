package core

import (
	"fmt"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// GroupName is the API group of the core resources.
const GroupName = "core.cozystack.io"

// GroupVersion is the one served version.
var GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource names of the group.
const (
	TenantSecretsResource = "tenantsecrets"
	TenantSecretKind      = "TenantSecret"
)

// TenantSecretsGroupResource is tenantsecrets.core.cozystack.io, as errors
// name it.
var TenantSecretsGroupResource = GroupVersion.WithResource(TenantSecretsResource).GroupResource()

// Scheme knows the group's types (in v1alpha1 and, as the same Go types,
// in the internal version: one version is served and is its own hub) and
// the meta types of requests and responses (options, Status, Table,
// WatchEvent). Codecs and ParameterCodec are built on it.
var (
	Scheme         = runtime.NewScheme()
	Codecs         = serializer.NewCodecFactory(Scheme)
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

func init() {
	for _, gv := range []schema.GroupVersion{GroupVersion, {Group: GroupName, Version: runtime.APIVersionInternal}} {
		Scheme.AddKnownTypes(gv, &TenantSecret{}, &TenantSecretList{})
	}
	metav1.AddToGroupVersion(Scheme, GroupVersion)
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	if err := metainternalversion.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	Scheme.AddUnversionedTypes(schema.GroupVersion{Group: "", Version: "v1"},
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	for _, gv := range []schema.GroupVersion{GroupVersion, {Group: GroupName, Version: runtime.APIVersionInternal}} {
		if err := Scheme.AddFieldLabelConversionFunc(gv.WithKind(TenantSecretKind), convertFieldLabel); err != nil {
			panic(err)
		}
	}
}

// convertFieldLabel accepts the field selectors kube-apiserver accepts on
// Secrets, which a TenantSecret list passes on: metadata.name,
// metadata.namespace and type.
func convertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace", "type":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label %q is not supported for %s: use metadata.name, metadata.namespace or type", label, TenantSecretKind)
}
