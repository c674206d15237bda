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

// Every flag `make demo` gives cozystack-api is one of its flags.
func TestMakefileFlags(t *testing.T) {
	cmd := newCommand()
	for _, f := range demoFlags(t, "cozystack-api") {
		if cmd.Flags().Lookup(f) == nil {
			t.Errorf("the Makefile runs cozystack-api with --%s, which it does not have", f)
		}
	}
}
