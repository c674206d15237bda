package charttest

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"

	"cozystack.io/sdk/localcp"
)

// ChartCRDs decodes the CRDs a chart directory ships in crds/*.yaml, in
// file-name order: none, and no error, when it has no crds/ (as a
// mirror-sourced operator chart before `make crds MIRROR=`).
func ChartCRDs(chartDir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(chartDir, "crds", "*.yaml"))
	if err != nil {
		return nil, err
	}
	return localcp.ReadCRDFiles(files...)
}

// SelectCRDs returns, in order, the CRDs of charts whose names upstream
// lacks, each name once (the first chart's wins).
func SelectCRDs(upstream, charts []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
	have := map[string]bool{}
	for _, c := range upstream {
		have[c.Name] = true
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, c := range charts {
		if !have[c.Name] {
			have[c.Name] = true
			out = append(out, c)
		}
	}
	return out
}

// InstallCRDs prepares a control plane for a dry-run of the charts'
// objects. It installs the upstream CRD files (test fixtures, the reference
// the objects are checked against) and then, from the crds/ of
// chartDirs, the CRDs upstream lacks (SelectCRDs): kinds the fixtures do
// not cover are checked against the CRDs the catalog ships. It waits until
// all are Established and returns the sorted names of those installed from
// the charts.
func InstallCRDs(ctx context.Context, cfg *rest.Config, upstream []string, chartDirs []string) ([]string, error) {
	up, err := localcp.ReadCRDFiles(upstream...)
	if err != nil {
		return nil, err
	}
	if err := localcp.ApplyCRDs(ctx, cfg, up...); err != nil {
		return nil, fmt.Errorf("install the upstream CRDs: %w", err)
	}
	var charts []*apiextensionsv1.CustomResourceDefinition
	for _, dir := range chartDirs {
		crds, err := ChartCRDs(dir)
		if err != nil {
			return nil, err
		}
		charts = append(charts, crds...)
	}
	extra := SelectCRDs(up, charts)
	if err := localcp.ApplyCRDs(ctx, cfg, extra...); err != nil {
		return nil, fmt.Errorf("install the charts' CRDs: %w", err)
	}
	names := make([]string, len(extra))
	for i, c := range extra {
		names[i] = c.Name
	}
	slices.Sort(names)
	return names, nil
}
