package clustervalues

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Source states, the values of the label "state" of metricSource.
const (
	sourceMissing = "missing"
	sourceInvalid = "invalid"
	sourceValid   = "valid"
)

// The metrics of the projection, registered with controller-runtime's
// registry (served on the manager's metrics endpoint). Gauges describe the
// last status computation; counters count since the process started.
var (
	metricSource = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cozystack_cluster_values_source",
		Help: "1 for the current state of the ClusterValues source (missing, invalid or valid), 0 for the others.",
	}, []string{"state"})
	metricGeneration = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cozystack_cluster_values_generation",
		Help: "metadata.generation of the ClusterValues source (0 when missing).",
	})
	metricNamespacesTotal = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cozystack_cluster_values_namespaces_total",
		Help: "Tenant namespaces (labelled namespace.cozystack.io/tenant).",
	})
	metricNamespacesProjected = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cozystack_cluster_values_namespaces_projected",
		Help: "Tenant namespaces whose values objects carry the current generation of ClusterValues.",
	})
	metricNamespacesInvalid = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cozystack_cluster_values_namespaces_invalid",
		Help: "Tenant namespaces whose _namespace values are invalid (e.g. no host), so nothing is written there.",
	})
	metricGenerationLag = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cozystack_cluster_values_generation_lag",
		Help: "Current generation of ClusterValues minus the oldest generation a tenant namespace carries (a namespace with no values object counts as generation 0); 0 when every namespace is current.",
	})
	metricWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cozystack_cluster_values_writes_total",
		Help: "Writes of values objects, by kind (ConfigMap, Secret) and operation (create, update).",
	}, []string{"kind", "operation"})
	metricWriteErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cozystack_cluster_values_write_errors_total",
		Help: "Failed writes of values objects, by kind.",
	}, []string{"kind"})
	metricReleasesSwitched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cozystack_cluster_values_releases_switched_total",
		Help: "HelmReleases whose valuesFrom was moved to another values source, by the kind it now reads (ConfigMap, Secret).",
	}, []string{"to"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(metricSource, metricGeneration, metricNamespacesTotal,
		metricNamespacesProjected, metricNamespacesInvalid, metricGenerationLag,
		metricWrites, metricWriteErrors, metricReleasesSwitched)
}

// setSourceState sets the one-hot source gauge.
func setSourceState(state string) {
	for _, s := range []string{sourceMissing, sourceInvalid, sourceValid} {
		v := 0.0
		if s == state {
			v = 1
		}
		metricSource.WithLabelValues(s).Set(v)
	}
}
