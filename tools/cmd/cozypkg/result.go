package main

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/artifact"
)

// result is the summary -o json|yaml prints.
type result struct {
	// Reference is where the artifact now is: "<layout dir>:<tag>" or
	// "<host>/<repository>:<tag>".
	Reference string `json:"reference"`
	// Digest of the manifest.
	Digest string `json:"digest"`
	// Size is the bytes of the manifest, the config, the charts and the
	// definitions.
	Size    int64         `json:"size"`
	Catalog string        `json:"catalog"`
	Version string        `json:"version"`
	Charts  []chartResult `json:"charts"`
	// Definitions are the definitions layers (the files of
	// applicationdefinitions/), empty for a catalog without them.
	Definitions []definitionResult `json:"definitions"`
}

type definitionResult struct {
	Path   string `json:"path"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
	// Objects are the file's objects, "<kind>/<name>" in document order.
	Objects []string `json:"objects"`
}

type chartResult struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
	Size    int64  `json:"size"`
}

func newResult(reference string, a *artifact.Artifact) result {
	r := result{
		Reference:   reference,
		Digest:      a.Manifest.Digest.String(),
		Size:        a.Manifest.Size + a.Config.Size,
		Catalog:     a.Catalog.Name,
		Version:     a.Catalog.Version,
		Charts:      []chartResult{},
		Definitions: []definitionResult{},
	}
	for _, c := range a.Charts {
		r.Size += c.Descriptor.Size
		r.Charts = append(r.Charts, chartResult{Path: c.Path, Name: c.Name, Version: c.Version, Digest: c.Descriptor.Digest.String(), Size: c.Descriptor.Size})
	}
	for _, d := range a.Definitions {
		r.Size += d.Descriptor.Size
		objects := make([]string, 0, len(d.Objects))
		for _, o := range d.Objects {
			objects = append(objects, o.GetKind()+"/"+o.GetName())
		}
		r.Definitions = append(r.Definitions, definitionResult{Path: d.Path, Digest: d.Descriptor.Digest.String(), Size: d.Descriptor.Size, Objects: objects})
	}
	return r
}

// checkFormat rejects an unknown -o before any work is done.
func checkFormat(format string) error {
	switch format {
	case "", "text", "json", "yaml":
		return nil
	}
	return fmt.Errorf("-o %q: use json or yaml (or leave it out for text)", format)
}

// print writes r in format; text is "<verb> <reference>" and the digest.
func (r result) print(w io.Writer, format, verb string) error {
	switch format {
	case "json":
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(data))
		return err
	case "yaml":
		data, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	default:
		_, err := fmt.Fprintf(w, "%s %s\nDigest: %s\n", verb, r.Reference, r.Digest)
		return err
	}
}
