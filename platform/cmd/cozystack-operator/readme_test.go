package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// demoFlags returns the flags the Makefile's demo recipe gives the built
// binary (README.md, "The platform binaries": the recipe shows the flags
// the local control plane needs).
func demoFlags(t *testing.T, binary string) []string {
	t.Helper()
	data, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.ReplaceAll(string(data), "\\\n", " ")
	var flags []string
	for _, l := range strings.Split(joined, "\n") {
		_, args, ok := strings.Cut(l, "$(CACHE)/bin/"+binary+" ")
		if !ok {
			continue
		}
		for _, m := range regexp.MustCompile(`(?:^|\s)--([a-z][a-z-]*)`).FindAllStringSubmatch(args, -1) {
			flags = append(flags, m[1])
		}
	}
	if len(flags) == 0 {
		t.Fatalf("the Makefile never runs $(CACHE)/bin/%s with flags", binary)
	}
	return flags
}

// Every flag `make demo` gives cozystack-operator is one of its flags.
func TestMakefileFlags(t *testing.T) {
	cmd := newCommand()
	for _, f := range demoFlags(t, "cozystack-operator") {
		if cmd.Flags().Lookup(f) == nil {
			t.Errorf("the Makefile runs cozystack-operator with --%s, which it does not have", f)
		}
	}
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
