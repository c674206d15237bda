package artifactserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"cozystack.io/contracts/artifact"
)

// Blobs opens stored blobs by descriptor (package store).
type Blobs interface {
	Open(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error)
}

// Server is the HTTP server. Start it with Start (a controller-runtime
// Runnable); Publish and Withdraw change what it serves at any time.
type Server struct {
	listener net.Listener
	base     *url.URL
	blobs    Blobs

	mu sync.RWMutex
	// served maps a PackageSource name to the chart layers (by digest) of
	// the revision it serves.
	served map[string]map[digest.Digest]artifact.Chart
}

// New listens on bindAddress (host:port; port 0 picks a free one) and
// returns a server whose URLs start with urlBase, or, when urlBase is
// empty, with http://<the listener's address>. urlBase is what
// helm-controller dials: in a cluster, the operator's Service, e.g.
// http://cozystack-operator.cozy-system.svc:8090.
func New(bindAddress, urlBase string, blobs Blobs) (*Server, error) {
	l, err := net.Listen("tcp", bindAddress)
	if err != nil {
		return nil, fmt.Errorf("--artifact-bind-address %s: %w", bindAddress, err)
	}
	if urlBase == "" {
		urlBase = "http://" + l.Addr().String()
	}
	base, err := url.Parse(strings.TrimSuffix(urlBase, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		l.Close()
		return nil, fmt.Errorf("--artifact-url-base %q: want an absolute http(s) URL such as http://cozystack-operator.cozy-system.svc:8090", urlBase)
	}
	return &Server{listener: l, base: base, blobs: blobs, served: map[string]map[digest.Digest]artifact.Chart{}}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// URL returns the URL of chart as served for source.
func (s *Server) URL(source string, chart artifact.Chart) string {
	u := *s.base
	u.Path = u.Path + "/" + source + "/" + chart.Descriptor.Digest.String() + "/" + FileName(chart)
	return u.String()
}

// FileName is the last element of a chart's URL: "<name>-<version>.tgz",
// as `helm package` names archives.
func FileName(chart artifact.Chart) string { return chart.Name + "-" + chart.Version + ".tgz" }

// Publish makes the server serve charts for source, replacing what it
// served for source before.
func (s *Server) Publish(source string, charts []artifact.Chart) {
	m := make(map[digest.Digest]artifact.Chart, len(charts))
	for _, c := range charts {
		m[c.Descriptor.Digest] = c
	}
	s.mu.Lock()
	s.served[source] = m
	s.mu.Unlock()
}

// Withdraw stops serving anything for source.
func (s *Server) Withdraw(source string) {
	s.mu.Lock()
	delete(s.served, source)
	s.mu.Unlock()
}

// NeedLeaderElection is false: every replica answers, so helm-controller
// never sees a closed port during a leader change (only the leader
// publishes, see cozystack-operator's README section).
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends, then shuts down gracefully.
func (s *Server) Start(ctx context.Context) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(s.listener) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			return err
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// ServeHTTP answers GET and HEAD for /<source>/<digest>/<file>.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rel := strings.TrimPrefix(r.URL.Path, s.base.Path)
	parts := strings.Split(strings.TrimPrefix(rel, "/"), "/")
	if len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	d, err := digest.Parse(parts[1])
	if err != nil {
		http.Error(w, "not a digest: "+parts[1], http.StatusNotFound)
		return
	}
	s.mu.RLock()
	chart, ok := s.served[parts[0]][d]
	s.mu.RUnlock()
	if !ok || parts[2] != FileName(chart) {
		http.NotFound(w, r)
		return
	}
	rc, err := s.blobs.Open(r.Context(), chart.Descriptor)
	if err != nil {
		http.Error(w, "chart archive unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Length", strconv.FormatInt(chart.Descriptor.Size, 10))
	// Immutable: the digest in the URL names these bytes.
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Header().Set("ETag", `"`+d.String()+`"`)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, rc)
}
