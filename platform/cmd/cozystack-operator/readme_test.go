package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"cozystack.io/platform/internal/command/commandtest"
)

// Every flag `make demo` gives cozystack-operator is one of its flags.
func TestMakefileFlags(t *testing.T) {
	commandtest.MakefileFlags(t, newCommand(), "cozystack-operator", "../../../Makefile")
}

// Every flag README.md's "Catalog delivery" names, but on a cozypkg
// command line, is one of cozystack-operator's.
func TestREADMEFlags(t *testing.T) {
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Catalog delivery\n")
	if !ok {
		t.Fatal(`README.md has no section "Catalog delivery"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	cmd := newCommand()
	n := 0
	for _, l := range strings.Split(section, "\n") {
		if strings.Contains(l, "cozypkg") {
			continue
		}
		for _, m := range regexp.MustCompile("(?:^|[\\s`(])--([a-z][a-z-]*)").FindAllStringSubmatch(l, -1) {
			n++
			if cmd.Flags().Lookup(m[1]) == nil {
				t.Errorf("README.md, Catalog delivery: --%s is no flag of cozystack-operator: %s", m[1], l)
			}
		}
	}
	if n == 0 {
		t.Error(`README.md's "Catalog delivery" names no flag`)
	}
}
