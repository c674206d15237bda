package apiserver

import (
	"fmt"
	"io"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"

	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/registry/application"
)

// GroupVersion of the application API.
var GroupVersion = schema.GroupVersion{Group: appkinds.Group, Version: appkinds.Version}

// Scheme knows the meta types (options, Status, WatchEvent, Table) of the
// application API. Application kinds are not registered: they change at run
// time and are handled as unstructured objects by creator, typer and
// converter below, as apiextensions-apiserver does for custom resources.
var (
	Scheme = runtime.NewScheme()
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec decodes query parameters into option types.
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

func init() {
	metav1.AddToGroupVersion(Scheme, GroupVersion)
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	if err := metainternalversion.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
}

// isApplication reports whether gvk is an application kind (or its list).
func isApplication(gvk schema.GroupVersionKind) bool {
	return gvk.Group == GroupVersion.Group && gvk.Version == GroupVersion.Version && !Scheme.Recognizes(gvk)
}

// creator makes unstructured objects for application kinds and defers to
// Scheme for everything else.
type creator struct{}

func (creator) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if isApplication(gvk) {
		if len(gvk.Kind) > 4 && gvk.Kind[len(gvk.Kind)-4:] == "List" {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(gvk)
			return l, nil
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	return Scheme.New(gvk)
}

// typer reports the kind an unstructured object carries and defers to
// Scheme for typed objects.
type typer struct{}

func (typer) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if _, ok := obj.(runtime.Unstructured); ok {
		gvk := obj.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" {
			return nil, false, runtime.NewMissingKindErr("object has no kind")
		}
		if gvk.Version == "" {
			return nil, false, runtime.NewMissingVersionErr("object has no apiVersion")
		}
		return []schema.GroupVersionKind{gvk}, false, nil
	}
	return Scheme.ObjectKinds(obj)
}

func (typer) Recognizes(gvk schema.GroupVersionKind) bool {
	return isApplication(gvk) || Scheme.Recognizes(gvk)
}

// converter serves one version: converting an application to "its" version
// only sets apiVersion. Typed objects go through Scheme.
type converter struct{}

func (converter) Convert(in, out, context any) error {
	if u, ok := in.(*unstructured.Unstructured); ok {
		o, ok := out.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("cannot convert %T to %T", in, out)
		}
		o.Object = runtime.DeepCopyJSON(u.Object)
		return nil
	}
	return Scheme.Convert(in, out, context)
}

func (converter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	switch in.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList, *application.List:
		gvk := in.GetObjectKind().GroupVersionKind()
		to, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk})
		if !ok {
			return nil, fmt.Errorf("%s cannot be converted to %v", gvk, target)
		}
		// One version is served, and it is its own hub: the "internal"
		// version the request handlers and the field manager ask for is
		// v1alpha1 itself.
		if to.Version != runtime.APIVersionInternal {
			in.GetObjectKind().SetGroupVersionKind(to)
		}
		return in, nil
	}
	return Scheme.ConvertToVersion(in, target)
}

func (converter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace":
		return label, value, nil
	}
	if !isApplication(gvk) {
		return Scheme.ConvertFieldLabel(gvk, label, value)
	}
	return "", "", fmt.Errorf("field label %q is not supported for %s: use metadata.name or metadata.namespace", label, gvk.Kind)
}

// negotiatedSerializer encodes and decodes application objects as JSON or
// YAML through the converter above (Codecs' own versioning would look the
// kinds up in Scheme and fail).
type negotiatedSerializer struct {
	infos []runtime.SerializerInfo
}

func newNegotiatedSerializer() negotiatedSerializer {
	c, t := creator{}, typer{}
	return negotiatedSerializer{infos: []runtime.SerializerInfo{
		{
			MediaType: "application/json", MediaTypeType: "application", MediaTypeSubType: "json", EncodesAsText: true,
			// Lists are encoded item by item into the response, not built
			// whole in memory first, and copied when their items carry
			// their encoding.
			Serializer:       listEncoder{json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{StreamingCollectionsEncoding: true})},
			PrettySerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Pretty: true}),
			StrictSerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Strict: true}),
			StreamSerializer: &runtime.StreamSerializerInfo{
				EncodesAsText: true,
				Serializer:    json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{}),
				Framer:        json.Framer,
			},
		},
		{
			MediaType: "application/yaml", MediaTypeType: "application", MediaTypeSubType: "yaml", EncodesAsText: true,
			Serializer:       json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Yaml: true}),
			StrictSerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Yaml: true, Strict: true}),
		},
	}}
}

func (s negotiatedSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.infos }

func (s negotiatedSerializer) EncoderForVersion(encoder runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return versioning.NewCodec(encoder, nil, converter{}, creator{}, typer{}, Scheme, gv, nil, "applications")
}

func (s negotiatedSerializer) DecoderToVersion(decoder runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return versioning.NewCodec(nil, decoder, converter{}, creator{}, typer{}, Scheme, nil, gv, "applications")
}

// listEncoder is the JSON serializer, except that an application list
// (application.List, held as its items' JSON) is written from those bytes:
// the same output, without encoding thousands of maps again.
type listEncoder struct {
	*json.Serializer
}

func (e listEncoder) Encode(obj runtime.Object, w io.Writer) error {
	if l, ok := obj.(*application.List); ok {
		return l.WriteJSON(w)
	}
	return e.Serializer.Encode(obj, w)
}
