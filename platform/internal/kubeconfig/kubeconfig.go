package kubeconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Load reads the kubeconfig file path, or, when path is empty, finds the
// configuration the way controller-runtime does (--kubeconfig flag,
// KUBECONFIG, in-cluster, ~/.kube/config), and returns a copy with qps
// (queries per second) and burst set. Errors are prefixed "kubeconfig: ".
func Load(path string, qps float32, burst int) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if path != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", path)
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = qps, burst
	return cfg, nil
}
