package v1alpha1

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// RawSpec is an application's spec as JSON, opaque to the backup types.
type RawSpec = apiextensionsv1.JSON
