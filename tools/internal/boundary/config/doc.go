// Package config reads boundaries.yaml, the one file that declares the
// modules of a repository, which module owns which Kubernetes API group, and
// which edges between modules are allowed. It also infers a configuration
// for a tree that has no such file, and judges edges against either.
//
// The file's shape (all paths slash-separated and relative to the root):
//
//	modules:            # directory → module name; the longest matching path wins
//	  - {name: platform, path: platform}
//	allow:              # the only allowed edges; from is a path.Match pattern over module names
//	  - {from: "catalogs/*", to: [contracts, sdk]}
//	  - {from: contracts, to: [sdk], files: ["*_test.go"]}   # only from files whose base name matches
//	publishedCharts:    # a chart one module publishes for others to depend on
//	  - {name: cozy-lib, module: platform, consumers: ["catalogs/*"], repository: "oci://"}
//	apiGroups:          # module → groups it owns; "*.example.io" matches any subdomain
//	  catalogs/services: [postgresql.cnpg.io]
//	shared: [apps, "*.k8s.io"]   # groups anyone may use (documentation: unowned groups are shared too)
//	vendoredCopies:     # vendored charts that are copies of another module's chart
//	  - {chart: common, module: platform, in: ["catalogs/*"]}
//	replacements:       # what the contracts offer instead of a lookup (see package replacement)
//	  - {group: snapshot.storage.k8s.io, k3: [storage.snapshots]}
//	exclude: [docs/examples]     # extra paths or base-name patterns not to scan
//
// Every edge between two different modules that no allow entry or published
// chart permits is forbidden.
//
// A chart belongs to the module its directory lies in (after following
// symbolic links). The one exception is a vendored chart (a directory or
// .tgz under another chart's charts/) that is a copy of another module's
// chart: a published chart of that name, or a vendoredCopies entry. Its
// templates are then that module's, so an include of them is an edge to it
// and its own references are not the vendoring module's.
package config
