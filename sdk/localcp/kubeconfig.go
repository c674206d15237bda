package localcp

import (
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
