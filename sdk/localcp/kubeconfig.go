package localcp

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ContextName is the kubeconfig context of a local control plane.
const ContextName = "cozystack-local"

func clientcmdapiConfig(server string, pki PKI, user string) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: pki.CACert()}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: pki.ClientCert(user), ClientKey: pki.ClientKey(user)}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: user}
	cfg.CurrentContext = ContextName
	return cfg
}

// RESTConfigFromKubeconfig loads a client configuration from a kubeconfig file.
func RESTConfigFromKubeconfig(path string) (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", path)
}

// writeKubeconfigs writes the kubeconfigs of the admin, kube-controller-manager
// and helm-controller into Dir, against the current API server port.
func (cp *ControlPlane) writeKubeconfigs() error {
	server := fmt.Sprintf("https://127.0.0.1:%d", cp.Ports.APIServer)
	for file, id := range map[string]ClientIdentity{
		"kubeconfig":                         AdminIdentity,
		"kube-controller-manager.kubeconfig": ControllerManagerIdent,
		"helm-controller.kubeconfig":         HelmControllerIdentity,
	} {
		if err := WriteKubeconfig(filepath.Join(cp.Dir, file), server, cp.pki, id.User); err != nil {
			return err
		}
	}
	return nil
}

// WriteKubeconfig writes a kubeconfig for user (a client certificate issued
// by pki) against server, with a context named "cozystack-local".
func WriteKubeconfig(file, server string, pki PKI, user string) error {
	cfg := clientcmdapiConfig(server, pki, user)
	return clientcmd.WriteToFile(*cfg, file)
}
