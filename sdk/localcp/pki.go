package localcp

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is the set of certificates and keys of one local control plane, as file
// paths under <state dir>/pki. Generate creates the files that are missing and
// keeps the rest, so a restarted control plane keeps its identity.
type PKI struct {
	Dir string
}

// PKIIn returns the PKI of the control plane whose state is in stateDir.
func PKIIn(stateDir string) PKI { return PKI{Dir: filepath.Join(stateDir, "pki")} }

// Paths of the files in the PKI directory.
func (p PKI) path(name string) string       { return filepath.Join(p.Dir, name) }
func (p PKI) CACert() string                { return p.path("ca.crt") }
func (p PKI) CAKey() string                 { return p.path("ca.key") }
func (p PKI) ServingCert() string           { return p.path("apiserver.crt") }
func (p PKI) ServingKey() string            { return p.path("apiserver.key") }
func (p PKI) FrontProxyCACert() string      { return p.path("front-proxy-ca.crt") }
func (p PKI) FrontProxyClientCert() string  { return p.path("front-proxy-client.crt") }
func (p PKI) FrontProxyClientKey() string   { return p.path("front-proxy-client.key") }
func (p PKI) ServiceAccountKey() string     { return p.path("sa.key") }
func (p PKI) ServiceAccountPub() string     { return p.path("sa.pub") }
func (p PKI) ClientCert(user string) string { return p.path("client-" + user + ".crt") }
func (p PKI) ClientKey(user string) string  { return p.path("client-" + user + ".key") }
func (p PKI) frontProxyCAKey() string       { return p.path("front-proxy-ca.key") }

// FrontProxyClientName is the CN of the certificate kube-apiserver presents to
// aggregated API servers (--requestheader-allowed-names).
const FrontProxyClientName = "front-proxy-client"

// ClientIdentity is a client certificate subject.
type ClientIdentity struct {
	User   string
	Groups []string
}

// Identities of the clients of a local control plane. The admin and
// helm-controller are in system:masters: Flux's helm-controller runs as
// cluster-admin in a real cluster too.
var (
	AdminIdentity          = ClientIdentity{User: "cozystack-admin", Groups: []string{"system:masters"}}
	ControllerManagerIdent = ClientIdentity{User: "system:kube-controller-manager"}
	HelmControllerIdentity = ClientIdentity{User: "helm-controller", Groups: []string{"system:masters"}}
)

// Generate writes the CA, serving, front-proxy, service-account and client
// certificates that do not exist yet. Keys are ECDSA P-256; certificates
// are valid for ten years (a local, throwaway control plane).
func (p PKI) Generate(clients ...ClientIdentity) error {
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return err
	}
	ca, caKey, err := p.ensureCA(p.CACert(), p.CAKey(), "cozystack-local-ca")
	if err != nil {
		return err
	}
	if !fileExists(p.ServingCert()) {
		tmpl := leafTemplate("kube-apiserver", nil, x509.ExtKeyUsageServerAuth)
		tmpl.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP(ServiceClusterIP)}
		if err := writeLeaf(p.ServingCert(), p.ServingKey(), tmpl, ca, caKey); err != nil {
			return err
		}
	}
	fpCA, fpKey, err := p.ensureCA(p.FrontProxyCACert(), p.frontProxyCAKey(), "cozystack-local-front-proxy-ca")
	if err != nil {
		return err
	}
	if !fileExists(p.FrontProxyClientCert()) {
		tmpl := leafTemplate(FrontProxyClientName, nil, x509.ExtKeyUsageClientAuth)
		if err := writeLeaf(p.FrontProxyClientCert(), p.FrontProxyClientKey(), tmpl, fpCA, fpKey); err != nil {
			return err
		}
	}
	if !fileExists(p.ServiceAccountKey()) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			return err
		}
		if err := writePEM(p.ServiceAccountPub(), "PUBLIC KEY", pub, 0o644); err != nil {
			return err
		}
		if err := writeKey(p.ServiceAccountKey(), key); err != nil {
			return err
		}
	}
	for _, c := range clients {
		if fileExists(p.ClientCert(c.User)) {
			continue
		}
		tmpl := leafTemplate(c.User, c.Groups, x509.ExtKeyUsageClientAuth)
		if err := writeLeaf(p.ClientCert(c.User), p.ClientKey(c.User), tmpl, ca, caKey); err != nil {
			return err
		}
	}
	return nil
}

// IssueServing signs a serving certificate for an extra server (for example
// an aggregated API server) with the cluster CA. The SANs are dnsNames plus
// 127.0.0.1; the files are written to certFile and keyFile.
func (p PKI) IssueServing(certFile, keyFile, commonName string, dnsNames ...string) error {
	ca, caKey, err := loadCA(p.CACert(), p.CAKey())
	if err != nil {
		return err
	}
	tmpl := leafTemplate(commonName, nil, x509.ExtKeyUsageServerAuth)
	tmpl.DNSNames = dnsNames
	tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	return writeLeaf(certFile, keyFile, tmpl, ca, caKey)
}

// IssueClient signs a client certificate for id with the cluster CA.
func (p PKI) IssueClient(id ClientIdentity) error {
	ca, caKey, err := loadCA(p.CACert(), p.CAKey())
	if err != nil {
		return err
	}
	return writeLeaf(p.ClientCert(id.User), p.ClientKey(id.User), leafTemplate(id.User, id.Groups, x509.ExtKeyUsageClientAuth), ca, caKey)
}

func (p PKI) ensureCA(certFile, keyFile, cn string) (*x509.Certificate, crypto.Signer, error) {
	if fileExists(certFile) && fileExists(keyFile) {
		return loadCA(certFile, keyFile)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	if err := writePEM(certFile, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	if err := writeKey(keyFile, key); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func loadCA(certFile, keyFile string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s or %s is not PEM: delete the pki directory to regenerate it", certFile, keyFile)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New(keyFile + " is not a signing key")
	}
	return cert, signer, nil
}

func leafTemplate(cn string, orgs []string, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
}

func writeLeaf(certFile, keyFile string, tmpl, ca *x509.Certificate, caKey crypto.Signer) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writeKey(keyFile, key); err != nil {
		return err
	}
	return writePEM(certFile, "CERTIFICATE", der, 0o644)
}

func writeKey(file string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(file, "PRIVATE KEY", der, 0o600)
}

func writePEM(file, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err)
	}
	return n
}
