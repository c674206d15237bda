package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"path"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// archive serializes a loaded chart as a chart archive with exactly the
// layout and content of helm.sh/helm/v3/pkg/chartutil.Save (v3.22.0), with
// one difference: every entry's mtime is modTime instead of the time of
// the call, so that the same chart always gives the same bytes (and the
// same digest) with the same Go toolchain.
func archive(c *chart.Chart, modTime time.Time) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("chart validation: %w", err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Comment = "Helm" // as Helm; the gzip header's ModTime stays zero
	tw := tar.NewWriter(zw)
	if err := writeChart(tw, c, "", modTime); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeChart follows chartutil's writeTarContents.
func writeChart(tw *tar.Writer, c *chart.Chart, prefix string, modTime time.Time) error {
	if c.Name() != path.Base(c.Name()) {
		return fmt.Errorf("chart name %q: a name, not a path", c.Name())
	}
	base := path.Join(prefix, c.Name())

	// A v1 chart keeps its dependencies in requirements.yaml, not in
	// Chart.yaml; Helm drops them from the serialized Chart.yaml.
	md := *c.Metadata
	if md.APIVersion == chart.APIVersionV1 {
		md.Dependencies = nil
	}
	cdata, err := yaml.Marshal(&md)
	if err != nil {
		return err
	}
	if err := writeFile(tw, path.Join(base, "Chart.yaml"), cdata, modTime); err != nil {
		return err
	}
	if md.APIVersion == chart.APIVersionV2 && c.Lock != nil {
		ldata, err := yaml.Marshal(c.Lock)
		if err != nil {
			return err
		}
		if err := writeFile(tw, path.Join(base, "Chart.lock"), ldata, modTime); err != nil {
			return err
		}
	}
	for _, f := range c.Raw {
		if f.Name == "values.yaml" {
			if err := writeFile(tw, path.Join(base, "values.yaml"), f.Data, modTime); err != nil {
				return err
			}
		}
	}
	if c.Schema != nil {
		if !json.Valid(c.Schema) {
			return fmt.Errorf("chart %s: values.schema.json is not valid JSON", c.Name())
		}
		if err := writeFile(tw, path.Join(base, "values.schema.json"), c.Schema, modTime); err != nil {
			return err
		}
	}
	for _, f := range c.Templates {
		if err := writeFile(tw, path.Join(base, f.Name), f.Data, modTime); err != nil {
			return err
		}
	}
	for _, f := range c.Files {
		if err := writeFile(tw, path.Join(base, f.Name), f.Data, modTime); err != nil {
			return err
		}
	}
	for _, dep := range c.Dependencies() {
		if err := writeChart(tw, dep, path.Join(base, "charts"), modTime); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(tw *tar.Writer, name string, body []byte, modTime time.Time) error {
	hd := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: modTime, Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hd); err != nil {
		return err
	}
	_, err := tw.Write(body)
	return err
}
