// Package crds holds the CustomResourceDefinitions generated from the types
// in cozystack.io/contracts/apis (`make generate`, which runs controller-gen),
// embedded in the binary so that the platform installs them at run time
// without reading any file. A test in this package fails when the committed
// manifests (or the generated deepcopy code) are stale.
//
// Each manifest is one file named <group>_<plural>.yaml holding exactly one
// YAML document, an apiextensions.k8s.io/v1 CustomResourceDefinition.
package crds
