// Package artifact defines the catalog artifact, format v1: one OCI
// artifact per catalog version, with artifactType ArtifactType, the
// catalog's metadata (Catalog, from catalog.yaml) as its config blob
// (ConfigMediaType), each Helm chart as a layer (ChartMediaType) titled
// with its chart path, and each file of applicationdefinitions/ (the
// catalog's ApplicationDefinitions and their admission policies) as a
// layer (DefinitionMediaType) titled with its path. README.md in this
// directory is the specification.
//
// This package reads and checks the format: DecodeCatalog and
// Catalog.Validate for catalog.yaml, DecodeDefinitionFile and
// CheckDefinitions for the definitions, Pull to fetch and verify an
// artifact (every digest and size, the media types, the metadata, the
// definitions, the safety of every chart archive) from a registry (NewRepository) or an OCI layout
// (oras-go's content/oci store). Package build makes artifacts; package
// safetar unpacks chart archives.
package artifact
