package crds

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// PackageSourceFile is the name, in FS and Files, of the manifest of the
// PackageSource CRD (cozystack.io/v1alpha1, cluster-scoped, named
// PackageSourceName).
const PackageSourceFile = "cozystack.io_packagesources.yaml"

// PackageSourceName is metadata.name of the PackageSource CRD.
const PackageSourceName = "packagesources.cozystack.io"

// PackageFile is the name, in FS and Files, of the manifest of the Package
// CRD (cozystack.io/v1alpha1, cluster-scoped, named PackageName).
const PackageFile = "cozystack.io_packages.yaml"

// PackageName is metadata.name of the Package CRD.
const PackageName = "packages.cozystack.io"

// PackageSource returns the PackageSource CRD decoded from
// PackageSourceFile: a fresh object on each call, ready to create or
// update. It returns an error only if the embedded manifest does not decode
// strictly into a CustomResourceDefinition, which the package's tests rule
// out for a released binary.
func PackageSource() (*apiextensionsv1.CustomResourceDefinition, error) {
	return decode(PackageSourceFile)
}

// Package returns the Package CRD decoded from PackageFile, on the same
// terms as PackageSource.
func Package() (*apiextensionsv1.CustomResourceDefinition, error) {
	return decode(PackageFile)
}
