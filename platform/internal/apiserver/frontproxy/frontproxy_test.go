package frontproxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var serial int64

func newCA(t *testing.T) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "front-proxy-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (ca testCA) issue(t *testing.T, cn string, notAfter time.Time) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

// switchableCA lets a test rotate the request-header CA bundle.
type switchableCA struct {
	dynamiccertificates.CAContentProvider
}

func request(cert *x509.Certificate, user string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "https://cozystack-api/apis", nil)
	if cert != nil {
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
	}
	if user != "" {
		r.Header.Set("X-Remote-User", user)
		r.Header.Set("X-Remote-Group", "tenants")
	}
	return r
}

func TestAuthenticateRequest(t *testing.T) {
	ca, other := newCA(t), newCA(t)
	provider, err := dynamiccertificates.NewStaticCAContent("front-proxy", ca.pem)
	if err != nil {
		t.Fatal(err)
	}
	ca2 := &switchableCA{provider}
	a := New(&authenticatorfactory.RequestHeaderConfig{
		UsernameHeaders:     headerrequest.StaticStringSlice{"X-Remote-User"},
		UIDHeaders:          headerrequest.StaticStringSlice{"X-Remote-Uid"},
		GroupHeaders:        headerrequest.StaticStringSlice{"X-Remote-Group"},
		ExtraHeaderPrefixes: headerrequest.StaticStringSlice{"X-Remote-Extra-"},
		CAContentProvider:   ca2,
		AllowedClientNames:  headerrequest.StaticStringSlice{"front-proxy-client"},
	})
	verifies := 0
	a.verify = func(leaf *x509.Certificate, opts x509.VerifyOptions) ([][]*x509.Certificate, error) {
		verifies++
		return leaf.Verify(opts)
	}
	now := time.Now()
	a.now = func() time.Time { return now }

	proxy := ca.issue(t, "front-proxy-client", now.Add(2*time.Hour))
	tests := []struct {
		name         string
		req          *http.Request
		at           time.Duration // after the start
		wantUser     string
		wantVerifies int // in total, after this request
	}{
		{"front proxy: verified", request(proxy, "alice"), 0, "alice", 1},
		{"same chain again: from the cache", request(proxy, "bob"), time.Minute, "bob", 1},
		{"no identity header", request(proxy, ""), time.Minute, "", 1},
		{"no client certificate", request(nil, "alice"), time.Minute, "", 1},
		{"certificate of another CA", request(other.issue(t, "front-proxy-client", now.Add(time.Hour)), "alice"), time.Minute, "", 2},
		{"common name not allowed", request(ca.issue(t, "someone-else", now.Add(time.Hour)), "alice"), time.Minute, "", 3},
		{"cache entry past the TTL: verified again", request(proxy, "alice"), CacheTTL + time.Minute, "alice", 4},
		{"certificate expired since it was cached", request(proxy, "alice"), 3 * time.Hour, "", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now = time.Now().Add(tt.at)
			resp, ok, err := a.AuthenticateRequest(tt.req)
			if err != nil {
				t.Fatalf("error %v: the upstream authenticator behind this one states errors", err)
			}
			if got := ""; ok {
				got = resp.User.GetName()
				if got != tt.wantUser {
					t.Errorf("user %q, want %q", got, tt.wantUser)
				}
				if g := resp.User.GetGroups(); len(g) != 1 || g[0] != "tenants" {
					t.Errorf("groups %v, want [tenants]", g)
				}
				if tt.req.Header.Get("X-Remote-User") != "" {
					t.Error("identity headers were not cleared")
				}
			} else if tt.wantUser != "" {
				t.Errorf("not authenticated, want %q", tt.wantUser)
			}
			if verifies != tt.wantVerifies {
				t.Errorf("%d verifications in total, want %d", verifies, tt.wantVerifies)
			}
		})
	}

	t.Run("rotated CA bundle: verified against the new pool", func(t *testing.T) {
		now = time.Now()
		rotated, err := dynamiccertificates.NewStaticCAContent("front-proxy", append(append([]byte{}, ca.pem...), other.pem...))
		if err != nil {
			t.Fatal(err)
		}
		before := verifies
		if _, ok, _ := a.AuthenticateRequest(request(proxy, "alice")); !ok || verifies != before {
			t.Fatalf("before rotation: ok=%v, %d new verifications, want a cache hit", ok, verifies-before)
		}
		ca2.CAContentProvider = rotated
		if _, ok, _ := a.AuthenticateRequest(request(proxy, "alice")); !ok || verifies != before+1 {
			t.Fatalf("after rotation: ok=%v, %d new verifications, want 1", ok, verifies-before)
		}
	})
}
