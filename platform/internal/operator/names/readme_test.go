package names

import (
	"strings"
	"testing"

	"cozystack.io/contracts/doctest"
)

// docs/operator/catalogs.md ("Catalog delivery", "Names") states the
// names of a component's objects; they are what this package derives.
func TestREADMENames(t *testing.T) {
	const doc = "docs/operator/catalogs.md"
	readme := strings.Join(strings.Fields(doctest.Section(t, doc, "Catalog delivery")), " ")
	i := strings.Index(readme, "- **Names.**")
	if i < 0 {
		t.Fatalf(`%s has no "Names." item`, doc)
	}
	item, _, _ := strings.Cut(readme[i+1:], " - **")
	release := HelmRelease("acme.web", "api")
	for _, tc := range []struct{ readme, got, want string }{
		{"`<release>-installer`", Installer("acme.web", "api"), release + "-installer"},
		{"`<release>-catalog-values`", CatalogValues("acme.web", "api"), release + "-catalog-values"},
		{"`cozystack.io:package:<release>`", ClusterRBAC("acme.web", "api"), "cozystack.io:package:" + release},
	} {
		if !strings.Contains(item, tc.readme) {
			t.Errorf("%s's Names item does not say %s:\n%s", doc, tc.readme, item)
		}
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.readme, tc.got, tc.want)
		}
	}
	if !strings.Contains(item, "fits Helm's 53 characters") || MaxReleaseName != 53 {
		t.Errorf("%s's Names item and MaxReleaseName (%d) disagree", doc, MaxReleaseName)
	}
	if !strings.HasPrefix(release, "acme-web-api--") || len(release) != len("acme-web-api--")+hashLen {
		t.Errorf("HelmRelease(acme.web, api) = %q, want acme-web-api--<%d hex digits>", release, hashLen)
	}
}
