package localcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

// One control plane, with helm-controller and the registry, for the package.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{HelmController: true, Registry: true}, &env))
}

const wantVersion = "v1.37.2"

func TestServerReportsPinnedVersion(t *testing.T) {
	testenv.Need(t, env)
	v, err := env.Clientset.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != wantVersion || v.Major != "1" || v.Minor != "37" {
		t.Errorf("discovery reports %s (major %q minor %q), want %s", v.GitVersion, v.Major, v.Minor, wantVersion)
	}
}

func TestKubectlVersion(t *testing.T) {
	testenv.Need(t, env)
	kubectl := localcp.DefaultLayout().Binary("kubectl")
	out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "version", "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl version: %v\n%s", err, out)
	}
	var got struct {
		ClientVersion struct{ GitVersion string } `json:"clientVersion"`
		ServerVersion struct{ GitVersion string } `json:"serverVersion"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("kubectl version -o json: %v\n%s", err, out)
	}
	if got.ClientVersion.GitVersion != wantVersion || got.ServerVersion.GitVersion != wantVersion {
		t.Errorf("kubectl version: client %s, server %s; want both %s", got.ClientVersion.GitVersion, got.ServerVersion.GitVersion, wantVersion)
	}
}

// The garbage collector of kube-controller-manager deletes an object whose
// only owner is gone.
func TestGarbageCollection(t *testing.T) {
	testenv.Need(t, env)
	ctx := context.Background()
	cms := env.Clientset.CoreV1().ConfigMaps("default")
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gc-owner-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "gc-owned-",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cms.Get(ctx, owned.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("owned ConfigMap %s was not garbage collected after its owner was deleted: %v", owned.Name, err)
	}
}

// The namespace controller empties a deleted namespace and removes it.
func TestNamespaceDeletionFinishes(t *testing.T) {
	testenv.Need(t, env)
	ctx := context.Background()
	ns, err := env.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ns-delete-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		if _, err := env.Clientset.CoreV1().ConfigMaps(ns.Name).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Clientset.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *corev1.Namespace
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := env.Clientset.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		last = got
		return false, nil
	})
	if err != nil {
		t.Fatalf("namespace %s did not finish deleting: %v (last status %+v)", ns.Name, err, last.Status)
	}
}

// The real helm-controller installs a chart that an ExternalArtifact points
// at. Nothing runs source-controller here: the test writes the
// ExternalArtifact's status itself, as our operator will.
func TestHelmControllerInstallsExternalArtifact(t *testing.T) {
	testenv.Need(t, env)
	if err := localcp.Smoke(context.Background(), env.Config, testWriter{t}, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
}

func TestRegistryServesV2(t *testing.T) {
	testenv.Need(t, env)
	resp, err := http.Get("http://" + env.RegistryHost() + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("registry /v2/ answered %d", resp.StatusCode)
	}
}

func TestStatusReportsEveryComponentHealthy(t *testing.T) {
	testenv.Need(t, env)
	rows, err := localcp.Status(context.Background(), env.Dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"etcd", "kube-apiserver", "kube-controller-manager", "helm-controller", "registry"}
	if len(rows) != len(want) {
		t.Fatalf("status has %d rows, want %v: %+v", len(rows), want, rows)
	}
	for i, r := range rows {
		if r.Name != want[i] || !r.Running || !r.Healthy {
			t.Errorf("row %d = %+v, want %s running and healthy", i, r, want[i])
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// ClusterRole aggregation runs: a ClusterRole labelled for the built-in
// "view" role extends it, as a catalog's aggregated roles extend the
// roles that select them.
func TestClusterRoleAggregation(t *testing.T) {
	testenv.Need(t, env)
	ctx := context.Background()
	roles := env.Clientset.RbacV1().ClusterRoles()
	extra, err := roles.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "aggregated-", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"example.cozystack.io"}, Resources: []string{"widgets"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = roles.Delete(context.Background(), extra.Name, metav1.DeleteOptions{}) })
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		view, err := roles.Get(ctx, "view", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, r := range view.Rules {
			if len(r.APIGroups) == 1 && r.APIGroups[0] == "example.cozystack.io" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the rules of %s never reached ClusterRole view: %v", extra.Name, err)
	}
}
