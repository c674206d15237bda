package localcp

// The components Start runs (controlplane.go), one start step each: etcd,
// kube-apiserver, kube-controller-manager, helm-controller and the OCI
// registry, on the loopback ports of Ports.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	client := fmt.Sprintf("http://127.0.0.1:%d", cp.Ports.Etcd)
	peer := fmt.Sprintf("http://127.0.0.1:%d", cp.Ports.EtcdPeer)
	args := []string{
		"--name=local",
		"--data-dir=" + filepath.Join(cp.Dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=local=" + peer,
		// A throwaway local store: fsync buys nothing and costs seconds on
		// shared disks.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
	return cp.run(ctx, "etcd", args, nil, Health{URL: client + "/health", Mode: "http"})
}

func (cp *ControlPlane) startAPIServer(ctx context.Context) error {
	p := cp.pki
	args := []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", cp.Ports.Etcd),
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", cp.Ports.APIServer),
		"--advertise-address=127.0.0.1",
		// The endpoint reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type=none",
		"--service-cluster-ip-range=" + ServiceClusterIPRange,
		"--authorization-mode=RBAC",
		"--client-ca-file=" + p.CACert(),
		"--tls-cert-file=" + p.ServingCert(),
		"--tls-private-key-file=" + p.ServingKey(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.ServiceAccountPub(),
		"--service-account-signing-key-file=" + p.ServiceAccountKey(),
		// Front-proxy (requestheader) settings for aggregated API servers.
		"--requestheader-client-ca-file=" + p.FrontProxyCACert(),
		"--requestheader-allowed-names=" + FrontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-uid-headers=X-Remote-Uid",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.FrontProxyClientCert(),
		"--proxy-client-key-file=" + p.FrontProxyClientKey(),
		"--enable-aggregator-routing=false",
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	}
	return cp.run(ctx, "kube-apiserver", args, nil,
		Health{URL: fmt.Sprintf("https://127.0.0.1:%d/readyz", cp.Ports.APIServer), Mode: "https-client"})
}

func (cp *ControlPlane) startControllerManager(ctx context.Context) error {
	p := cp.pki
	kc := filepath.Join(cp.Dir, "kube-controller-manager.kubeconfig")
	args := []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", cp.Ports.ControllerManager),
		"--cert-dir=" + filepath.Join(cp.Dir, "kube-controller-manager"),
		"--leader-elect=false",
		// Each controller acts as its own kube-system service account (the
		// default RBAC roles assume it). Only what a cluster without nodes
		// needs runs: ownerReference garbage collection, namespace
		// deletion, service-account tokens, and ClusterRole aggregation
		// (without it the built-in admin/edit/view roles, and any role
		// that aggregates catalogs' rules by label, stay empty), and
		// ResourceQuota usage (quota admission refuses every counted
		// create while a quota has no status).
		"--controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller,clusterrole-aggregation-controller,resourcequota-controller",
		// Quotas are recomputed every 15 s rather than 5 min: the
		// resources of CRDs installed after start (found by discovery
		// every 30 s) are otherwise counted only at the next full sync,
		// and until then quota admission refuses their creates.
		"--resource-quota-sync-period=15s",
		"--service-account-private-key-file=" + p.ServiceAccountKey(),
		"--root-ca-file=" + p.CACert(),
		"--use-service-account-credentials=true",
		"--v=1",
	}
	return cp.run(ctx, "kube-controller-manager", args, nil,
		Health{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", cp.Ports.ControllerManager), Mode: "https-insecure"})
}

// DefaultServiceAccount is the ServiceAccount helm-controller impersonates
// for a HelmRelease without spec.serviceAccountName (its
// --default-service-account): every namespace's "default", which holds no
// rights, so such a release installs nothing.
const DefaultServiceAccount = "default"

func (cp *ControlPlane) startHelmController(ctx context.Context) error {
	args := []string{
		"--feature-gates=ExternalArtifact=true",
		fmt.Sprintf("--health-addr=127.0.0.1:%d", cp.Ports.HelmControllerHealth),
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", cp.Ports.HelmControllerMetrics),
		"--enable-leader-election=false",
		"--watch-all-namespaces=true",
		// Flux's multi-tenancy lockdown: a HelmRelease that names no
		// ServiceAccount installs as its namespace's "default" one, which
		// holds no rights, never as helm-controller itself.
		"--default-service-account=" + DefaultServiceAccount,
		"--log-level=info",
		"--log-encoding=console",
	}
	env := []string{
		"KUBECONFIG=" + filepath.Join(cp.Dir, "helm-controller.kubeconfig"),
		"RUNTIME_NAMESPACE=" + FluxNamespace,
	}
	return cp.run(ctx, "helm-controller", args, env,
		Health{URL: fmt.Sprintf("http://127.0.0.1:%d/readyz", cp.Ports.HelmControllerHealth), Mode: "http"})
}

func (cp *ControlPlane) startRegistry(ctx context.Context) error {
	cfg := filepath.Join(cp.Dir, "registry.yaml")
	content := fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: 127.0.0.1:%d
`, filepath.Join(cp.Dir, "registry"), cp.Ports.Registry)
	if err := os.WriteFile(cfg, []byte(content), 0o644); err != nil {
		return err
	}
	// Distribution exports OpenTelemetry traces by default; there is no
	// collector here.
	env := []string{"OTEL_TRACES_EXPORTER=none", "OTEL_SDK_DISABLED=true"}
	return cp.run(ctx, "registry", []string{"serve", cfg}, env,
		Health{URL: fmt.Sprintf("http://127.0.0.1:%d/v2/", cp.Ports.Registry), Mode: "http"})
}
