// Command benchfloor is cozystack-api with the cheapest create an API
// server built on k8s.io/apiserver can have, for BenchmarkGenericFloor; it
// is not a product command.
//
// Everything k8s.io/apiserver does for a create runs as in cozystack-api
// (the filter chain with delegated authentication and authorization,
// decoding, the field manager, admission); then the storage forwards a
// prebuilt HelmRelease, the one cozystack-api would write, to
// kube-apiserver and answers with the object it was given. It skips what
// cozystack-api adds: validation against the kind's schema, conversion
// both ways, and decoding kube-apiserver's answer. Other verbs are
// cozystack-api's.
package main
