// Package clustervalues is the K2 projection controller of cozystack-controller:
// it renders the ClusterValues singleton (cozystack.io/v1alpha1, named
// "cluster") and each tenant namespace's labels into the values document of
// contract K2, and keeps one ConfigMap cozystack-values (key values.yaml)
// per tenant namespace equal to it. The document's schema and key table are
// contracts/schemas/v1alpha1/k2-cluster-values.{schema.json,md}.
//
// Three reconcilers share one manager (Setup):
//   - the namespace reconciler writes the ConfigMap (and, with
//     LegacySecretWrite, the legacy Secret) of one tenant namespace, only when
//     its content, labels or generation annotation differ, and restores or
//     recreates it after a hand edit or a deletion;
//   - the status reconciler counts the tenant namespaces carrying the current
//     generation into ClusterValues status (observedGeneration,
//     projected/total, conditions Ready, Projected, Reconciling, Stalled),
//     events and Prometheus metrics (metrics.go);
//   - the values-source reconciler moves a tenant namespace's HelmReleases
//     between the ConfigMap and the legacy Secret as the namespace's
//     annotation cozystack.io/values-source says (k2-migration.md).
//
// Nothing is ever rendered from a missing or invalid source: every document
// is validated against the K2 schema before it is written, and when it
// fails nothing is written (charts keep the last good values).
package clustervalues
