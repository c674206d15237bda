package core_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/sdk/localcp"
)

// TestKubectlTenantSecrets: kubectl finds tenantsecrets through discovery
// (kube-apiserver's aggregated discovery of core.cozystack.io), prints the
// table's columns and the application of each, and -o json a
// TenantSecretList, as bob's use group (impersonated).
func TestKubectlTenantSecrets(t *testing.T) {
	start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	createApp(t, ctx, bob, "cache")
	mustCreate(t, ctx, secret(bob, prefix+"cache-credentials", prefix+"cache", nil))
	run := func(args ...string) string {
		t.Helper()
		args = append([]string{"--kubeconfig", env.Kubeconfig, "--cache-dir", t.TempDir(), "--as", "member", "--as-group", v1alpha1.TenantGroup(bob, v1alpha1.TenantLevelUse),
			"-n", bob}, args...)
		out, err := exec.CommandContext(ctx, localcp.DefaultLayout().Binary("kubectl"), args...).CombinedOutput()
		t.Logf("$ kubectl %s\n%s", strings.Join(args, " "), out)
		if err != nil {
			t.Fatalf("kubectl: %v", err)
		}
		return string(out)
	}
	out := run("get", "tenantsecrets", "--field-selector", "metadata.name="+prefix+"cache-credentials")
	for _, want := range []string{"NAME", "TYPE", "DATA", "APPLICATION", "AGE", prefix + "cache-credentials", "Opaque", kind + "/cache"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get tenantsecrets lacks %q", want)
		}
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Data     map[string]string     `json:"data"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(run("get", "tenantsecrets.core.cozystack.io", "-o", "json", "--field-selector", "metadata.name="+prefix+"cache-credentials")), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "List" && list.Kind != "TenantSecretList" || len(list.Items) != 1 || list.Items[0].Data["password"] == "" {
		t.Errorf("kubectl get -o json: %+v", list)
	}
}
