package charts_test

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"cozystack.io/sdk/charttest"
)

// Every pod template an application chart renders, in every value case,
// passes Pod Security "restricted" (latest), which tenant namespaces
// enforce by default (the Tenant chart's labels, contract K2
// tenant-pod-security). Only the workloads the charts render are checked:
// pods that operators create from the charts' custom resources are not.
func TestPodSecurityRestricted(t *testing.T) {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	checked := 0
	for _, tc := range cases(t) {
		c, err := charttest.Load(filepath.Join(".", tc.App))
		if err != nil {
			t.Fatal(err)
		}
		out, err := charttest.Render(c, tc.App+"-x", charttest.WithK2(tc.Values))
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.App, tc.Name, err)
		}
		objs, err := charttest.Objects(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			tmpl, ok := podTemplate(o)
			if !ok {
				continue
			}
			checked++
			var pt corev1.PodTemplateSpec
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &pt); err != nil {
				t.Fatal(err)
			}
			if r := policy.AggregateCheckResults(e.EvaluatePod(lv, &pt.ObjectMeta, &pt.Spec)); !r.Allowed {
				t.Errorf("%s/%s: %s %s fails Pod Security restricted: %s", tc.App, tc.Name, o.GetKind(), o.GetName(), r.ForbiddenDetail())
			}
		}
	}
	if checked == 0 {
		t.Fatal("no pod template checked")
	}
}

// podTemplate returns the pod template of a workload (or a Pod's own
// metadata and spec).
func podTemplate(o *unstructured.Unstructured) (map[string]any, bool) {
	path := map[string][]string{
		"Deployment": {"spec", "template"}, "StatefulSet": {"spec", "template"}, "DaemonSet": {"spec", "template"},
		"ReplicaSet": {"spec", "template"}, "Job": {"spec", "template"}, "CronJob": {"spec", "jobTemplate", "spec", "template"},
	}[o.GetKind()]
	if o.GetKind() == "Pod" {
		return map[string]any{"metadata": o.Object["metadata"], "spec": o.Object["spec"]}, true
	}
	if path == nil {
		return nil, false
	}
	m, ok, _ := unstructured.NestedMap(o.Object, path...)
	return m, ok
}
