package main

import (
	"fmt"
	"io"

	"cozystack.io/contracts/artifact"
)

// result is what build and push print: with -o json|yaml all of it, as a
// table the reference and the digest.
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

// print writes r in format; the table is "<verb> <reference>" and the
// digest.
func (r result) print(w io.Writer, format output, verb string) error {
	return format.write(w, r, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s %s\nDigest: %s\n", verb, r.Reference, r.Digest)
		return err
	})
}
