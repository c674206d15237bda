package velerodriver

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
	"cozystack.io/sdk/charttest"
)

// classRelease is the release the class tests render the chart as.
const classRelease = "velero-backup-driver"

// renderChart renders charts/velero-backup-driver with backupClass (nil:
// the chart's own) over its values; the schema validates them as Helm
// does on install.
func renderChart(backupClass map[string]any) (map[string]string, error) {
	ch, err := charttest.Load(filepath.Join("..", "..", "charts", "velero-backup-driver"))
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	if backupClass != nil {
		values["backupClass"] = backupClass
	}
	return charttest.Render(ch, classRelease, charttest.WithK2(values))
}

// renderClasses renders the chart with backupClass and returns the
// BackupClasses it renders, decoded strictly (a field the type lacks
// fails the test), and the Deployment.
func renderClasses(t *testing.T, backupClass map[string]any) ([]*v1alpha1.BackupClass, *appsv1.Deployment) {
	t.Helper()
	out, err := renderChart(backupClass)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	objs, err := charttest.Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	var classes []*v1alpha1.BackupClass
	var deploy *appsv1.Deployment
	for _, u := range objs {
		switch u.GetKind() {
		case "BackupClass":
			if u.GetAPIVersion() != v1alpha1.GroupVersion.String() {
				t.Errorf("BackupClass apiVersion %s, want %s", u.GetAPIVersion(), v1alpha1.GroupVersion)
			}
			c := &v1alpha1.BackupClass{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, c, true); err != nil {
				t.Fatalf("the BackupClass does not decode strictly: %v", err)
			}
			classes = append(classes, c)
		case "Deployment":
			deploy = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, deploy, true); err != nil {
				t.Fatalf("the Deployment does not decode strictly: %v", err)
			}
		}
	}
	if deploy == nil {
		t.Fatal("the chart renders no Deployment")
	}
	return classes, deploy
}

// The chart's BackupClass: for exactly the application kinds the driver
// knows (releasePrefixes), strategy Velero with the same parameters for
// each, the chart's labels, and parameters the driver accepts, decoded by
// decodeParameters as ReconcileBackup calls it, which then selects the
// application's objects; for each variant of its values.
func TestChartBackupClass(t *testing.T) {
	full := map[string]any{
		"storageLocation":          "s3",
		"volumeSnapshotLocations":  []any{"linstor"},
		"snapshotVolumes":          true,
		"snapshotMoveData":         true,
		"defaultVolumesToFsBackup": false,
		"ttl":                      "720h",
		"startTimeout":             "45m",
		"restore":                  map[string]any{"existingResourcePolicy": "update"},
	}
	const defaults = `{"storageLocation":"default"}`
	for _, tc := range []struct {
		name        string
		backupClass map[string]any
		// class is the class's name; "" when none renders.
		class string
		// params are the rendered parameters, as JSON.
		params string
		// location is the storage location the driver reads from them.
		location string
		// timeouts are the class's timeouts by field; the others are
		// unset (the CRD's defaults).
		timeouts map[string]string
	}{
		{name: "defaults", class: "vm", params: defaults, location: "default"},
		{name: "object store", backupClass: map[string]any{"parameters": full}, class: "vm",
			params:   `{"defaultVolumesToFsBackup":false,"restore":{"existingResourcePolicy":"update"},"snapshotMoveData":true,"snapshotVolumes":true,"startTimeout":"45m","storageLocation":"s3","ttl":"720h","volumeSnapshotLocations":["linstor"]}`,
			location: "s3"},
		{name: "no class", backupClass: map[string]any{"name": ""}},
		{name: "timeouts", backupClass: map[string]any{"runTimeout": "24h", "driverWaitTimeout": "2h"}, class: "vm", params: defaults, location: "default",
			timeouts: map[string]string{"runTimeout": "24h0m0s", "driverWaitTimeout": "2h0m0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			classes, _ := renderClasses(t, tc.backupClass)
			if tc.class == "" {
				if len(classes) != 0 {
					t.Fatalf("the chart renders %d BackupClasses, want none", len(classes))
				}
				return
			}
			if len(classes) != 1 {
				t.Fatalf("the chart renders %d BackupClasses, want 1", len(classes))
			}
			c := classes[0]
			if c.Name != tc.class || c.Namespace != "" {
				t.Errorf("BackupClass %s/%s, want the cluster-scoped %s", c.Namespace, c.Name, tc.class)
			}
			want := map[string]string{
				"app.kubernetes.io/name":       "velero-backup-driver",
				"app.kubernetes.io/instance":   classRelease,
				"app.kubernetes.io/managed-by": "Helm",
			}
			for k, v := range want {
				if c.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
				}
			}
			var kinds []string
			for _, s := range c.Spec.Strategies {
				kinds = append(kinds, s.Kind)
				if s.APIGroup != "apps.cozystack.io" || s.Strategy.Kind != StrategyKind {
					t.Errorf("strategy %s/%s: %s, want apps.cozystack.io: %s", s.APIGroup, s.Kind, s.Strategy.Kind, StrategyKind)
				}
				if got := rawOf(s.Strategy.Parameters); got != tc.params {
					t.Errorf("%s parameters %s, want %s", s.Kind, got, tc.params)
				}
				// As ReconcileBackup decodes them.
				run := &driver.BackupRun{Run: driver.Run{Strategy: s.Strategy}}
				p, err := decodeParameters(run.Strategy)
				if err != nil {
					t.Fatalf("the driver refuses the %s parameters: %v", s.Kind, err)
				}
				if p.StorageLocation != tc.location {
					t.Errorf("%s storageLocation %q, want %q", s.Kind, p.StorageLocation, tc.location)
				}
				app := v1alpha1.ApplicationRef{ApplicationKind: s.ApplicationKind, Name: "web"}
				if _, err := selectors(app, nil, p); err != nil {
					t.Errorf("the driver cannot select a %s's objects: %v", s.Kind, err)
				}
			}
			slices.Sort(kinds)
			if served := slices.Sorted(maps.Keys(releasePrefixes)); !slices.Equal(kinds, served) {
				t.Errorf("the class's kinds %v, want those the driver knows, %v", kinds, served)
			}
			if got := timeoutsOf(c); !maps.Equal(got, tc.timeouts) {
				t.Errorf("timeouts %v, want %v", got, tc.timeouts)
			}
		})
	}
}

