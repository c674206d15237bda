package apiserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/sdk/localcp"
)

// kubectl runs the workspace's kubectl (v1.37.2) against the test control
// plane and returns its combined output.
func kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(localcp.DefaultLayout().Binary("kubectl"), append([]string{"--kubeconfig", env.Kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("$ kubectl %s\n%s", strings.Join(args, " "), out)
	return string(out), err
}

// A tenant's everyday commands work on an application kind, as they would
// on any Kubernetes resource.
func TestKubectl(t *testing.T) {
	startServer(t)
	applyFixtureAD(t, "redis")
	waitDiscovered(t, "redises", 5*time.Second)
	ns := "e2e-kubectl"
	if _, err := env.Clientset.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	manifest := `apiVersion: apps.cozystack.io/v1alpha1
kind: Redis
metadata:
  name: cache
  namespace: ` + ns + `
spec:
  replicas: 3
`
	file := filepath.Join(t.TempDir(), "redis.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl(t, "", "apply", "--server-side", "-f", file); err != nil || !strings.Contains(out, "serverside-applied") {
		t.Fatalf("kubectl apply --server-side: %v", err)
	}
	out, err := kubectl(t, "", "get", "redises", "-n", ns)
	if err != nil {
		t.Fatalf("kubectl get: %v", err)
	}
	for _, col := range []string{"NAME", "READY", "STATUS", "VERSION", "AGE", "cache"} {
		if !strings.Contains(out, col) {
			t.Errorf("kubectl get output lacks %q", col)
		}
	}
	out, err = kubectl(t, "", "get", "redis", "cache", "-n", ns, "-o", "yaml")
	if err != nil || !strings.Contains(out, "replicas: 3") || !strings.Contains(out, "kind: Redis") {
		t.Errorf("kubectl get -o yaml: %v", err)
	}
	// OpenAPI per kind, built from its schema: kubectl explain.
	// kube-aggregator re-reads an aggregated server's OpenAPI v3 index once
	// a minute (an APIService update does not trigger it, unlike
	// discovery); the server publishes its group version from the start so
	// that the index never lacks it, and then explain works at once. The
	// generous deadline covers one refresh. A fresh cache dir keeps
	// kubectl's own cache out of it.
	var explained string
	cacheDir := t.TempDir()
	deadline := time.Now().Add(75 * time.Second)
	for {
		if explained, err = kubectl(t, "", "--cache-dir", cacheDir, "explain", "redises.spec.replicas"); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if err != nil || !strings.Contains(explained, "replicas") || !strings.Contains(explained, "integer") {
		t.Errorf("kubectl explain redises.spec.replicas: %v", err)
	}
	// Another manager that disagrees on a field conflicts, naming it.
	other := strings.Replace(manifest, "replicas: 3", "replicas: 5", 1)
	out, err = kubectl(t, other, "apply", "--server-side", "--field-manager", "someone-else", "-f", "-")
	if err == nil || !strings.Contains(out, `conflict with "kubectl"`) || !strings.Contains(out, ".spec.replicas") {
		t.Errorf("conflicting server-side apply: err=%v; want a conflict naming .spec.replicas", err)
	}
	if out, err := kubectl(t, "", "delete", "redis", "cache", "-n", ns); err != nil || !strings.Contains(out, "deleted") {
		t.Errorf("kubectl delete: %v", err)
	}
}
