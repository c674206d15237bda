// Package replacement is the boundary linter's table of what the contracts
// offer instead of a lookup or a Capabilities check that crosses a module
// boundary: a K2 cluster-values key the chart reads from its values, a K3
// property its catalog requires, or "none yet". It turns the forbidden
// helm-lookup and helm-capabilities edges into the work list of the split.
//
// The table is data: the built-in entries are defaults.yaml (filled from
// contracts/schemas/v1alpha1 of this repository; a test checks every key and
// property it names against those documents), and a boundaries.yaml may add
// or override entries under `replacements:` with the same fields:
//
//	replacements:
//	  - {group: snapshot.storage.k8s.io, k3: [storage.snapshots]}
//	  - {group: kubevirt.io, kind: KubeVirt, rule: helm-lookup, k3: [gpu.passthrough], note: "..."}
//	  - {group: acid.zalan.do}          # no k2/k3: "none yet", said on purpose
//
// The most specific matching entry wins: one naming the kind, then the
// version, then the rule, then an exact group over a "*.x" pattern (a longer
// pattern over a shorter); on a tie an entry of the configuration wins over
// a default, so an entry with the same group, version, kind and rule as a
// default overrides it.
package replacement
