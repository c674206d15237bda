package runbounds_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corePackages are the backup core's packages (contract k7: the core
// "never imports a driver's vendor types").
var corePackages = []string{
	"cozystack.io/platform/internal/backup/...",
}

// testOnly are the packages under the core's folders that only its
// tests import (backuptest starts control planes, so it imports testenv
// and the manager's flags): they are not the core, and the core may not
// import them.
var testOnly = []string{
	"cozystack.io/platform/internal/backup/backuptest",
}

// forbidden are module prefixes of backup vendors and of the catalogs
// shipping their drivers; none may be among the core's dependencies.
var forbidden = []struct{ prefix, why string }{
	{"github.com/cloudnative-pg/", "CloudNativePG (the CNPG driver's, in catalogs/services)"},
	{"github.com/vmware-tanzu/velero", "Velero"},
	{"kubevirt.io/", "KubeVirt and CDI (the VM driver's, in catalogs/virtualization)"},
	{"github.com/mariadb-operator/", "the MariaDB operator"},
	{"github.com/percona/", "the Percona operators"},
	{"github.com/kubernetes-csi/external-snapshotter", "CSI snapshots"},
	{"github.com/kopia/", "Kopia"},
	{"github.com/restic/", "restic"},
	{"github.com/aws/", "AWS SDKs (a backend)"},
	{"github.com/minio/", "MinIO (a backend)"},
	{"cozystack.io/catalogs/", "a catalog module"},
}

// allowed are the module prefixes the core's own packages may import
// directly, besides the standard library; each other module is reviewed
// and listed with its reason.
var allowed = []struct{ prefix, why string }{
	{"k8s.io/", "Kubernetes"},
	{"sigs.k8s.io/", "controller-runtime, structured-merge-diff, yaml"},
	{"cozystack.io/platform", "the platform itself"},
	{"cozystack.io/sdk", "the backup API and SDK (contract k7)"},
	{"cozystack.io/contracts", "the contracts (K1 labels)"},
	{"github.com/fluxcd/", "HelmRelease and kstatus conditions"},
	{"github.com/robfig/cron/v3", "cron schedules of Plans (the plan scheduler); generic, no backup vendor"},
	{"github.com/go-logr/logr", "the logging interface controller-runtime's loggers implement; the SDK driver runtime the Job driver runs on logs through it"},
	{"github.com/evanphx/json-patch/v5", "RFC 7386 merge of a Backup's restoreOverlay (restore); the JSON patch library Kubernetes itself uses"},
}

type listed struct {
	ImportPath string
	Standard   bool
	Module     *struct{ Path string }
	Imports    []string
}

// The core's dependencies (go list -deps, without tests) hold no backup
// vendor's or catalog's module, and the core's own packages import only
// the standard library and the allowed modules; anything else is there
// only as a dependency of those.
func TestCoreImportsNoVendor(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	var stderr bytes.Buffer
	// The core's packages: corePackages expanded, less testOnly.
	cmd := exec.Command(goTool, append([]string{"list", "-e"}, corePackages...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var roots []string
	for _, p := range strings.Fields(string(out)) {
		if !slices.Contains(testOnly, p) {
			roots = append(roots, p)
		}
	}
	cmd = exec.Command(goTool, append([]string{"list", "-e", "-deps", "-json=ImportPath,Standard,Module,Imports"}, roots...)...)
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	module := map[string]string{}
	standard := map[string]bool{}
	cores := 0
	for _, p := range pkgs {
		if p.Module != nil {
			module[p.ImportPath] = p.Module.Path
		}
		standard[p.ImportPath] = p.Standard
		if slices.Contains(testOnly, p.ImportPath) {
			t.Errorf("the backup core depends on %s, which only its tests may import", p.ImportPath)
		}
		if strings.HasPrefix(p.ImportPath, "cozystack.io/platform/internal/backup/") || strings.HasPrefix(p.ImportPath, "cozystack.io/platform/internal/backup/") {
			cores++
		}
	}
	if cores < 4 {
		t.Fatalf("go list found %d core packages, want at least binder, runbounds, drivers and handoff", cores)
	}
	for _, f := range forbidden {
		for _, p := range pkgs {
			if m := module[p.ImportPath]; strings.HasPrefix(m, f.prefix) || strings.HasPrefix(p.ImportPath, f.prefix) {
				t.Errorf("the backup core depends on %s (module %s): %s is a vendor's; reach it only through a driver", p.ImportPath, m, f.why)
			}
		}
	}
	for _, p := range pkgs {
		if p.Standard || !strings.HasPrefix(module[p.ImportPath], "cozystack.io/") {
			continue
		}
		for _, imp := range p.Imports {
			m := module[imp]
			if standard[imp] || slices.ContainsFunc(allowed, func(a struct{ prefix, why string }) bool { return strings.HasPrefix(m, a.prefix) }) {
				continue
			}
			t.Errorf("%s imports %s (module %q): the core imports only the standard library and the modules listed in allowed (review the module and add it there with its reason)", p.ImportPath, imp, m)
		}
	}
	t.Logf("%d packages checked", len(pkgs))
}
