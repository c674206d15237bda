package command

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"cozystack.io/contracts/doctest"
)

// docs/operator/install.md's section on the platform binaries, checked against this
// package: its table of exit statuses is ExitOK, ExitError and ExitUsage
// (whose behaviour TestExecuteExitCodes checks), and every binary it names
// runs through Main.
func TestREADME(t *testing.T) {
	const doc = "docs/operator/install.md"
	section := doctest.Section(t, doc, "The platform binaries")

	want := map[int]string{ExitOK: "stopped cleanly", ExitError: "an error", ExitUsage: "a usage error"}
	got := map[int]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \| (.+) \|$`).FindAllStringSubmatch(section, -1) {
		code, _ := strconv.Atoi(m[1])
		got[code] = m[2]
	}
	if len(got) != len(want) {
		t.Errorf("%s lists exit statuses %v; the binaries have %v", doc, got, want)
	}
	for code, meaning := range want {
		if !strings.Contains(got[code], meaning) {
			t.Errorf("%s: exit status %d is %q, want it to say %q", doc, code, got[code], meaning)
		}
	}
	if !strings.Contains(section, "`error: <message>` on stderr") {
		t.Errorf("%s does not say errors are printed as `error: <message>` on stderr", doc)
	}

	binaries := regexp.MustCompile("(?m)^\\| `(cozystack-[a-z]+)` \\| `(platform/cmd/[a-z-]+)`").FindAllStringSubmatch(section, -1)
	if len(binaries) != 3 {
		t.Errorf("%s names %d platform binaries, want 3 (cozystack-api, -controller, -operator)", doc, len(binaries))
	}
	for _, b := range binaries {
		if filepath.Base(b[2]) != b[1] {
			t.Errorf("%s: %s is built from %s", doc, b[1], b[2])
		}
		main, err := os.ReadFile(filepath.Join("../../..", b[2], "main.go"))
		if err != nil {
			t.Errorf("%s names %s: %v", doc, b[1], err)
			continue
		}
		if !strings.Contains(string(main), "command.Main(") {
			t.Errorf("%s/main.go does not run through command.Main, as %s says", b[2], doc)
		}
	}
}

// An error is printed as "error: <message>" on stderr.
func TestExecutePrintsError(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	cmd := New("demo", "a demo", func(*pflag.FlagSet) {}, func(context.Context) error { return errors.New("boom") })
	cmd.SetArgs(nil)
	code := Execute(cmd)
	os.Stderr = stderr
	w.Close()
	out, _ := io.ReadAll(r)
	if code != ExitError || string(out) != "error: boom\n" {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, out, ExitError, "error: boom\n")
	}
}
