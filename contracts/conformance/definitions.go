package conformance

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"cozystack.io/contracts/artifact"
)

// definitionsRule is the rule that runs artifact.CheckDefinitions.
const definitionsRule = "CAT-definitions"

// checkDefinitions runs on the catalog's definition files and its
// applications' tenantRoles the check cozypkg build, artifact.Pull and the
// operator make (artifact.CheckDefinitions: tenant roles name only the
// plurals of the catalog's own ApplicationDefinitions, policies match only
// its kinds, each provided kind has its definition), so what conformance
// passes builds: one rule, written once, in contracts/artifact
// (README.md, "Definitions"). One finding per error; a source without
// definitions (an artifact built without them) is not checked here.
func checkDefinitions(src *Source, catPos positions) []Finding {
	if src.Catalog == nil || !src.HasADs {
		return nil
	}
	var defs []artifact.Definition
	for _, d := range src.ADs {
		objs, err := artifact.DecodeDefinitionFile(d.File, d.Data)
		if err != nil {
			continue // K1-decode reports it
		}
		i := slices.IndexFunc(defs, func(x artifact.Definition) bool { return x.Path == d.File })
		if i < 0 {
			defs = append(defs, artifact.Definition{Path: d.File})
			i = len(defs) - 1
		}
		defs[i].Objects = append(defs[i].Objects, objs...)
	}
	err := artifact.CheckDefinitions(src.Catalog, defs)
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []Finding
	for _, e := range errs {
		msg := e.Error()
		f := Finding{RuleID: definitionsRule, Severity: Error, File: artifact.CatalogFile}
		if head, _, ok := strings.Cut(msg, ", document "); ok && !strings.Contains(head, ":") {
			f.File = head
		} else if m := catalogField.FindStringSubmatch(msg); m != nil {
			// "catalog.yaml: applications[0].tenantRoles.view[0].resources[0]: ..."
			f.Path = m[1]
			f.Line = catPos.line(strings.FieldsFunc(m[1], func(r rune) bool { return r == '.' || r == '[' || r == ']' })...)
			msg = strings.TrimPrefix(msg, m[0])
		}
		f.Message = msg
		f.Fix = fmt.Sprintf("change what the message names: cozypkg build and the operator refuse the catalog with the same error (%s)", errorsSource)
		out = append(out, f)
	}
	return out
}

// catalogField matches the field an error about catalog.yaml names.
var catalogField = regexp.MustCompile(`^catalog\.yaml: ([A-Za-z0-9_.\[\]]+): `)

// errorsSource names where the rule is written, for fix texts.
const errorsSource = "artifact.CheckDefinitions, contracts/artifact/README.md"
