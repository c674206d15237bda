// Package example is the smallest complete backup driver built on
// cozystack.io/sdk/backup/driver, the one sdk/backup/README.md walks
// through: strategy kind ConfigMap, whose "backend object" is one
// ConfigMap per run that an outside party (standing in for an upstream
// operator) marks complete. It has the Reclaim and RestoreToNew
// capabilities and passes sdk/backup/conformance (its tests run the suite
// against it, on the local control plane). Copy it to start a driver; it
// stores no data and is not meant to back anything up.
package example
