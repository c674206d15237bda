package handoff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cozystack.io/platform/internal/backup/drivers"
)

// The shipped list is valid, and empty until a release hands a kind over.
func TestShipped(t *testing.T) {
	list, err := Shipped()
	if err != nil {
		t.Fatalf("the shipped %s is invalid: %v", File, err)
	}
	if len(list) != 0 {
		t.Errorf("shipped list = %+v, want empty (no kind handed over yet)", list)
	}
	if !strings.Contains(string(shipped), "How a release hands a strategy kind over") {
		t.Errorf("%s lost the comment explaining how a release hands a kind over", File)
	}
}

// Parse accepts well-formed lists and refuses every malformed entry with
// an error naming it.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		// why is the rule the case pins.
		why  string
		doc  string
		want []drivers.Handoff
		// errs are substrings the error must hold (empty: no error).
		errs []string
	}{
		{
			name: "empty list",
			why:  "no kind handed over is a valid list",
			doc:  "handoff: []\n",
			want: nil,
		},
		{
			name: "comment only list",
			why:  "comments are YAML's, not entries",
			doc:  "# nothing\nhandoff: []\n",
			want: nil,
		},
		{
			name: "two kinds",
			why:  "entries keep file order; build metadata and pre-releases are semantic versions",
			doc: `handoff:
  - strategyKind: CNPG
    catalog: services
    minVersion: 0.2.0
  - strategyKind: Velero
    catalog: virtualization
    minVersion: 1.10.0-rc.1+build.5
`,
			want: []drivers.Handoff{
				{StrategyKind: "CNPG", Catalog: "services", MinVersion: "0.2.0"},
				{StrategyKind: "Velero", Catalog: "virtualization", MinVersion: "1.10.0-rc.1+build.5"},
			},
		},
		{
			name: "missing key",
			why:  "a file without the key is a mistake, not an empty list",
			doc:  "{}\n",
			errs: []string{"the key handoff is missing"},
		},
		{
			name: "unknown top-level key",
			why:  "a misspelt key must not silently mean an empty list",
			doc:  "handoff: []\nhandoffs: []\n",
			errs: []string{`unknown field "handoffs"`},
		},
		{
			name: "not yaml",
			why:  "a broken file fails with YAML's error",
			doc:  "handoff: [\n",
			errs: []string{"not a valid YAML document"},
		},
		{
			name: "duplicate top-level key",
			why:  "two lists in one file would hide one",
			doc:  "handoff: []\nhandoff: []\n",
			errs: []string{"not a valid YAML document", "handoff"},
		},
		{
			name: "unknown key in an entry",
			why:  "a misspelt field of an entry is refused, naming the entry",
			doc:  "handoff:\n  - {strategyKind: CNPG, catalog: services, minVersion: 0.2.0, version: 1.0.0}\n",
			errs: []string{"entry 1", `unknown field "version"`},
		},
		{
			name: "duplicate key in an entry",
			why:  "two values of one field would hide one",
			doc:  "handoff:\n  - strategyKind: CNPG\n    strategyKind: Velero\n    catalog: services\n    minVersion: 0.2.0\n",
			errs: []string{"not a valid YAML document", "strategyKind"},
		},
		{
			name: "null entry",
			why:  "an empty entry names its position",
			doc:  "handoff:\n  -\n",
			errs: []string{"entry 1 is empty"},
		},
		{
			name: "empty fields",
			why:  "every required field is named, all at once",
			doc:  "handoff:\n  - {strategyKind: CNPG, catalog: services, minVersion: 0.2.0}\n  - {strategyKind: \"\", catalog: \"\"}\n",
			errs: []string{"entry 2: strategyKind is empty", "entry 2: catalog is empty", "entry 2: minVersion is empty"},
		},
		{
			name: "bad strategy kind",
			why:  "a strategy kind is a Kind (CamelCase)",
			doc:  "handoff:\n  - {strategyKind: cnpg, catalog: services, minVersion: 0.2.0}\n",
			errs: []string{"entry 1 (strategyKind cnpg)", `strategyKind "cnpg" must match`},
		},
		{
			name: "bad catalog",
			why:  "a catalog is a DNS label",
			doc:  "handoff:\n  - {strategyKind: CNPG, catalog: Services_1, minVersion: 0.2.0}\n",
			errs: []string{"entry 1 (strategyKind CNPG)", `catalog "Services_1"`},
		},
		{
			name: "version with v",
			why:  "minVersion is a bare semantic version, as the catalogs' versions",
			doc:  "handoff:\n  - {strategyKind: CNPG, catalog: services, minVersion: v0.2.0}\n",
			errs: []string{"entry 1 (strategyKind CNPG)", `minVersion "v0.2.0" is not a semantic version`},
		},
		{
			name: "short version",
			why:  "major.minor is not a semantic version",
			doc:  "handoff:\n  - {strategyKind: CNPG, catalog: services, minVersion: \"0.2\"}\n",
			errs: []string{`minVersion "0.2" is not a semantic version`},
		},
		{
			name: "leading zero",
			why:  "semantic versions forbid leading zeros",
			doc:  "handoff:\n  - {strategyKind: CNPG, catalog: services, minVersion: 01.2.0}\n",
			errs: []string{`minVersion "01.2.0" is not a semantic version`},
		},
		{
			name: "version as a number",
			why:  "a YAML number is not a version string",
			doc:  "handoff:\n  - {strategyKind: CNPG, catalog: services, minVersion: 1}\n",
			errs: []string{"entry 1:", "minVersion"},
		},
		{
			name: "duplicate kind",
			why:  "a kind is handed to one catalog only; the earlier entry is named",
			doc: `handoff:
  - {strategyKind: CNPG, catalog: services, minVersion: 0.2.0}
  - {strategyKind: Velero, catalog: virtualization, minVersion: 0.3.0}
  - {strategyKind: CNPG, catalog: other, minVersion: 1.0.0}
`,
			errs: []string{"entry 3 (strategyKind CNPG): the kind is already handed over by entry 1"},
		},
		{
			name: "list at top level",
			why:  "the file is one object with the key handoff, not a bare list",
			doc:  "- {strategyKind: CNPG, catalog: services, minVersion: 0.2.0}\n",
			errs: []string{"one object with the key handoff"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.doc))
			if len(tc.errs) == 0 {
				if err != nil {
					t.Fatalf("Parse: %v (%s)", err, tc.why)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("Parse (-want +got), %s:\n%s", tc.why, diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse = %+v, want an error holding %q: %s", got, tc.errs, tc.why)
			}
			for _, s := range tc.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q: %s", err, s, tc.why)
				}
			}
		})
	}
}
