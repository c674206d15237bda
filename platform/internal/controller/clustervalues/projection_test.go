package clustervalues_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/crds"
	"cozystack.io/platform/internal/controller"
	"cozystack.io/sdk/localcp"
)

// TestProjectsIntoTenantNamespaces: every tenant namespace gets the
// ConfigMap, valid against the K2 schema; other namespaces are untouched;
// status, metrics and events say so; and nothing is written again when
// nothing changed, even across a restart.
func TestProjectsIntoTenantNamespaces(t *testing.T) {
	need(t)
	var probes string
	ctl := startController(t, func(o *controller.Options) {
		probes = freeAddr(t)
		o.HealthProbeBindAddress = probes
	})
	ctx := testContext(t)
	eventually(t, 30*time.Second, "healthz and readyz", func() error {
		for _, path := range []string{"/healthz", "/readyz"} {
			resp, err := http.Get("http://" + probes + path)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET %s: %s", path, resp.Status)
			}
		}
		return nil
	})
	createClusterValues(t, spec())
	tenants := tenantNamespaces(t, "proj", 3)
	plain := createNamespace(t, "plain", false, nil)
	cv := getClusterValues(t)

	eventually(t, 30*time.Second, "projected into 3 namespaces", func() error {
		for _, ns := range tenants {
			if err := projected(ctx, cv, ns); err != nil {
				return err
			}
		}
		return statusIs(ctx, cv.Generation, 3, 3, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})
	if _, err := getConfigMap(ctx, plain.Name); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s without the tenant label got a ConfigMap (err %v)", plain.Name, err)
	}
	eventually(t, 10*time.Second, "metrics", func() error {
		return ctl.metricsAre(map[string]float64{
			"cozystack_cluster_values_namespaces_total":        3,
			"cozystack_cluster_values_namespaces_projected":    3,
			"cozystack_cluster_values_namespaces_invalid":      0,
			"cozystack_cluster_values_generation_lag":          0,
			"cozystack_cluster_values_generation":              float64(cv.Generation),
			`cozystack_cluster_values_source{state="valid"}`:   1,
			`cozystack_cluster_values_source{state="missing"}`: 0,
		})
	})
	eventually(t, 10*time.Second, "a Projected event", func() error {
		_, err := eventFor(ctx, "default", v1alpha1.ClusterValuesName, v1alpha1.ReasonProjected)
		return err
	})

	// Nothing changed: touching every namespace re-reconciles it without
	// a write. A new namespace, touched last, is the positive control.
	versions := resourceVersions(t, tenants)
	before := ctl.writes(t, "ConfigMap")
	for _, ns := range tenants {
		patchNamespace(t, ns.Name, func(ns *corev1.Namespace) { ns.Annotations["example.org/touched"] = "1" })
	}
	late := createNamespace(t, "proj-late", true, nil)
	eventually(t, 30*time.Second, "the new namespace projected", func() error { return projected(ctx, cv, late) })
	if after := ctl.writes(t, "ConfigMap"); after-before != 1 {
		t.Errorf("%v ConfigMap writes, want 1 (the new namespace's create)", after-before)
	}
	assertVersions(t, tenants, versions)

	// A restart re-reconciles every namespace from scratch: still no write.
	// The counter belongs to the process, not the manager, and a new
	// namespace created after the restart is again the positive control.
	tenants = append(tenants, late)
	versions = resourceVersions(t, tenants)
	ctl.stop(t)
	ctl = startController(t, nil)
	later := createNamespace(t, "proj-later", true, nil)
	eventually(t, 30*time.Second, "a namespace created after the restart projected", func() error { return projected(ctx, cv, later) })
	time.Sleep(500 * time.Millisecond) // let the last queued namespaces reconcile
	if n := ctl.writes(t, "ConfigMap") - before; n != 2 {
		t.Errorf("%v ConfigMap writes since the first check, want 2 (the two new namespaces' creates)", n)
	}
	assertVersions(t, tenants, versions)
}

