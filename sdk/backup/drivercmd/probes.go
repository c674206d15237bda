package drivercmd

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// probeCacheFor is how long /readyz reuses its last answer, so that a
// kubelet probing every few seconds costs the API server at most one
// request per interval.
const probeCacheFor = 5 * time.Second

// serveProbes serves GET /healthz (200 while the process runs) and GET
// /readyz (200 while the API server answers GET /version with cfg, the
// driver's own identity; 503 with the error otherwise) on addr until ctx
// ends or stop is called. /version is readable by every client
// (system:public-info-viewer), so the probe needs no extra rights.
func serveProbes(ctx context.Context, addr string, cfg *rest.Config) (stop func(), err error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 2 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	var (
		mu      sync.Mutex
		checked time.Time
		lastErr error
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		if time.Since(checked) > probeCacheFor {
			_, lastErr = dc.ServerVersion()
			checked = time.Now()
		}
		err := lastErr
		mu.Unlock()
		if err != nil {
			http.Error(w, "the Kubernetes API server does not answer: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }() // ends with Shutdown below
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
		}
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stopped) }) }, nil
}
