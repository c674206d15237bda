package artifact_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/sdk/testenv"
)

// The package's control plane, with the CNCF Distribution registry; nil
// under -short.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Registry: true}, &env))
}

func registryContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Build, push to the real registry, pull back by tag and by digest.
func TestRegistryPushPull(t *testing.T) {
	testenv.Need(t, env)
	ctx := registryContext(t)
	local := memory.New()
	res, err := build.Build(ctx, testCatalog, local, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref := env.RegistryHost() + "/catalogs/demo:" + res.Tag
	repo, tag, err := artifact.NewRepository(ref, artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if tag != res.Tag {
		t.Errorf("NewRepository(%q) tag = %q", ref, tag)
	}
	pushed, err := oras.Copy(ctx, local, res.Tag, repo, tag, oras.DefaultCopyOptions)
	if err != nil {
		t.Fatalf("push to %s: %v", ref, err)
	}
	if pushed.Digest != res.Manifest.Digest {
		t.Errorf("pushed %s, built %s", pushed.Digest, res.Manifest.Digest)
	}

	for _, reference := range []string{ref, env.RegistryHost() + "/catalogs/demo@" + res.Manifest.Digest.String()} {
		t.Run(strings.TrimPrefix(reference, env.RegistryHost()), func(t *testing.T) {
			src, name, err := artifact.NewRepository(reference, artifact.RemoteOptions{PlainHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			cache := memory.New()
			a, err := artifact.Pull(ctx, src, name, cache, artifact.PullOptions{})
			if err != nil {
				t.Fatalf("Pull %s: %v", reference, err)
			}
			if a.Manifest.Digest != res.Manifest.Digest || a.Catalog.Name != "demo" || len(a.Charts) != 3 {
				t.Errorf("pulled %s %+v, want %s with 3 charts", a.Manifest.Digest, a.Catalog.CatalogInfo, res.Manifest.Digest)
			}
			for _, c := range a.Charts {
				if _, err := content.FetchAll(ctx, cache, c.Descriptor); err != nil {
					t.Errorf("chart %s not cached: %v", c.Path, err)
				}
			}
		})
	}
}

// Build writes straight into a registry repository too.
func TestBuildIntoRegistry(t *testing.T) {
	testenv.Need(t, env)
	ctx := registryContext(t)
	repo, _, err := artifact.NewRepository(env.RegistryHost()+"/catalogs/direct", artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(ctx, testCatalog, repo, build.Options{Tag: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := artifact.Pull(ctx, repo, "edge", nil, artifact.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest.Digest != res.Manifest.Digest {
		t.Errorf("pulled %s, built %s", a.Manifest.Digest, res.Manifest.Digest)
	}
}

// A registry that answers a blob request with other bytes than the digest
// asked for: Pull reports a digest mismatch with both digests and caches
// nothing of the artifact.
func TestRegistryServingOtherBytes(t *testing.T) {
	testenv.Need(t, env)
	ctx := registryContext(t)
	local := memory.New()
	res, err := build.Build(ctx, testCatalog, local, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	repo, _, err := artifact.NewRepository(env.RegistryHost()+"/catalogs/lying:"+res.Tag, artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.Copy(ctx, local, res.Tag, repo, res.Tag, oras.DefaultCopyOptions); err != nil {
		t.Fatal(err)
	}

	// A proxy in front of the registry that flips one byte of the chart.
	chart := res.Charts[0].Descriptor
	target, _ := url.Parse("http://" + env.RegistryHost())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodGet || !strings.HasSuffix(resp.Request.URL.Path, "/blobs/"+chart.Digest.String()) {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body[len(body)-1] ^= 0xff
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	}
	server := httptest.NewServer(proxy)
	t.Cleanup(server.Close)

	src, tag, err := artifact.NewRepository(strings.TrimPrefix(server.URL, "http://")+"/catalogs/lying:"+res.Tag, artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	cache := memory.New()
	_, err = artifact.Pull(ctx, src, tag, cache, artifact.PullOptions{})
	var mismatch *artifact.DigestMismatchError
	if !errors.As(err, &mismatch) {
		t.Fatalf("Pull through the lying proxy: %v, want a *DigestMismatchError", err)
	}
	if mismatch.Expected != chart.Digest || mismatch.Actual == chart.Digest || mismatch.Blob != "chart charts/echo" {
		t.Errorf("mismatch = %+v, want chart charts/echo expected %s", mismatch, chart.Digest)
	}
	if ok, _ := cache.Exists(ctx, res.Manifest); ok {
		t.Errorf("the manifest was cached after a mismatch")
	}
}

// A registry that answers the manifest request with other bytes than the
// manifest's digest (Pull reads a registry's manifest in one GET, trusting
// neither the reference's nor the response header's digest without hashing
// the body): a digest mismatch on the manifest, nothing cached, whether
// the reference is a tag or a digest.
func TestRegistryServingOtherManifestBytes(t *testing.T) {
	testenv.Need(t, env)
	ctx := registryContext(t)
	local := memory.New()
	res, err := build.Build(ctx, testCatalog, local, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	repo, _, err := artifact.NewRepository(env.RegistryHost()+"/catalogs/lying-manifest:"+res.Tag, artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.Copy(ctx, local, res.Tag, repo, res.Tag, oras.DefaultCopyOptions); err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse("http://" + env.RegistryHost())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodGet || !strings.Contains(resp.Request.URL.Path, "/manifests/") {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		// Same length, other bytes: only the digest check can notice.
		body = bytes.Replace(body, []byte(`"demo"`), []byte(`"evil"`), 1)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	}
	server := httptest.NewServer(proxy)
	t.Cleanup(server.Close)
	host := strings.TrimPrefix(server.URL, "http://")

	for _, reference := range []string{host + "/catalogs/lying-manifest:" + res.Tag, host + "/catalogs/lying-manifest@" + res.Manifest.Digest.String()} {
		t.Run(strings.TrimPrefix(reference, host), func(t *testing.T) {
			src, name, err := artifact.NewRepository(reference, artifact.RemoteOptions{PlainHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			cache := memory.New()
			_, err = artifact.Pull(ctx, src, name, cache, artifact.PullOptions{})
			var mismatch *artifact.DigestMismatchError
			if !errors.As(err, &mismatch) {
				t.Fatalf("Pull %s through the lying proxy: %v, want a *DigestMismatchError", reference, err)
			}
			if mismatch.Blob != "manifest" || mismatch.Expected != res.Manifest.Digest || mismatch.Actual == res.Manifest.Digest {
				t.Errorf("mismatch = %+v, want the manifest, expected %s", mismatch, res.Manifest.Digest)
			}
			if ok, _ := cache.Exists(ctx, res.Manifest); ok {
				t.Errorf("the manifest was cached after a mismatch")
			}
		})
	}
}
