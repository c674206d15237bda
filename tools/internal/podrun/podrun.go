package podrun

import (
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

var (
	envRef      = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	bindAddress = regexp.MustCompile(`^(--[a-z-]*bind-address)=(.*)$`)
)

// Args returns the arguments of ctr (its command after the binary, then
// its args) for a pod named pod in namespace ns, with $(VAR) expanded from
// the container's environment as the kubelet expands it: literal values
// and the downward API's metadata.namespace and metadata.name. A reference
// to any other variable is an error naming it (this package cannot
// emulate it). Every --<name>-bind-address=<address> that serves something
// (not "0" or empty) moves to a free port on 127.0.0.1, since the process
// shares the host's network, not a pod's; binds maps each such flag to its
// new address.
func Args(ctr corev1.Container, ns, pod string) (args []string, binds map[string]string, err error) {
	env := map[string]string{}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env[e.Name] = ns
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = pod
		}
	}
	binds = map[string]string{}
	raw := append(append([]string{}, ctr.Command[min(len(ctr.Command), 1):]...), ctr.Args...)
	for _, a := range raw {
		var missing string
		a = envRef.ReplaceAllStringFunc(a, func(ref string) string {
			name := envRef.FindStringSubmatch(ref)[1]
			v, ok := env[name]
			if !ok {
				missing = name
			}
			return v
		})
		if missing != "" {
			return nil, nil, fmt.Errorf("container %s: argument %q refers to $(%s): only literal env values, metadata.namespace and metadata.name can be expanded here", ctr.Name, a, missing)
		}
		if m := bindAddress.FindStringSubmatch(a); m != nil && m[2] != "0" && m[2] != "" {
			addr, err := freeLoopback()
			if err != nil {
				return nil, nil, err
			}
			binds[m[1]] = addr
			a = m[1] + "=" + addr
		}
		args = append(args, a)
	}
	return args, binds, nil
}

func freeLoopback() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Kubeconfig writes to path (mode 0600) a kubeconfig for cfg's API server
// that authenticates as the ServiceAccount ns/sa with a token from the
// TokenRequest API valid for ttl (a kubelet would renew it; the process
// here keeps the one it read), then checks with a SelfSubjectReview that
// the API server sees system:serviceaccount:<ns>:<sa>. cfg is an
// administrator's configuration (it requests the token).
func Kubeconfig(ctx context.Context, cfg *rest.Config, ns, sa string, ttl time.Duration, path string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	seconds := int64(ttl / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("TokenRequest for ServiceAccount %s/%s: %w", ns, sa, err)
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return err
		}
	}
	user := "system:serviceaccount:" + ns + ":" + sa
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: ca}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	kc.CurrentContext = "local"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return err
	}
	as, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	review, err := as.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("SelfSubjectReview with the token of %s: %w", user, err)
	}
	if got := review.Status.UserInfo.Username; got != user {
		return fmt.Errorf("the token authenticates as %q, want %q", got, user)
	}
	return nil
}
