package names

import (
	"os"
	"strings"
	"testing"
)

// README.md ("Catalog delivery", "Names") states the names of a
// component's objects; they are what this package derives.
func TestREADMENames(t *testing.T) {
	data, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(data)), " ")
	i := strings.Index(readme, "- **Names.**")
	if i < 0 {
		t.Fatal(`README.md has no "Names." item`)
	}
	item, _, _ := strings.Cut(readme[i+1:], " - **")
	release := HelmRelease("acme.web", "api")
	for _, tc := range []struct{ readme, got, want string }{
		{"`<release>-installer`", Installer("acme.web", "api"), release + "-installer"},
		{"`<release>-catalog-values`", CatalogValues("acme.web", "api"), release + "-catalog-values"},
		{"`cozystack.io:package:<release>`", ClusterRBAC("acme.web", "api"), "cozystack.io:package:" + release},
	} {
		if !strings.Contains(item, tc.readme) {
			t.Errorf("README.md's Names item does not say %s:\n%s", tc.readme, item)
		}
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.readme, tc.got, tc.want)
		}
	}
	if !strings.Contains(item, "fits Helm's 53 characters") || MaxReleaseName != 53 {
		t.Errorf("README.md's Names item and MaxReleaseName (%d) disagree", MaxReleaseName)
	}
	if !strings.HasPrefix(release, "acme-web-api--") || len(release) != len("acme-web-api--")+hashLen {
		t.Errorf("HelmRelease(acme.web, api) = %q, want acme-web-api--<%d hex digits>", release, hashLen)
	}
}
