// Package requirements decides whether this platform meets a catalog's
// requirements: its minPlatformVersion (SemVer) and the K3 properties it
// needs (catalog.yaml, contracts/artifact/README.md; the properties are
// contracts/schemas/v1alpha1/k3-properties.md). Check returns an
// *UnmetError naming what is missing; the reconcilers report it as
// Ready=False, reason RequirementsNotMet, and create nothing.
package requirements
