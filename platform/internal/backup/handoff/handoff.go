package handoff

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"cozystack.io/platform/internal/backup/drivers"
)

// File is the name of the embedded handoff list, for messages.
const File = "handoff.yaml"

//go:embed handoff.yaml
var shipped []byte

var (
	// strategyKind is the pattern of a strategy kind (Strategy.Kind in
	// sdk/backup/api/v1alpha1).
	strategyKind = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,62}$`)
	// semVer is a semantic version 2.0.0 without a leading "v"
	// (https://semver.org, the suggested regular expression).
	semVer = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
		`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
)

// Shipped returns the handoff list of this platform release (the embedded
// handoff.yaml), in file order. An error means the shipped file is invalid
// (see Parse); the package's tests keep that from being released.
func Shipped() ([]drivers.Handoff, error) {
	list, err := Parse(shipped)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", File, err)
	}
	return list, nil
}

// Parse decodes a handoff document, a YAML object with one key, handoff, a
// list of {strategyKind, catalog, minVersion} entries, and validates it:
// every key is required and non-empty, strategyKind matches
// ^[A-Z][A-Za-z0-9]{0,62}$ and appears once, catalog is a DNS-1123
// subdomain, minVersion a semantic version MAJOR.MINOR.PATCH[-pre][+build]
// without "v". Unknown or duplicate keys are errors. Errors name the entry
// (counted from 1, with its strategy kind when it has one) and are joined
// (errors.Join) when there are several. An empty list is valid.
func Parse(data []byte) ([]drivers.Handoff, error) {
	// YAMLToJSONStrict refuses duplicate keys anywhere in the document.
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not a valid YAML document: %w", err)
	}
	var doc struct {
		Handoff *[]json.RawMessage `json:"handoff"`
	}
	if err := decodeStrict(js, &doc); err != nil {
		return nil, fmt.Errorf("the document is one object with the key handoff: %w", err)
	}
	if doc.Handoff == nil {
		return nil, errors.New("the key handoff is missing (write handoff: [] when no kind is handed over)")
	}
	var (
		list []drivers.Handoff
		errs []error
		seen = map[string]int{}
	)
	for i, raw := range *doc.Handoff {
		n := i + 1
		var h drivers.Handoff
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			errs = append(errs, fmt.Errorf("entry %d is empty: want strategyKind, catalog and minVersion", n))
			continue
		}
		if err := decodeStrict(raw, &h); err != nil {
			errs = append(errs, fmt.Errorf("entry %d: %w (the keys are strategyKind, catalog and minVersion, each a string)", n, err))
			continue
		}
		name := fmt.Sprintf("entry %d", n)
		if h.StrategyKind != "" {
			name = fmt.Sprintf("entry %d (strategyKind %s)", n, h.StrategyKind)
		}
		for _, e := range validate(h) {
			errs = append(errs, fmt.Errorf("%s: %s", name, e))
		}
		if h.StrategyKind != "" {
			if first, ok := seen[h.StrategyKind]; ok {
				errs = append(errs, fmt.Errorf("%s: the kind is already handed over by entry %d; a kind goes to one catalog", name, first))
			} else {
				seen[h.StrategyKind] = n
			}
		}
		list = append(list, h)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return list, nil
}

// validate returns what is wrong with the fields of h.
func validate(h drivers.Handoff) []string {
	var out []string
	switch {
	case h.StrategyKind == "":
		out = append(out, "strategyKind is empty")
	case !strategyKind.MatchString(h.StrategyKind):
		out = append(out, fmt.Sprintf("strategyKind %q must match %s (a strategy kind as in a BackupClass)", h.StrategyKind, strategyKind))
	}
	if h.Catalog == "" {
		out = append(out, "catalog is empty")
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(h.Catalog) {
			out = append(out, fmt.Sprintf("catalog %q: %s (a catalog name)", h.Catalog, msg))
		}
	}
	switch {
	case h.MinVersion == "":
		out = append(out, "minVersion is empty")
	case !semVer.MatchString(h.MinVersion):
		out = append(out, fmt.Sprintf("minVersion %q is not a semantic version (want MAJOR.MINOR.PATCH without v, e.g. 0.2.0)", h.MinVersion))
	}
	return out
}

// decodeStrict decodes the JSON js into v, refusing unknown keys and
// trailing data.
func decodeStrict(js []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the document")
	}
	return nil
}