func resourceVersions(t *testing.T, nss []*corev1.Namespace) map[string]string {
	t.Helper()
	rv := map[string]string{}
	for _, ns := range nss {
		cm, err := getConfigMap(testContext(t), ns.Name)
		if err != nil {
			t.Fatal(err)
		}
		rv[ns.Name] = cm.ResourceVersion
	}
	return rv
}

func assertVersions(t *testing.T, nss []*corev1.Namespace, want map[string]string) {
	t.Helper()
	for name, rv := range resourceVersions(t, nss) {
		if rv != want[name] {
			t.Errorf("ConfigMap in %s was written: resourceVersion %s -> %s", name, want[name], rv)
		}
	}
}

// TestRestoresHandEditsAndDeletions: the controller owns the ConfigMap.
func TestRestoresHandEditsAndDeletions(t *testing.T) {
	need(t)
	startController(t, nil)
	ctx := testContext(t)
	createClusterValues(t, spec())
	ns := createNamespace(t, "edit", true, nil)
	cv := getClusterValues(t)
	eventually(t, 30*time.Second, "projected", func() error { return projected(ctx, cv, ns) })

	edit := func(what string, change func(cm *corev1.ConfigMap)) {
		t.Helper()
		cm, err := getConfigMap(ctx, ns.Name)
		if err != nil {
			t.Fatal(err)
		}
		change(cm)
		if err := c.Update(ctx, cm); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		eventually(t, 30*time.Second, what+" restored", func() error { return projected(ctx, cv, ns) })
	}
	edit("edited values", func(cm *corev1.ConfigMap) {
		cm.Data[v1alpha1.ValuesKey] = "_cluster: {root-host: evil.example}\n_namespace: {host: x}\n"
		cm.Data["extra"] = "x"
	})
	edit("edited generation annotation", func(cm *corev1.ConfigMap) { cm.Annotations[v1alpha1.AnnotationGeneration] = "99" })
	edit("removed Flux watch label", func(cm *corev1.ConfigMap) { delete(cm.Labels, v1alpha1.LabelFluxWatch) })
	// Without the managed-by label the cache no longer holds it: the
	// controller must still find and adopt it.
	edit("removed managed-by label", func(cm *corev1.ConfigMap) { delete(cm.Labels, v1alpha1.LabelManagedBy) })

	cm, err := getConfigMap(ctx, ns.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "deleted ConfigMap recreated", func() error {
		got, err := getConfigMap(ctx, ns.Name)
		if err != nil {
			return err
		}
		if got.UID == cm.UID {
			return errors.New("still the old object")
		}
		return projected(ctx, cv, ns)
	})
}

