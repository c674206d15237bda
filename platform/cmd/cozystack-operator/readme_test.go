package main

import (
	"regexp"
	"strings"
	"testing"

	"cozystack.io/platform/internal/command/commandtest"

	"cozystack.io/contracts/doctest"
)

// Every flag `make demo` gives cozystack-operator is one of its flags.
func TestMakefileFlags(t *testing.T) {
	commandtest.MakefileFlags(t, newCommand(), "cozystack-operator", "../../../Makefile")
}

// Every flag docs/operator/catalogs.md's "Catalog delivery" names, but on
// a cozypkg command line, is one of cozystack-operator's.
func TestREADMEFlags(t *testing.T) {
	section := doctest.Section(t, catalogsDoc, "Catalog delivery")
	cmd := newCommand()
	n := 0
	for _, l := range strings.Split(section, "\n") {
		if strings.Contains(l, "cozypkg") {
			continue
		}
		for _, m := range regexp.MustCompile("(?:^|[\\s`(])--([a-z][a-z-]*)").FindAllStringSubmatch(l, -1) {
			n++
			if cmd.Flags().Lookup(m[1]) == nil {
				t.Errorf("%s, Catalog delivery: --%s is no flag of cozystack-operator: %s", catalogsDoc, m[1], l)
			}
		}
	}
	if n == 0 {
		t.Errorf(`%s's "Catalog delivery" names no flag`, catalogsDoc)
	}
}

// catalogsDoc is where the operator's rules for cluster operators are written.
const catalogsDoc = "docs/operator/catalogs.md"
