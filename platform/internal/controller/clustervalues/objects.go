package clustervalues

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// annotationHelmKeep keeps Helm from deleting the legacy Secret when a
// tenant chart that used to render it is upgraded to one that does not:
// Helm reads the annotation on the live object before deleting it.
const annotationHelmKeep = "helm.sh/resource-policy"

// ownedLabels are the labels every values object carries.
func ownedLabels() map[string]string {
	return map[string]string{
		v1alpha1.LabelFluxWatch: v1alpha1.FluxWatchEnabled,
		v1alpha1.LabelManagedBy: v1alpha1.ManagedByController,
	}
}

// ownedAnnotations are the annotations a values object of generation
// carries; secret adds the Helm keep policy.
func ownedAnnotations(generation int64, secret bool) map[string]string {
	a := map[string]string{v1alpha1.AnnotationGeneration: strconv.FormatInt(generation, 10)}
	if secret {
		a[annotationHelmKeep] = "keep"
	}
	return a
}

// desiredConfigMap is the ConfigMap of namespace for doc, of generation.
func desiredConfigMap(namespace string, generation int64, doc *document) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: v1alpha1.ValuesName, Namespace: namespace,
			Labels: ownedLabels(), Annotations: ownedAnnotations(generation, false),
		},
		Data: map[string]string{v1alpha1.ValuesKey: string(doc.values)},
	}
}

// desiredSecret is the legacy Secret of namespace for doc, of generation:
// the same values.yaml as the ConfigMap.
func desiredSecret(namespace string, generation int64, doc *document) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: v1alpha1.ValuesName, Namespace: namespace,
			Labels: ownedLabels(), Annotations: ownedAnnotations(generation, true),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{v1alpha1.ValuesKey: doc.values},
	}
}

// metaUpToDate reports whether have carries every label and annotation of
// want (other keys may be present: they are someone else's).
func metaUpToDate(have, want client.Object) bool {
	return containsAll(have.GetLabels(), want.GetLabels()) && containsAll(have.GetAnnotations(), want.GetAnnotations())
}

func containsAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// configMapUpToDate reports whether have equals want in data, owned
// labels and annotations.
func configMapUpToDate(have, want *corev1.ConfigMap) bool {
	return maps.Equal(have.Data, want.Data) && len(have.BinaryData) == 0 && metaUpToDate(have, want)
}

// secretUpToDate reports whether have equals want in type, data, owned
// labels and annotations.
func secretUpToDate(have, want *corev1.Secret) bool {
	return have.Type == want.Type && maps.EqualFunc(have.Data, want.Data, func(a, b []byte) bool { return string(a) == string(b) }) &&
		len(have.StringData) == 0 && metaUpToDate(have, want)
}

// carriedGeneration is the generation annotation of a values object, 0
// when absent or unparsable.
func carriedGeneration(obj client.Object) int64 {
	g, err := strconv.ParseInt(obj.GetAnnotations()[v1alpha1.AnnotationGeneration], 10, 64)
	if err != nil {
		return 0
	}
	return g
}

// mergeOwned copies want's data and owned metadata onto have, keeping
// have's other labels and annotations.
func mergeOwned(have, want client.Object) {
	labels := have.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, want.GetLabels())
	have.SetLabels(labels)
	annotations := have.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, want.GetAnnotations())
	have.SetAnnotations(annotations)
}
