package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"cozystack.io/sdk/localcp"

	"cozystack.io/contracts/doctest"
)

// repoRoot is the repository root, from this package's directory.
var repoRoot = filepath.Join("..", "..", "..")

// developmentDoc holds the sections these tests check against the Makefile
// and cozystack-local.
const developmentDoc = "docs/contributor/development.md"

// tableRows returns the rows of the Markdown tables in text as cells,
// without the header rows and the separators.
func tableRows(text string) [][]string {
	var rows [][]string
	header := true
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "|") {
			header = true
			continue
		}
		if strings.HasPrefix(l, "|---") {
			header = false
			continue
		}
		if header {
			continue
		}
		// "\|" is a | inside a cell.
		l = strings.ReplaceAll(l, `\|`, "\x00")
		var cells []string
		for _, c := range strings.Split(strings.Trim(l, "|"), "|") {
			cells = append(cells, strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|")))
		}
		rows = append(rows, cells)
	}
	return rows
}

// makefile is what the tests read of the Makefile: its .PHONY targets, the
// recipe lines and prerequisites of each rule, and its variables' defaults.
type makefile struct {
	phony   []string
	recipes map[string][]string
	prereqs map[string][]string
	vars    map[string]string
}

var (
	ruleLine = regexp.MustCompile(`^([a-z][a-z-]*):(?:\s+(.*))?$`)
	varLine  = regexp.MustCompile(`^([A-Z_]+)\s*\?=\s*(.*)$`)
)

func readMakefile(t *testing.T) makefile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mk := makefile{recipes: map[string][]string{}, prereqs: map[string][]string{}, vars: map[string]string{}}
	rule := ""
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, ".PHONY:"):
			mk.phony = strings.Fields(strings.TrimPrefix(l, ".PHONY:"))
		case strings.HasPrefix(l, "\t") && rule != "":
			mk.recipes[rule] = append(mk.recipes[rule], strings.TrimSpace(l))
		case ruleLine.MatchString(l):
			m := ruleLine.FindStringSubmatch(l)
			rule = m[1]
			mk.prereqs[rule] = strings.Fields(m[2])
		default:
			if m := varLine.FindStringSubmatch(l); m != nil {
				mk.vars[m[1]] = m[2]
			}
			if l != "" {
				rule = ""
			}
		}
	}
	if len(mk.phony) == 0 {
		t.Fatal("the Makefile has no .PHONY line")
	}
	return mk
}

var (
	makeTarget     = regexp.MustCompile("`make( [a-z][a-z-]*)?`")
	cliCommand     = regexp.MustCompile(`\b(cozystack-local|cozypkg) ([a-z][a-z-]*)`)
	localCall      = regexp.MustCompile(`\$\(LOCAL\) ([a-z][a-z-]*)`)
	cozypkgCall    = regexp.MustCompile(`tools/cmd/cozypkg ([a-z][a-z-]*)`)
	portOfVar      = regexp.MustCompile("port (\\d+), `([A-Z_]+)=`")
	leadingTargets = regexp.MustCompile("^(?:`make [a-z][a-z-]*`(?:, | and |, then )?)+")
)

// isSubsequence reports whether want appears in got in order.
func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && want[i] == g {
			i++
		}
	}
	return i == len(want)
}

