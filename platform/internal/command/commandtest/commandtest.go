package commandtest

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var flagPattern = regexp.MustCompile(`(?:^|\s)--([a-z][a-z-]*)`)

// MakefileFlags fails t unless every flag the Makefile at makefile gives
// $(CACHE)/bin/<binary> is a flag of cmd, and unless it gives at least one.
func MakefileFlags(t *testing.T, cmd *cobra.Command, binary, makefile string) {
	t.Helper()
	data, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.ReplaceAll(string(data), "\\\n", " ")
	n := 0
	for _, l := range strings.Split(joined, "\n") {
		_, args, ok := strings.Cut(l, "$(CACHE)/bin/"+binary+" ")
		if !ok {
			continue
		}
		for _, m := range flagPattern.FindAllStringSubmatch(args, -1) {
			n++
			if cmd.Flags().Lookup(m[1]) == nil {
				t.Errorf("the Makefile runs %s with --%s, which it does not have", binary, m[1])
			}
		}
	}
	if n == 0 {
		t.Fatalf("the Makefile never runs $(CACHE)/bin/%s with flags", binary)
	}
}
