package virtualization_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/conformance"
	"cozystack.io/sdk/charttest"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

// catalog.yaml says what catalogs/virtualization/README.md says of the
// catalog: its name and versions, and the K3 property VMs need.
func TestCatalogMetadata(t *testing.T) {
	cat, err := artifact.LoadCatalog(".")
	if err != nil {
		t.Fatal(err)
	}
	if cat.Name != "virtualization" || cat.Version != "0.1.0" || cat.MinPlatformVersion != "0.1.0" {
		t.Errorf("name %q version %q minPlatformVersion %q, want virtualization 0.1.0 0.1.0", cat.Name, cat.Version, cat.MinPlatformVersion)
	}
	if !slices.Equal(cat.RequiredProperties, []string{"network.stableVMAddress"}) {
		t.Errorf("requiredProperties %v, want [network.stableVMAddress]", cat.RequiredProperties)
	}
	want := []string{"Kubernetes", "VMDisk", "VMInstance", "VirtualPrivateCloud"}
	if got := slices.Sorted(slices.Values(cat.Provides.ApplicationKinds)); !slices.Equal(got, want) {
		t.Errorf("provided kinds %v, want %v", got, want)
	}
}

func TestCatalogBuilds(t *testing.T) { conformance.CheckCatalogBuilds(t, ".") }

// The application charts are catalog.yaml applications, published for the
// ADs and never installed by a Package: no variant lists them as
// components, and every application has an AD.
func TestApplicationsAreNotComponents(t *testing.T) {
	conformance.CheckApplicationsAreNotComponents(t, ".", []string{"kubernetes", "vm-disk", "vm-instance", "vpc"})
}

// The singular is the lower-case kind (kubectl get vminstance), as
// upstream's; the release prefix is the chart's name.
func TestApplicationDefinitions(t *testing.T) {
	conformance.CheckApplicationDefinitions(t, ".", conformance.ADChecks{
		Singular:      func(_, kind string) string { return strings.ToLower(kind) },
		OpenAPISchema: charttest.WithoutReservedKeys,
		Reserved:      charttest.ReservedKeys,
	})
}

// The committed CRDs are what crds.yaml's sources give: the Go module ones
// always; the mirror ones with ../shared/crds/upstream as the mirror, in a
// copy of the catalog (they are not committed).
func TestOperatorCRDs(t *testing.T) { charttest.CheckOperatorCRDs(t, ".") }

// Every CRD the operator charts ship (the mirror-sourced ones when synced)
// installs and becomes Established on a real API server: the generated
// ones are structural, and the module ones are what their releases give.
func TestOperatorCRDsInstall(t *testing.T) {
	testenv.Need(t, env)
	dirs, err := filepath.Glob(filepath.Join("charts", "*", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 6 {
		t.Fatalf("crds/ in %v, want every module-sourced operator chart", dirs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, d := range dirs {
		t.Run(filepath.Base(filepath.Dir(d)), func(t *testing.T) {
			crds, err := charttest.ChartCRDs(filepath.Dir(d))
			if err != nil {
				t.Fatal(err)
			}
			if len(crds) == 0 {
				t.Fatalf("%s holds no CRD", d)
			}
			if err := localcp.ApplyCRDs(ctx, env.Config, crds...); err != nil {
				t.Error(err)
			}
		})
	}
}
