package schemas_test

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"cozystack.io/contracts/schemas"
)

// A table of three versions, to test the window where only one exists.
var three = schemas.Table{
	{Name: "v1alpha1", Platform: "0.1", Released: true},
	{Name: "v1alpha2", Platform: "0.2", Released: true},
	{Name: "v1beta1", Platform: "1.0"},
}

func TestForPlatform(t *testing.T) {
	for v, want := range map[string]string{"0.1.0": "v1alpha1", "0.1.7": "v1alpha1", "0.2.0-rc.1": "v1alpha2", "1.0.3": "v1beta1"} {
		got, err := three.ForPlatform(v)
		if err != nil || got.Name != want {
			t.Errorf("ForPlatform(%s) = %v, %v; want %s", v, got.Name, err, want)
		}
	}
	for v, want := range map[string]string{"0.3.0": "no contract version is known for the release line 0.3", "v0.1.0": "not SemVer", "latest": "not SemVer"} {
		if _, err := three.ForPlatform(v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ForPlatform(%s) = %v, want an error with %q", v, err, want)
		}
	}
	if cv, err := schemas.Versions.ForPlatform("0.1.0"); err != nil || cv.Name != "v1alpha1" {
		t.Errorf("platform 0.1.0 implements %v (%v), want v1alpha1", cv.Name, err)
	}
}

func TestWindow(t *testing.T) {
	names := func(l []schemas.ContractVersion) []string {
		var out []string
		for _, c := range l {
			out = append(out, c.Name)
		}
		return out
	}
	for name, want := range map[string][]string{
		"v1alpha1": {"v1alpha1", "v1alpha2"},
		"v1alpha2": {"v1alpha1", "v1alpha2", "v1beta1"},
		"v1beta1":  {"v1alpha2", "v1beta1"},
		"v0":       nil,
	} {
		if got := names(three.Window(name)); !slices.Equal(got, want) {
			t.Errorf("Window(%s) = %v, want %v", name, got, want)
		}
	}
	for _, tc := range []struct {
		platform, catalog string
		want              bool
	}{
		{"v1alpha2", "v1alpha1", true}, // N-1
		{"v1alpha2", "v1alpha2", true}, // N
		{"v1alpha2", "v1beta1", false}, // newer than the platform
		{"v1beta1", "v1alpha1", false}, // N-2
		{"v1beta1", "v0", false},
	} {
		if got := three.Accepts(tc.platform, tc.catalog); got != tc.want {
			t.Errorf("Accepts(%s, %s) = %v, want %v", tc.platform, tc.catalog, got, tc.want)
		}
	}
	if got := names(schemas.Versions.Window("v1alpha1")); !slices.Equal(got, []string{"v1alpha1"}) {
		t.Errorf("the window of the only version is %v", got)
	}
}

// Every embedded version directory is in the table, and the reverse; each
// holds all six contracts, each with its document, which says who
// provides and consumes it and its compatibility rule.
func TestVersionsMatchDirectories(t *testing.T) {
	dirs, err := fs.Glob(schemas.FS(), "v*")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range schemas.Versions {
		names = append(names, v.Name)
	}
	if !slices.Equal(dirs, names) {
		t.Errorf("embedded directories %v, versions table %v", dirs, names)
	}
	for _, v := range names {
		for _, f := range []string{schemas.K1ApplicationFile, schemas.K2ClusterValuesFile, schemas.K3PropertiesFile, schemas.K4ValuesFile, schemas.K5CozyLibFile, schemas.K6DashboardFile} {
			p := schemas.Path(v, f)
			if _, err := schemas.Compile(p); err != nil {
				t.Errorf("%s: %v", p, err)
			}
			doc := strings.TrimSuffix(p, ".schema.json") + ".md"
			data, err := fs.ReadFile(schemas.FS(), doc)
			if err != nil {
				t.Errorf("%s has no document: %v", p, err)
				continue
			}
			for _, want := range []string{"Provided by", "onsumed by", "ompatibility"} {
				if !strings.Contains(strings.ReplaceAll(string(data), "**", ""), want) {
					t.Errorf("%s does not say %q", doc, want)
				}
			}
		}
	}
}