// TestFollowsChanges: a spec change is written once per namespace; a new
// namespace and a changed namespace label are projected.
func TestFollowsChanges(t *testing.T) {
	need(t)
	ctl := startController(t, nil)
	ctx := testContext(t)
	createClusterValues(t, spec())
	tenants := tenantNamespaces(t, "change", 2)
	cv := getClusterValues(t)
	eventually(t, 30*time.Second, "generation 1 projected", func() error {
		return statusIs(ctx, cv.Generation, 2, 2, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})

	before := ctl.writes(t, "ConfigMap")
	cv = updateSpec(t, func(s *v1alpha1.ClusterValuesSpec) {
		s.RootHost = "example.net"
		s.Resources.CPUAllocationRatio = "4"
	})
	eventually(t, 30*time.Second, "generation 2 projected", func() error {
		for _, ns := range tenants {
			if err := projected(ctx, cv, ns); err != nil {
				return err
			}
		}
		return statusIs(ctx, cv.Generation, 2, 2, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})
	time.Sleep(500 * time.Millisecond) // a duplicate write would show by now
	if n := ctl.writes(t, "ConfigMap") - before; n != 2 {
		t.Errorf("%v ConfigMap writes for one change in 2 namespaces, want 2", n)
	}

	fresh := createNamespace(t, "change-new", true, nil)
	eventually(t, 30*time.Second, "a new namespace projected", func() error { return projected(ctx, cv, fresh) })

	patchNamespace(t, tenants[0].Name, func(ns *corev1.Namespace) {
		ns.Labels[v1alpha1.LabelEtcd] = tenants[0].Name
		ns.Annotations[v1alpha1.LabelHost] = "a-very-long-tenant-name-that-does-not-fit-into-a-label." + tenants[0].Name + ".example.net"
	})
	changed := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(tenants[0]), changed); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "changed namespace labels projected", func() error { return projected(ctx, cv, changed) })
	// The status is computed after the writes (throttled, StatusInterval):
	// wait for it rather than read it once. A one-shot read here flaked
	// when the machine was loaded (CI, stop 9).
	eventually(t, 30*time.Second, "status counts the new namespace", func() error {
		return statusIs(ctx, cv.Generation, 3, 3, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})
	cm, err := getConfigMap(ctx, changed.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Annotations[v1alpha1.AnnotationGeneration]; got != strconv.FormatInt(cv.Generation, 10) {
		t.Errorf("generation annotation %q after a namespace change, want %d", got, cv.Generation)
	}
}

// TestLagAndPartialProjection: the status tells which generation it
// describes and how many namespaces carry it; a stopped controller leaves
// it at the previous state, a restarted one converges; a namespace that
// cannot be written or has no host keeps Projected False, named, with the
// lag in the metrics.
func TestLagAndPartialProjection(t *testing.T) {
	need(t)
	ctl := startController(t, nil)
	ctx := testContext(t)
	createClusterValues(t, spec())
	tenants := tenantNamespaces(t, "lag", 2)
	cv1 := getClusterValues(t)
	eventually(t, 30*time.Second, "generation 1 projected", func() error {
		return statusIs(ctx, cv1.Generation, 2, 2, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})

	// Controller down: a new generation and a new namespace go unseen.
	ctl.stop(t)
	cv2 := updateSpec(t, func(s *v1alpha1.ClusterValuesSpec) { s.RootHost = "example.net" })
	late := createNamespace(t, "lag-late", true, nil)
	time.Sleep(300 * time.Millisecond)
	if err := statusIs(ctx, cv1.Generation, 2, 2, metav1.ConditionTrue, v1alpha1.ReasonProjected); err != nil {
		t.Errorf("with the controller down the status must still describe generation %d: %v", cv1.Generation, err)
	}
	if _, err := getConfigMap(ctx, late.Name); !apierrors.IsNotFound(err) {
		t.Errorf("a namespace created while the controller is down has a ConfigMap (err %v)", err)
	}
	ctl = startController(t, nil)
	eventually(t, 30*time.Second, "converged after restart", func() error {
		for _, ns := range append(tenants, late) {
			if err := projected(ctx, cv2, ns); err != nil {
				return err
			}
		}
		return statusIs(ctx, cv2.Generation, 3, 3, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})

	// A namespace where writes fail: a ResourceQuota allowing no
	// ConfigMaps. kube-controller-manager's resourcequota controller
	// writes its status (admission enforces status.hard against
	// status.used).
	blocked := createNamespace(t, "lag-quota", false, nil)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-configmaps", Namespace: blocked.Name},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resourceZero()}},
	}
	if err := c.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the quota enforced", func() error {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: blocked.Name}}
		if err := c.Create(ctx, probe, client.DryRunAll); !apierrors.IsForbidden(err) {
			return fmt.Errorf("dry-run create of a ConfigMap: %v, want Forbidden", err)
		}
		return nil
	})
	patchNamespace(t, blocked.Name, func(ns *corev1.Namespace) {
		ns.Labels[v1alpha1.LabelTenant] = "lag-quota"
		ns.Labels[v1alpha1.LabelHost] = "quota.example.net"
	})
	eventually(t, 30*time.Second, "Projected=False naming the blocked namespace", func() error {
		if err := statusIs(ctx, cv2.Generation, 4, 3, metav1.ConditionFalse, v1alpha1.ReasonWriteFailed); err != nil {
			return err
		}
		return conditionMentions(ctx, v1alpha1.ConditionStalled, metav1.ConditionTrue, blocked.Name)
	})
	eventually(t, 10*time.Second, "lag in the metrics", func() error {
		return ctl.metricsAre(map[string]float64{
			"cozystack_cluster_values_namespaces_total":     4,
			"cozystack_cluster_values_namespaces_projected": 3,
			"cozystack_cluster_values_generation_lag":       float64(cv2.Generation), // no ConfigMap: generation 0
		})
	})
	eventually(t, 10*time.Second, "a WriteFailed event", func() error {
		_, err := eventFor(ctx, "default", v1alpha1.ClusterValuesName, v1alpha1.ReasonWriteFailed)
		return err
	})
	if err := c.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "converged once the quota is gone", func() error {
		if err := statusIs(ctx, cv2.Generation, 4, 4, metav1.ConditionTrue, v1alpha1.ReasonProjected); err != nil {
			return err
		}
		return conditionAbsent(ctx, v1alpha1.ConditionStalled)
	})

	// A tenant namespace without a host is never written: charts must not
	// render an empty host.
	nohost := createNamespace(t, "lag-nohost", true, map[string]string{v1alpha1.LabelHost: ""})
	eventually(t, 30*time.Second, "Projected=False naming the namespace without host", func() error {
		if err := statusIs(ctx, cv2.Generation, 5, 4, metav1.ConditionFalse, v1alpha1.ReasonInvalidNamespaceValues); err != nil {
			return err
		}
		if err := conditionMentions(ctx, v1alpha1.ConditionProjected, metav1.ConditionFalse, nohost.Name+": the namespace has no host"); err != nil {
			return err
		}
		return ctl.metricsAre(map[string]float64{"cozystack_cluster_values_namespaces_invalid": 1})
	})
	if _, err := getConfigMap(ctx, nohost.Name); !apierrors.IsNotFound(err) {
		t.Errorf("a namespace without host got a ConfigMap (err %v)", err)
	}
	patchNamespace(t, nohost.Name, func(ns *corev1.Namespace) { ns.Labels[v1alpha1.LabelHost] = "nohost.example.net" })
	eventually(t, 30*time.Second, "converged once the host is set", func() error {
		return statusIs(ctx, cv2.Generation, 5, 5, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})
}

// TestMissingAndInvalidSource: without a valid ClusterValues nothing is
// written, and it shows.
func TestMissingAndInvalidSource(t *testing.T) {
	need(t)
	ctl := startController(t, nil)
	ctx := testContext(t)
	ns := createNamespace(t, "nosource", true, nil)

	eventually(t, 30*time.Second, "the missing source in the metrics", func() error {
		return ctl.metricsAre(map[string]float64{
			`cozystack_cluster_values_source{state="missing"}`: 1,
			`cozystack_cluster_values_source{state="valid"}`:   0,
			"cozystack_cluster_values_namespaces_total":        1,
			"cozystack_cluster_values_namespaces_projected":    0,
		})
	})
	if _, err := getConfigMap(ctx, ns.Name); !apierrors.IsNotFound(err) {
		t.Fatalf("a ConfigMap was written without a source (err %v)", err)
	}

	// An object stored under an older, looser schema: the API server no
	// longer admits it, but it exists. It must not be projected.
	storeInvalidClusterValues(t)
	eventually(t, 30*time.Second, "InvalidSpec", func() error {
		cv := getClusterValues(t)
		if err := statusIs(ctx, cv.Generation, 1, 0, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec); err != nil {
			return err
		}
		if err := conditionMentions(ctx, v1alpha1.ConditionStalled, metav1.ConditionTrue, "root-host"); err != nil {
			return err
		}
		return ctl.metricsAre(map[string]float64{`cozystack_cluster_values_source{state="invalid"}`: 1})
	})
	eventually(t, 10*time.Second, "an InvalidSpec event", func() error {
		_, err := eventFor(ctx, "default", v1alpha1.ClusterValuesName, v1alpha1.ReasonInvalidSpec)
		return err
	})
	if _, err := getConfigMap(ctx, ns.Name); !apierrors.IsNotFound(err) {
		t.Fatalf("a ConfigMap was written from an invalid source (err %v)", err)
	}

	cv := updateSpec(t, func(s *v1alpha1.ClusterValuesSpec) { s.RootHost = "example.org" })
	eventually(t, 30*time.Second, "projected once fixed", func() error {
		if err := projected(ctx, cv, ns); err != nil {
			return err
		}
		if err := conditionAbsent(ctx, v1alpha1.ConditionStalled); err != nil {
			return err
		}
		return statusIs(ctx, cv.Generation, 1, 1, metav1.ConditionTrue, v1alpha1.ReasonProjected)
	})

	// Deleting the source leaves the last good values in place.
	deleteClusterValues(t)
	eventually(t, 30*time.Second, "the missing source in the metrics", func() error {
		return ctl.metricsAre(map[string]float64{`cozystack_cluster_values_source{state="missing"}`: 1})
	})
	if err := projected(ctx, cv, ns); err != nil {
		t.Errorf("deleting ClusterValues changed the projected values: %v", err)
	}
}

func resourceZero() resource.Quantity { return resource.MustParse("0") }

func containsString(s, sub string) bool { return strings.Contains(s, sub) }

// storeInvalidClusterValues stores a ClusterValues with an empty root
// host the way an upgrade from a looser schema would leave one: it
// installs a CRD without the rule, creates the object, and reinstalls the
// real CRD.
func storeInvalidClusterValues(t *testing.T) {
	t.Helper()
	ctx := testContext(t)
	strict, err := crds.ClusterValues()
	if err != nil {
		t.Fatal(err)
	}
	loose := strict.DeepCopy()
	root := loose.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	host := root.Properties["rootHost"]
	host.MinLength, host.Pattern = nil, ""
	root.Properties["rootHost"] = host
	loose.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = root
	if err := localcp.ApplyCRDs(ctx, env.Config, loose); err != nil {
		t.Fatalf("install the loose CRD: %v", err)
	}
	t.Cleanup(func() {
		if err := localcp.ApplyCRDs(context.Background(), env.Config, strict); err != nil {
			t.Errorf("reinstall the CRD: %v", err)
		}
	})
	s := spec()
	s.RootHost = ""
	// The API server may serve the old schema for a moment after the
	// update.
	eventually(t, 10*time.Second, "an invalid ClusterValues stored", func() error {
		cv := &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterValuesName}, Spec: s}
		return c.Create(ctx, cv)
	})
	t.Cleanup(func() { deleteClusterValues(t) })
	if err := localcp.ApplyCRDs(ctx, env.Config, strict); err != nil {
		t.Fatalf("reinstall the CRD: %v", err)
	}
	// The real schema refuses it now: the object is what an upgrade leaves.
	eventually(t, 10*time.Second, "the real schema back", func() error {
		probe := &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: s}
		err := c.Create(ctx, probe, client.DryRunAll)
		if apierrors.IsInvalid(err) {
			return nil
		}
		return fmt.Errorf("dry-run create of an empty root host: %v", err)
	})
}

func conditionMentions(ctx context.Context, typ string, status metav1.ConditionStatus, fragment string) error {
	cv := &v1alpha1.ClusterValues{}
	if err := c.Get(ctx, client.ObjectKey{Name: v1alpha1.ClusterValuesName}, cv); err != nil {
		return err
	}
	for _, cond := range cv.Status.Conditions {
		if cond.Type == typ {
			if cond.Status != status || !containsString(cond.Message, fragment) {
				return fmt.Errorf("%s=%s %q, want %s mentioning %q", typ, cond.Status, cond.Message, status, fragment)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s condition in %s", typ, conditionsString(cv.Status.Conditions))
}

func conditionAbsent(ctx context.Context, typ string) error {
	cv := &v1alpha1.ClusterValues{}
	if err := c.Get(ctx, client.ObjectKey{Name: v1alpha1.ClusterValuesName}, cv); err != nil {
		return err
	}
	for _, cond := range cv.Status.Conditions {
		if cond.Type == typ {
			return fmt.Errorf("%s is still present: %s %q", typ, cond.Status, cond.Message)
		}
	}
	return nil
}
