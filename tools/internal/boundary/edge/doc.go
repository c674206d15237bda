// Package edge holds the one type every part of the boundary linter speaks:
// an Edge, a reference from a file of one module to something another module
// owns, with the rule that found it and whether the configuration allows it.
package edge