// Values the chart's schema refuses fail the render (as helm install),
// naming the key.
func TestChartBackupClassRefused(t *testing.T) {
	for _, tc := range []struct {
		name        string
		backupClass map[string]any
		says        string
	}{
		{"unknown key", map[string]any{"parameter": map[string]any{"storageLocation": "default"}}, "parameter"},
		{"not a duration", map[string]any{"runTimeout": "6 hours"}, "runTimeout"},
		{"not a name", map[string]any{"name": "VM"}, "name"},
		{"another name (the rights name one)", map[string]any{"name": "vm.fast"}, "name"},
		{"parameters not an object", map[string]any{"parameters": "default"}, "parameters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChart(tc.backupClass)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("render: %v, want an error naming %s", err, tc.says)
			}
		})
	}
}

// The driver container serves its probes (--health-probe-bind-address) on
// the port health, which both probes use, and keeps its restricted
// security context.
func TestChartProbes(t *testing.T) {
	_, d := renderClasses(t, nil)
	ctr := d.Spec.Template.Spec.Containers[0]
	if !slices.Contains(ctr.Args, "--health-probe-bind-address=:8081") {
		t.Errorf("args %v lack --health-probe-bind-address=:8081", ctr.Args)
	}
	if !slices.ContainsFunc(ctr.Ports, func(p corev1.ContainerPort) bool { return p.Name == "health" && p.ContainerPort == 8081 }) {
		t.Errorf("ports %+v lack health 8081", ctr.Ports)
	}
	for name, pr := range map[string]*corev1.Probe{"/healthz": ctr.LivenessProbe, "/readyz": ctr.ReadinessProbe} {
		if pr == nil || pr.HTTPGet == nil || pr.HTTPGet.Path != name || pr.HTTPGet.Port.String() != "health" || pr.PeriodSeconds == 0 {
			t.Errorf("probe of %s: %+v, want GET %s on port health with a period", name, pr, name)
		}
	}
	if ps := d.Spec.Template.Spec.SecurityContext; ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot {
		t.Errorf("pod securityContext %+v, want runAsNonRoot", ps)
	}
}

// timeoutsOf returns the timeouts a class sets, by field.
func timeoutsOf(c *v1alpha1.BackupClass) map[string]string {
	out := map[string]string{}
	for field, d := range map[string]*metav1.Duration{
		"pendingTimeout": c.Spec.PendingTimeout, "runTimeout": c.Spec.RunTimeout,
		"stallTimeout": c.Spec.StallTimeout, "driverWaitTimeout": c.Spec.DriverWaitTimeout,
	} {
		if d != nil {
			out[field] = d.Duration.String()
		}
	}
	return out
}

// rawOf is j's JSON, "null" for nil.
func rawOf(j *apiextensionsv1.JSON) string {
	if j == nil {
		return "null"
	}
	return string(j.Raw)
}
