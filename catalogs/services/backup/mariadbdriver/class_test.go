package mariadbdriver

import (
	"encoding/json"
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
const classRelease = "mariadb-backup-driver"

// renderChart renders charts/mariadb-backup-driver with backupClass (nil:
// the chart's own) over its values; the schema validates them as Helm
// does on install.
func renderChart(backupClass map[string]any) (map[string]string, error) {
	ch, err := charttest.Load(filepath.Join("..", "..", "charts", "mariadb-backup-driver"))
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

// The chart's BackupClass: for the catalog's MariaDB applications,
// strategy MariaDB, the chart's labels, and parameters the driver accepts,
// decoded by parse as ReconcileBackup calls it; for each variant of its
// values.
func TestChartBackupClass(t *testing.T) {
	s3 := map[string]any{
		"s3": map[string]any{
			"bucket":            "backups",
			"endpoint":          "s3.example.org:9000",
			"region":            "eu-west-1",
			"prefix":            "mariadb/{{ .Application }}",
			"credentialsSecret": "s3-creds",
			"tls":               true,
		},
		"compression":  "gzip",
		"maxRetention": "720h",
		"waitTimeout":  "20m",
	}
	const pvc = `{"persistentVolumeClaim":{"size":"10Gi"}}`
	for _, tc := range []struct {
		name        string
		backupClass map[string]any
		// class is the class's name; "" when none renders.
		class string
		// params are the rendered parameters, as JSON.
		params string
		// storage is the spec.storage the driver makes of them for the
		// Backup "b" of the application "db" in "tenant", as JSON.
		storage string
		// timeouts are the class's timeouts by field; the others are
		// unset (the CRD's defaults).
		timeouts map[string]string
	}{
		{name: "defaults", class: "mariadb", params: pvc,
			storage: `{"persistentVolumeClaim":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"10Gi"}}}}`},
		// The chart's default PVC is not merged in: the driver refuses
		// both targets at once.
		{name: "object store", backupClass: map[string]any{"parameters": s3}, class: "mariadb",
			params:  `{"compression":"gzip","maxRetention":"720h","s3":{"bucket":"backups","credentialsSecret":"s3-creds","endpoint":"s3.example.org:9000","prefix":"mariadb/{{ .Application }}","region":"eu-west-1","tls":true},"waitTimeout":"20m"}`,
			storage: `{"s3":{"accessKeyIdSecretKeyRef":{"key":"access-key-id","name":"creds"},"bucket":"backups","endpoint":"s3.example.org:9000","prefix":"mariadb/db/tenant/b","region":"eu-west-1","secretAccessKeySecretKeyRef":{"key":"secret-access-key","name":"creds"},"tls":{"enabled":true}}}`},
		{name: "no class", backupClass: map[string]any{"name": ""}},
		{name: "timeouts", backupClass: map[string]any{"runTimeout": "12h", "pendingTimeout": "5m"}, class: "mariadb", params: pvc,
			storage:  `{"persistentVolumeClaim":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"10Gi"}}}}`,
			timeouts: map[string]string{"runTimeout": "12h0m0s", "pendingTimeout": "5m0s"}},
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
				"app.kubernetes.io/name":       "mariadb-backup-driver",
				"app.kubernetes.io/instance":   classRelease,
				"app.kubernetes.io/managed-by": "Helm",
			}
			for k, v := range want {
				if c.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
				}
			}
			if len(c.Spec.Strategies) != 1 {
				t.Fatalf("strategies %+v, want one", c.Spec.Strategies)
			}
			s := c.Spec.Strategies[0]
			if s.ApplicationKind != (v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "MariaDB"}) || s.Strategy.Kind != StrategyKind {
				t.Errorf("strategy %s/%s: %s, want apps.cozystack.io/MariaDB: %s", s.APIGroup, s.Kind, s.Strategy.Kind, StrategyKind)
			}
			if got := rawOf(s.Strategy.Parameters); got != tc.params {
				t.Errorf("parameters %s, want %s", got, tc.params)
			}
			// As ReconcileBackup decodes them.
			run := &driver.BackupRun{Run: driver.Run{Strategy: s.Strategy}}
			var p Parameters
			if _, err := parse(&p, run.DecodeParameters); err != nil {
				t.Fatalf("the driver refuses the class's parameters: %v", err)
			}
			st, err := storage(&p, "tenant", "db", "nightly", "b", "creds")
			if err != nil {
				t.Fatalf("storage: %v", err)
			}
			if got, _ := json.Marshal(st); string(got) != tc.storage {
				t.Errorf("storage %s, want %s", got, tc.storage)
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
		{"unknown key", map[string]any{"parameter": map[string]any{"s3": map[string]any{}}}, "parameter"},
		{"not a duration", map[string]any{"runTimeout": "6 hours"}, "runTimeout"},
		{"not a name", map[string]any{"name": "MariaDB"}, "name"},
		{"another name (the rights name one)", map[string]any{"name": "mariadb.fast"}, "name"},
		{"parameters not an object", map[string]any{"parameters": "10Gi"}, "parameters"},
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
