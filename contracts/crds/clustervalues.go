package crds

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// ClusterValuesFile is the name, in FS and Files, of the manifest of the
// ClusterValues CRD (cozystack.io/v1alpha1, cluster-scoped, named
// ClusterValuesName; contract K2).
const ClusterValuesFile = "cozystack.io_clustervalues.yaml"

// ClusterValuesName is metadata.name of the ClusterValues CRD.
const ClusterValuesName = "clustervalues.cozystack.io"

// ClusterValues returns the ClusterValues CRD decoded from
// ClusterValuesFile: a fresh object on each call, ready to create or
// update. It returns an error only if the embedded manifest does not decode
// strictly into a CustomResourceDefinition, which the package's tests rule
// out for a released binary.
func ClusterValues() (*apiextensionsv1.CustomResourceDefinition, error) {
	return decode(ClusterValuesFile)
}
