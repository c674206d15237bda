package localcp

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"slices"
	"testing"
)

func readCert(t *testing.T, file string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatalf("%s is not PEM", file)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPKIGenerate(t *testing.T) {
	p := PKI{Dir: t.TempDir()}
	if err := p.Generate(AdminIdentity, ControllerManagerIdent); err != nil {
		t.Fatal(err)
	}
	ca := readCert(t, p.CACert())
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	serving := readCert(t, p.ServingCert())
	if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost"}); err != nil {
		t.Errorf("serving certificate does not verify for localhost: %v", err)
	}
	if !slices.ContainsFunc(serving.IPAddresses, func(ip net.IP) bool { return ip.Equal(net.IPv4(127, 0, 0, 1)) }) {
		t.Errorf("serving certificate lacks 127.0.0.1: %v", serving.IPAddresses)
	}

	admin := readCert(t, p.ClientCert(AdminIdentity.User))
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate does not verify as a client: %v", err)
	}
	if admin.Subject.CommonName != AdminIdentity.User || !slices.Equal(admin.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("admin subject = %v", admin.Subject)
	}

	fpRoots := x509.NewCertPool()
	fpRoots.AddCert(readCert(t, p.FrontProxyCACert()))
	fp := readCert(t, p.FrontProxyClientCert())
	if fp.Subject.CommonName != FrontProxyClientName {
		t.Errorf("front-proxy client CN = %q, want %q", fp.Subject.CommonName, FrontProxyClientName)
	}
	if _, err := fp.Verify(x509.VerifyOptions{Roots: fpRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("front-proxy client does not verify against the front-proxy CA: %v", err)
	}
	if _, err := fp.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("front-proxy client verifies against the cluster CA: the two CAs must differ")
	}

	// A second Generate keeps the identity of the control plane.
	before, _ := os.ReadFile(p.CACert())
	if err := p.Generate(AdminIdentity, ControllerManagerIdent, HelmControllerIdentity); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p.CACert())
	if string(before) != string(after) {
		t.Error("Generate replaced an existing CA")
	}
	if _, err := os.Stat(p.ClientCert(HelmControllerIdentity.User)); err != nil {
		t.Errorf("Generate did not add the new client: %v", err)
	}

	// Aggregated API servers get serving certificates with their Service SAN.
	dir := t.TempDir()
	if err := p.IssueServing(dir+"/s.crt", dir+"/s.key", "api", "api.cozy-system.svc"); err != nil {
		t.Fatal(err)
	}
	if _, err := readCert(t, dir+"/s.crt").Verify(x509.VerifyOptions{Roots: roots, DNSName: "api.cozy-system.svc"}); err != nil {
		t.Errorf("issued serving certificate: %v", err)
	}
}
