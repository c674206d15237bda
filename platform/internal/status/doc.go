// Package status is the one way the platform's reconcilers that own the
// whole status of what they reconcile compute and write it, through
// fluxcd/pkg/runtime as Flux's own controllers do. cozystack-operator's
// (PackageSource, Package) summarize a reconcile in one Result (the
// summarize step); Write turns it into the kstatus conditions with the
// runtime's conditions package, emits one event when Ready changes, and
// patches the status with its serial patch helper (the conditions it owns
// overwrite the stored ones, and status.observedGeneration is the
// generation reconciled). A reconciler whose summary is several
// conditions (ClusterValues' projection, the ApplicationDefinition
// watcher's Served) sets them with Set.
//
// Objects whose status several field managers share (the kinds of
// backups.cozystack.io) are written by server-side apply instead, their
// conditions computed by cozystack.io/sdk/backup/apply.
//
// The kstatus semantics (Kubernetes API conventions, "Typical status
// properties"; docs/operator/catalogs.md, "Catalog delivery"): Ready is always
// present; Reconciling is present (True) only while the operator is still
// working towards Ready; Stalled is present (True) only when it cannot get
// there without a person changing something. Reasons are CamelCase (the
// constants of cozystack.io/contracts/apis/cozystack/v1alpha1) and
// messages say what to fix.
package status
