package mainjob_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
	"cozystack.io/tools/internal/mainjob"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{HelmController: true, Registry: true}, &env))
}

// TestMainJob runs the main job as `make demo` does, on its own control
// plane with the real helm-controller and registry: cozystack-api,
// cozystack-controller and cozystack-operator run as processes built from
// this tree (as binaries, the way they are deployed), then the job
// publishes and installs the catalogs and creates a tenant and a Postgres,
// waiting for each to be Ready.
func TestMainJob(t *testing.T) {
	testenv.Need(t, env)
	root, ok := localcp.RepoRoot()
	if !ok {
		t.Fatal("run from inside the repository")
	}
	dir := t.TempDir()
	bin := func(pkg string) string {
		out := filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", out, "./"+pkg)
		cmd.Dir = root
		if data, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, data)
		}
		return out
	}
	port := func() string {
		p, err := localcp.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		return strconv.Itoa(p)
	}

	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := env.PKI().IssueServing(cert, key, "cozystack-api", "cozystack-api.cozy-system.svc", "localhost"); err != nil {
		t.Fatal(err)
	}
	apiPort := port()
	start(t, dir, "cozystack-api", "https://127.0.0.1:"+apiPort+"/readyz", bin("platform/cmd/cozystack-api"),
		"--kubeconfig", env.Kubeconfig, "--bind-address", "127.0.0.1", "--secure-port", apiPort,
		"--tls-cert-file", cert, "--tls-private-key-file", key, "--install-crds", "--apiservice", "v1alpha1.apps.cozystack.io",
		// cozystack-controller runs with the admin's kubeconfig here.
		"--restore-identity", localcp.AdminIdentity.User,
		"--register-local", "cozy-system/cozystack-api", "--register-ca-file", env.PKI().CACert())
	health := port()
	start(t, dir, "cozystack-controller", "http://127.0.0.1:"+health+"/readyz", bin("platform/cmd/cozystack-controller"),
		"--kubeconfig", env.Kubeconfig, "--install-crds", "--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:"+health)
	health = port()
	start(t, dir, "cozystack-operator", "http://127.0.0.1:"+health+"/readyz", bin("platform/cmd/cozystack-operator"),
		"--kubeconfig", env.Kubeconfig, "--install-crds", "--disable-wait", "--properties", "network.stableVMAddress",
		"--storage-dir", filepath.Join(dir, "operator"), "--artifact-bind-address", "127.0.0.1:"+port(),
		"--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:"+health)

	// The catalogs' backup drivers, which the job runs as their
	// ServiceAccounts once their charts are installed.
	bin("catalogs/services/cmd/cnpg-backup-driver")
	bin("catalogs/virtualization/cmd/velero-backup-driver")
	started := map[string]bool{}
	cfg := mainjob.Config{
		RepoRoot: root, Kube: env.Config, Registry: env.RegistryHost(), Timeout: 4 * time.Minute,
		BinDir: dir, WorkDir: dir,
		StartProcess: func(_ context.Context, name, binary string, args []string, healthURL string) error {
			if !started[name] {
				start(t, dir, name, healthURL, binary, args...)
				started[name] = true
			}
			return nil
		},
	}
	var out bytes.Buffer
	cfg.Out = &out
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	err := mainjob.Run(ctx, cfg)
	t.Logf("main job output:\n%s", out.String())
	if err != nil {
		for _, name := range []string{"cozystack-api", "cozystack-controller", "cozystack-operator", "cnpg-backup-driver", "velero-backup-driver"} {
			if data, rerr := os.ReadFile(filepath.Join(dir, name+".log")); rerr == nil {
				t.Logf("%s log (end):\n%s", name, data[max(0, len(data)-6000):])
			}
		}
		t.Fatal(err)
	}
	// A second run finds everything in place.
	cfg.Timeout = time.Minute
	if err := mainjob.Run(ctx, cfg); err != nil {
		t.Fatalf("second run: %v", err)
	}

	// The services catalog's Postgres AD, delivered in the artifact and
	// installed by the operator, carries a CEL rule cozystack-api
	// enforces: the storage class of existing volumes cannot change.
	pg := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "postgreses"})
	_, err = pg.Namespace(mainjob.TenantNS).Patch(ctx, mainjob.PostgresName, types.MergePatchType, []byte(`{"spec":{"storageClass":"other"}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "storageClass is immutable") {
		t.Errorf("changing the Postgres's spec.storageClass: %v, want 422 storageClass is immutable", err)
	}
}

// start runs a process until the test ends, logging to dir/<name>.log, and
// waits until healthURL answers 200 (https URLs: any certificate, the
// process's own).
func start(t *testing.T, dir, name, healthURL, binary string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = log.Close() })
	client := &http.Client{Timeout: 2 * time.Second, Transport: insecure()}
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := client.Get(healthURL)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("%s", resp.Status)
		}
		if time.Now().After(deadline) {
			data, _ := os.ReadFile(log.Name())
			t.Fatalf("%s never healthy at %s (%v); log:\n%s", name, healthURL, err, data)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
