package artifactserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"cozystack.io/contracts/artifact"
)

type memBlobs struct{ *memory.Store }

func (m memBlobs) Open(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
	return m.Fetch(ctx, d)
}

func TestServesOnlyPublishedCharts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mem := memory.New()
	data := []byte("chart bytes")
	desc := content.NewDescriptorFromBytes(artifact.ChartMediaType, data)
	if err := mem.Push(ctx, desc, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	chart := artifact.Chart{Path: "charts/echo", Name: "echo", Version: "0.1.0", Descriptor: desc}

	srv, err := New("127.0.0.1:0", "", memBlobs{mem})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()

	u := srv.URL("demo", chart)
	wantPrefix := "http://" + srv.Addr().String() + "/demo/" + desc.Digest.String() + "/echo-0.1.0.tgz"
	if u != wantPrefix {
		t.Errorf("URL = %q, want %q", u, wantPrefix)
	}
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(u); code != http.StatusNotFound {
		t.Errorf("before Publish: %d, want 404", code)
	}
	srv.Publish("demo", []artifact.Chart{chart})
	if code, body := get(u); code != http.StatusOK || body != string(data) {
		t.Errorf("after Publish: %d %q, want 200 with the chart", code, body)
	}
	// Another source, another file name, or a malformed digest: not served.
	for _, bad := range []string{
		srv.URL("other", chart),
		strings.Replace(u, "echo-0.1.0.tgz", "other.tgz", 1),
		strings.Replace(u, desc.Digest.String(), "sha256:zz", 1),
		strings.Replace(u, "/demo/", "/demo/x/", 1),
	} {
		if code, _ := get(bad); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", bad, code)
		}
	}
	srv.Withdraw("demo")
	if code, _ := get(u); code != http.StatusNotFound {
		t.Errorf("after Withdraw: %d, want 404", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v after cancel", err)
	}
}

func TestNewRejectsBadURLBase(t *testing.T) {
	for _, base := range []string{"cozystack-operator:8090", "ftp://x", "http://"} {
		if _, err := New("127.0.0.1:0", base, nil); err == nil || !strings.Contains(err.Error(), "--artifact-url-base") {
			t.Errorf("New(%q) = %v, want an error naming --artifact-url-base", base, err)
		}
	}
	srv, err := New("127.0.0.1:0", "http://operator.cozy-system.svc:8090/charts/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.listener.Close()
	c := artifact.Chart{Name: "a", Version: "1.0.0", Descriptor: ocispec.Descriptor{Digest: digest.Digest("sha256:" + strings.Repeat("0", 64))}}
	if got, want := srv.URL("s", c), "http://operator.cozy-system.svc:8090/charts/s/sha256:"+strings.Repeat("0", 64)+"/a-1.0.0.tgz"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}
