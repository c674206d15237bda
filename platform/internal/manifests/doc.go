// Package manifests decodes the platform's embedded YAML manifests
// (platform/applicationdefinitions, platform/tenantaccess): Decode reads
// every *.yaml file of a file system, in file-name order, each holding one
// or more YAML documents.
package manifests
