// Package helmtemplate walks the parse trees of Helm templates
// (text/template/parse) the way text/template evaluates them, for the
// static analyses that read them: the K2 reads and the K5 includes of
// contracts/conformance (templates.go), its K4-unquoted-string taint
// analysis (k4strings.go), and the include, lookup and capability edges of
// the boundary linter (tools/internal/boundary/helm/template.go).
//
// The Walker owns what the three share: the scopes of variables ($, $x :=
// and $x =, each visible from its declaration to the end of its control
// structure), the dot and its rebinding by with and range, the order in
// which pipelines evaluate (each command's operands, then the command, the
// previous command's value passed last), and following a named template
// (include, template, define and block) into its define, in whichever
// file of the chart or its dependencies defines it, with the caller's
// argument as its . and $. A Visitor gives the values: what a field, a
// literal and a function call evaluate to, and what it records on the way
// (a read, a printed value, an edge). Each analysis is one Visitor over
// the same walk, as apiextensions-apiserver's one structural schema serves
// its validation, pruning and CEL.
//
// The walk is static: both branches of an if are walked, a range body as
// many times as the Visitor asks (Range.Passes), and a define already
// being walked (recursion) or 16 deep is not walked again.
package helmtemplate