// docs/contributor/development.md's "Make targets" table lists every target of the Makefile and
// nothing else; what a row says a target runs of cozystack-local and
// cozypkg, the target's recipe runs in that order; the platform binaries
// `make api` builds are those of platform/cmd; a port a row names is the
// default of the variable it names.
func TestREADMEMakeTargets(t *testing.T) {
	mk := readMakefile(t)
	section := doctest.Section(t, developmentDoc, "Make targets")
	var documented []string
	for _, row := range tableRows(section) {
		var targets []string
		for _, m := range makeTarget.FindAllStringSubmatch(row[0], -1) {
			target := strings.TrimSpace(m[1])
			if target == "" {
				target = "all" // `make` alone
			}
			targets = append(targets, target)
		}
		if len(targets) == 0 {
			t.Errorf("docs/contributor/development.md: a Make targets row names no target: %q", row[0])
			continue
		}
		documented = append(documented, targets...)

		var recipe []string
		for _, target := range targets {
			recipe = append(recipe, mk.recipes[target]...)
		}
		var runs []string
		for _, l := range recipe {
			for _, m := range localCall.FindAllStringSubmatch(l, -1) {
				runs = append(runs, "cozystack-local "+m[1])
			}
			for _, m := range cozypkgCall.FindAllStringSubmatch(l, -1) {
				runs = append(runs, "cozypkg "+m[1])
			}
		}
		var says []string
		for _, m := range cliCommand.FindAllStringSubmatch(row[1], -1) {
			says = append(says, m[1]+" "+m[2])
		}
		if !isSubsequence(says, runs) {
			t.Errorf("docs/contributor/development.md: %s runs %v, in that order, but its recipe runs %v", row[0], says, runs)
		}
		// A row that starts with other targets ("`make build` and `make
		// api`, ...") runs them first: they are prerequisites.
		lead := leadingTargets.FindString(row[1])
		for _, m := range makeTarget.FindAllStringSubmatch(lead, -1) {
			if dep := strings.TrimSpace(m[1]); dep != "" && !slices.Contains(targets, dep) {
				if !slices.ContainsFunc(targets, func(target string) bool { return slices.Contains(mk.prereqs[target], dep) }) {
					t.Errorf("docs/contributor/development.md: %s says it runs `make %s`, which is not a prerequisite of it (%v)", row[0], dep, mk.prereqs[targets[0]])
				}
			}
		}
		for _, m := range portOfVar.FindAllStringSubmatch(row[1], -1) {
			if mk.vars[m[2]] != m[1] {
				t.Errorf("docs/contributor/development.md: %s: port %s, %s=; the Makefile's default is %q", row[0], m[1], m[2], mk.vars[m[2]])
			}
		}
	}
	sort.Strings(documented)
	phony := slices.Sorted(slices.Values(mk.phony))
	if !slices.Equal(documented, phony) {
		t.Errorf("docs/contributor/development.md's Make targets are %v; the Makefile's (.PHONY) are %v", documented, phony)
	}
	for _, target := range phony {
		if _, ok := mk.recipes[target]; !ok && len(mk.prereqs[target]) == 0 {
			t.Errorf("the Makefile lists %s in .PHONY but has no rule for it", target)
		}
	}

	// `make api` builds every command of platform/cmd into .cache/bin.
	cmds, err := os.ReadDir(filepath.Join(repoRoot, "platform", "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	api := strings.Join(mk.recipes["api"], "\n")
	for _, c := range cmds {
		if !strings.Contains(api, fmt.Sprintf("-o $(CACHE)/bin/%s ./platform/cmd/%s", c.Name(), c.Name())) {
			t.Errorf("make api does not build platform/cmd/%s into .cache/bin:\n%s", c.Name(), api)
		}
	}
}

// docs/contributor/development.md's "The local control plane" lists every command of
// cozystack-local with every flag it takes, and nothing else; the global
// flags; the fixed ports; and what `env` exports.
func TestREADMELocalControlPlane(t *testing.T) {
	section := doctest.Section(t, developmentDoc, "The local control plane")
	root := newRoot()
	commands := map[string][]string{}
	for _, c := range root.Commands() {
		var flags []string
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			flags = append(flags, f.Name)
		})
		commands[c.Name()] = flags
	}

	flagRef := regexp.MustCompile(`(?:^|[\s\[])(--?[a-z][a-z-]*)`)
	documented := map[string]bool{}
	for _, row := range tableRows(section) {
		usage := strings.Trim(row[0], "`")
		fields := strings.Fields(usage)
		if len(fields) < 2 || fields[0] != "cozystack-local" {
			t.Errorf("docs/contributor/development.md: not a cozystack-local command: %q", row[0])
			continue
		}
		name := fields[1]
		flags, ok := commands[name]
		if !ok {
			t.Errorf("docs/contributor/development.md documents cozystack-local %s, which is no command of it", name)
			continue
		}
		documented[name] = true
		cmd, _, _ := root.Find([]string{name})
		var shown []string
		for _, m := range flagRef.FindAllStringSubmatch(strings.ReplaceAll(usage, " -- ", " "), -1) {
			f := m[1]
			var flag *pflag.Flag
			if long, ok := strings.CutPrefix(f, "--"); ok {
				flag = cmd.LocalFlags().Lookup(long)
			} else {
				flag = cmd.LocalFlags().ShorthandLookup(strings.TrimPrefix(f, "-"))
			}
			if flag == nil {
				t.Errorf("docs/contributor/development.md: cozystack-local %s has no flag %s", name, f)
				continue
			}
			shown = append(shown, flag.Name)
		}
		for _, f := range flags {
			if !slices.Contains(shown, f) {
				t.Errorf("docs/contributor/development.md: cozystack-local %s takes --%s, which its row does not show", name, f)
			}
		}
	}
	for name := range commands {
		if !documented[name] {
			t.Errorf("docs/contributor/development.md does not document cozystack-local %s", name)
		}
	}

	// The global flags.
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(section, "`--"+f.Name+"`") {
			t.Errorf("docs/contributor/development.md does not say that every command takes --%s", f.Name)
		}
	})

	// The fixed ports.
	p := localcp.DefaultPorts()
	text := strings.Join(strings.Fields(section), " ")
	for _, want := range []string{
		fmt.Sprintf("kube-apiserver %d", p.APIServer),
		fmt.Sprintf("etcd %d/%d", p.Etcd, p.EtcdPeer),
		fmt.Sprintf("kube-controller-manager %d", p.ControllerManager),
		fmt.Sprintf("helm-controller %d (health) and %d (metrics)", p.HelmControllerHealth, p.HelmControllerMetrics),
		fmt.Sprintf("registry %d", p.Registry),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/contributor/development.md does not give the fixed port %q", want)
		}
	}

	// What env exports: every variable printEnv prints with a registry
	// running, and the registry's only when it runs.
	var envRow string
	for _, row := range tableRows(section) {
		if strings.HasPrefix(row[0], "`cozystack-local env") {
			envRow = row[1]
		}
	}
	var said []string
	for _, m := range regexp.MustCompile("`([A-Z][A-Z_]+)`").FindAllStringSubmatch(envRow, -1) {
		said = append(said, m[1])
	}
	exports := func(s *localcp.State) []string {
		var out bytes.Buffer
		printEnv(&out, localcp.Layout{Root: t.TempDir()}, s)
		var names []string
		for _, m := range regexp.MustCompile(`(?m)^export ([A-Z_]+)=`).FindAllStringSubmatch(out.String(), -1) {
			names = append(names, m[1])
		}
		return names
	}
	withRegistry := exports(&localcp.State{Kubeconfig: "k", Ports: p, Processes: []localcp.ProcessState{{Name: "registry"}}})
	without := exports(&localcp.State{Kubeconfig: "k", Ports: p})
	if !slices.Equal(said, withRegistry) {
		t.Errorf("docs/contributor/development.md says env exports %v; it exports %v", said, withRegistry)
	}
	for _, name := range withRegistry {
		if !slices.Contains(without, name) && !strings.Contains(envRow, "when the registry runs, `"+name+"`") {
			t.Errorf("docs/contributor/development.md: env exports %s only when the registry runs; its row does not say so", name)
		}
	}
}

// Registry addresses in the Markdown documents of the repository
// (127.0.0.1:<port>/<repository>) are the local registry's, the fixed port
// of `cozystack-local up`.
func TestREADMERegistryAddresses(t *testing.T) {
	registry := regexp.MustCompile(`127\.0\.0\.1:(\d+)/`)
	want := localcp.DefaultPorts().Registry
	found := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, l := range strings.Split(string(data), "\n") {
			for _, m := range registry.FindAllStringSubmatch(l, -1) {
				found++
				if port, _ := strconv.Atoi(m[1]); port != want {
					rel, _ := filepath.Rel(repoRoot, path)
					t.Errorf("%s:%d: registry 127.0.0.1:%d; the local registry is 127.0.0.1:%d", rel, i+1, port, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("no registry address found in the repository's Markdown documents")
	}
}
