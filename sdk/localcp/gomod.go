package localcp

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// BuildGoMod returns the go.mod of the throwaway module from which a
// component's binaries are built (upstream `go install pkg@version` refuses
// modules with replace directives, and k8s.io/kubernetes, etcd and
// helm-controller all have them).
//
// upstream is the component module's own go.mod. The result requires
// Module@Version and carries over every replace directive of upstream, since
// replace directives only apply in the main module:
//   - a replace to a module version is copied as is;
//   - a replace to a local path (a sibling module inside the upstream
//     repository) becomes a replace to the same module at LocalReplaceVersion,
//     but only for modules that upstream actually requires (etcd replaces
//     forbidden modules with ./FORBIDDEN_DEPENDENCY, which must stay out).
//
// The go directive is the higher of upstream's and goVersion's language version.
func BuildGoMod(c Component, upstream []byte, goVersion string) ([]byte, error) {
	up, err := modfile.Parse(c.Module+"/go.mod", upstream, nil)
	if err != nil {
		return nil, fmt.Errorf("parse go.mod of %s@%s: %w", c.Module, c.Version, err)
	}
	required := map[string]bool{}
	for _, r := range up.Require {
		required[r.Mod.Path] = true
	}

	out := &modfile.File{}
	if err := out.AddModuleStmt("cozystack.io/localbuild/" + c.Name); err != nil {
		return nil, err
	}
	goDirective := goVersion
	if up.Go != nil && goDirective == "" {
		goDirective = up.Go.Version
	}
	if up.Go != nil && versionLess(goDirective, up.Go.Version) {
		goDirective = up.Go.Version
	}
	if goDirective != "" {
		if err := out.AddGoStmt(goDirective); err != nil {
			return nil, err
		}
	}
	if err := out.AddRequire(c.Module, c.Version); err != nil {
		return nil, err
	}

	replaces := append([]*modfile.Replace(nil), up.Replace...)
	sort.SliceStable(replaces, func(i, j int) bool { return replaces[i].Old.Path < replaces[j].Old.Path })
	for _, r := range replaces {
		if modfile.IsDirectoryPath(r.New.Path) {
			if !required[r.Old.Path] {
				continue
			}
			if c.LocalReplaceVersion == "" {
				return nil, fmt.Errorf("%s@%s replaces %s with the local path %s: set localReplaceVersion for component %q in versions.yaml",
					c.Module, c.Version, r.Old.Path, r.New.Path, c.Name)
			}
			if err := out.AddReplace(r.Old.Path, r.Old.Version, r.Old.Path, c.LocalReplaceVersion); err != nil {
				return nil, err
			}
			continue
		}
		if err := out.AddReplace(r.Old.Path, r.Old.Version, r.New.Path, r.New.Version); err != nil {
			return nil, err
		}
	}
	out.Cleanup()
	return modfile.Format(out.Syntax), nil
}

// versionLess compares Go language versions such as 1.25.0 and 1.26.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			fmt.Sscan(pa[i], &x)
		}
		if i < len(pb) {
			fmt.Sscan(pb[i], &y)
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// KubernetesLDFlags returns the -X flags that hack/lib/version.sh sets, so a
// binary built from the k8s.io/kubernetes module reports version (e.g.
// v1.37.2) in discovery and `kubectl version`. buildDate is RFC 3339.
func KubernetesLDFlags(version, buildDate string) (string, error) {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return "", fmt.Errorf("kubernetes version %q is not vMAJOR.MINOR.PATCH", version)
	}
	vars := [][2]string{
		{"gitVersion", version},
		{"gitMajor", parts[0]},
		{"gitMinor", parts[1]},
		{"gitTreeState", "clean"},
		{"buildDate", buildDate},
	}
	var flags []string
	for _, pkg := range []string{"k8s.io/client-go/pkg/version", "k8s.io/component-base/version"} {
		for _, kv := range vars {
			flags = append(flags, fmt.Sprintf("-X %s.%s=%s", pkg, kv[0], kv[1]))
		}
	}
	return strings.Join(flags, " "), nil
}
