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
)

// README.md's section on the platform binaries, checked against this
// package: its table of exit statuses is ExitOK, ExitError and ExitUsage
// (whose behaviour TestExecuteExitCodes checks), and every binary it names
// runs through Main.
func TestREADME(t *testing.T) {
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const title = "## The platform binaries"
	_, section, ok := strings.Cut(string(data), "\n"+title+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", title)
	}
	section, _, _ = strings.Cut(section, "\n## ")

	want := map[int]string{ExitOK: "stopped cleanly", ExitError: "an error", ExitUsage: "a usage error"}
	got := map[int]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \| (.+) \|$`).FindAllStringSubmatch(section, -1) {
		code, _ := strconv.Atoi(m[1])
		got[code] = m[2]
	}
	if len(got) != len(want) {
		t.Errorf("README.md lists exit statuses %v; the binaries have %v", got, want)
	}
	for code, meaning := range want {
		if !strings.Contains(got[code], meaning) {
			t.Errorf("README.md: exit status %d is %q, want it to say %q", code, got[code], meaning)
		}
	}
	if !strings.Contains(section, "`error: <message>` on stderr") {
		t.Error("README.md does not say errors are printed as `error: <message>` on stderr")
	}

	binaries := regexp.MustCompile("(?m)^\\| `(cozystack-[a-z]+)` \\| `(platform/cmd/[a-z-]+)`").FindAllStringSubmatch(section, -1)
	if len(binaries) != 3 {
		t.Errorf("README.md names %d platform binaries, want 3 (cozystack-api, -controller, -operator)", len(binaries))
	}
	for _, b := range binaries {
		if filepath.Base(b[2]) != b[1] {
			t.Errorf("README.md: %s is built from %s", b[1], b[2])
		}
		main, err := os.ReadFile(filepath.Join("../../..", b[2], "main.go"))
		if err != nil {
			t.Errorf("README.md names %s: %v", b[1], err)
			continue
		}
		if !strings.Contains(string(main), "command.Main(") {
			t.Errorf("%s/main.go does not run through command.Main, as README.md says", b[2])
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
