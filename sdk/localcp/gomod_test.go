package localcp

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func TestBuildGoMod(t *testing.T) {
	upstream, err := os.ReadFile("testdata/upstream-etcd-like.mod")
	if err != nil {
		t.Fatal(err)
	}
	c := Component{Name: "server", Module: "example.com/server/v3", Version: "v3.6.1", LocalReplaceVersion: "v3.6.1",
		Binaries: map[string]string{"server": "."}}
	got, err := BuildGoMod(c, upstream, "")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "build-etcd-like.mod.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("generated go.mod differs from %s (-want +got):\n%s", golden, diff)
	}
}

func TestBuildGoModNeedsLocalReplaceVersion(t *testing.T) {
	upstream, _ := os.ReadFile("testdata/upstream-etcd-like.mod")
	c := Component{Name: "server", Module: "example.com/server/v3", Version: "v3.6.1", Binaries: map[string]string{"server": "."}}
	_, err := BuildGoMod(c, upstream, "")
	if err == nil || !strings.Contains(err.Error(), "set localReplaceVersion for component \"server\"") {
		t.Fatalf("want an error naming localReplaceVersion, got %v", err)
	}
}

func TestKubernetesLDFlags(t *testing.T) {
	got, err := KubernetesLDFlags("v1.37.2", "2026-01-02T03:04:05Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"-X k8s.io/component-base/version.gitVersion=v1.37.2",
		"-X k8s.io/client-go/pkg/version.gitVersion=v1.37.2",
		"-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/component-base/version.gitMinor=37",
		"-X k8s.io/component-base/version.buildDate=2026-01-02T03:04:05Z",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ldflags lack %q:\n%s", want, got)
		}
	}
	if _, err := KubernetesLDFlags("latest", ""); err == nil {
		t.Error("want an error for a version without major.minor")
	}
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"1.25.0", "1.26.0", true},
		{"1.26", "1.26.0", false},
		{"1.26.1", "1.26", false},
		{"1.9", "1.10", true},
	} {
		if got := versionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
