//go:build crdpins

// This file is never built (the crdpins tag is never set); `go mod tidy`
// reads it all the same, so go.mod keeps requiring the Go modules whose API
// types crds.yaml generates CRDs from, at the versions pinned there.

package main

import (
	_ "kubevirt.io/api/clone/v1beta1"
	_ "kubevirt.io/api/core/v1"
	_ "kubevirt.io/api/export/v1beta1"
	_ "kubevirt.io/api/instancetype/v1beta1"
	_ "kubevirt.io/api/migrations/v1alpha1"
	_ "kubevirt.io/api/pool/v1alpha1"
	_ "kubevirt.io/api/snapshot/v1beta1"
	_ "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)
