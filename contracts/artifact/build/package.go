package build

import (
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// PackageDir packages the chart directory dir as `helm package` does
// (Helm's loader, so .helmignore applies; chartutil.Save's layout), with
// every file's mtime set to modTime (the Unix epoch when zero), so the same
// sources always give the same bytes. It returns the loaded chart and the
// archive. Used to publish library charts such as cozy-lib, whose vendored
// copies in catalogs are compared byte for byte.
func PackageDir(dir string, modTime time.Time) (*chart.Chart, []byte, error) {
	c, err := loader.LoadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	if modTime.IsZero() {
		modTime = time.Unix(0, 0)
	}
	data, err := archive(c, modTime.UTC().Truncate(time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	return c, data, nil
}
