package apiserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"

	"cozystack.io/platform/internal/apiserver/bodydepth"
)

// RequestLimits bound the work one request, and one user, may cost
// cozystack-api (contract K1, k1-application.md, "Request limits").
//
// Every request reaches this server through kube-apiserver, whose API
// Priority and Fairness holds a seat of the requester's flow while it is
// proxied, but the HelmRelease requests this server makes for it run under
// the server's own identity: these limits keep one tenant from spending
// what the server may spend for all of them.
type RequestLimits struct {
	// MaxDepth is the deepest nesting of objects and arrays a request body
	// may have (package bodydepth); 0 means bodydepth.MaxDepth.
	MaxDepth int
	// MaxBodyBytes is the largest body read for the depth check; larger
	// bodies are left to the handler, which refuses them (413).
	MaxBodyBytes int64
	// PerUser is how many requests of one user (other than watches) may
	// run at once; more are answered 429 Too Many Requests with
	// Retry-After, which clients retry. 0 means no limit.
	PerUser int
	// WatchesPerUser is how many watches of one user may be open at once;
	// 0 means no limit.
	WatchesPerUser int
}

// DefaultRequestLimits: 20 requests and 200 watches per user at once, a
// body at most bodydepth.MaxDepth deep.
var DefaultRequestLimits = RequestLimits{MaxDepth: bodydepth.MaxDepth, PerUser: 20, WatchesPerUser: 200}

// limiter counts the requests in flight per user.
type limiter struct {
	mu       sync.Mutex
	inflight map[string]int
}

func (l *limiter) acquire(user string, max int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight == nil {
		l.inflight = map[string]int{}
	}
	if l.inflight[user] >= max {
		return false
	}
	l.inflight[user]++
	return true
}

func (l *limiter) release(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight[user]--; l.inflight[user] <= 0 {
		delete(l.inflight, user)
	}
}

// limited wraps next with the limits: the per-user counts first, then the
// body depth of writes.
func (a *Applications) limited(next http.Handler) http.Handler {
	lim := a.limits
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.RequestInfoFrom(r.Context())
		watch := info != nil && info.Verb == "watch"
		max, counts := lim.PerUser, &a.requests
		if watch {
			max, counts = lim.WatchesPerUser, &a.watches
		}
		if max > 0 {
			name := "system:anonymous"
			if u, ok := request.UserFrom(r.Context()); ok {
				name = u.GetName()
			}
			if !counts.acquire(name, max) {
				what := "requests"
				if watch {
					what = "watches"
				}
				err := apierrors.NewTooManyRequests(fmt.Sprintf(
					"%s has %d %s in flight at cozystack-api, its limit per user (contract K1, Request limits); retry later", name, max, what), 1)
				responsewriters.ErrorNegotiated(err, a.template.Serializer, GroupVersion, w, r)
				return
			}
			defer counts.release(name)
		}
		if r.Body != nil && (r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch) {
			depth := lim.MaxDepth
			if depth <= 0 {
				depth = bodydepth.MaxDepth
			}
			data, err := io.ReadAll(io.LimitReader(r.Body, lim.MaxBodyBytes+1))
			_ = r.Body.Close()
			if err != nil {
				responsewriters.ErrorNegotiated(apierrors.NewBadRequest("reading the request body: "+err.Error()), a.template.Serializer, GroupVersion, w, r)
				return
			}
			if int64(len(data)) <= lim.MaxBodyBytes {
				if err := bodydepth.Check(data, r.Header.Get("Content-Type"), depth); err != nil {
					responsewriters.ErrorNegotiated(err, a.template.Serializer, GroupVersion, w, r)
					return
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(data))
		}
		next.ServeHTTP(w, r)
	})
}
