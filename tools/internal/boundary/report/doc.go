// Package report shapes the linter's result and prints it as a table, JSON
// or YAML. The JSON and YAML carry the same fields:
//
//	{"root": ..., "config": "boundaries.yaml" | "(inferred)",
//	 "modules": [{"name", "path"}],
//	 "edges": [{"rule", "from", "to", "file", "line", "target", "definition", "via", "allowed", "reason",
//	            "instead": {"offer", "k2", "k3", "note"}}],
//	 "summary": {"edges", "allowed", "forbidden", "byRule": [{"rule", "allowed", "forbidden"}],
//	             "instead": {"offered", "noneYet"}}}
//
// "instead" is set on each forbidden helm-lookup and helm-capabilities
// edge: what the contracts offer in its place ("offer" is "none yet" when
// nothing). The summary's counts are those of the edges listed: every rule
// appears in byRule, and edges = allowed + forbidden = the sum over byRule.
package report
