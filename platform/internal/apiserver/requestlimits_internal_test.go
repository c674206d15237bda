package apiserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// One user's requests beyond PerUser get 429 with Retry-After while
// another user's still pass; watches count apart; a body deeper than
// MaxDepth gets 400 before the handler reads it.
func TestRequestLimits(t *testing.T) {
	a := NewApplications(ApplicationsConfig{Limits: &RequestLimits{MaxDepth: 10, PerUser: 2, WatchesPerUser: 1}})
	release := make(chan struct{})
	var entered sync.WaitGroup
	var bodies []string
	var mu sync.Mutex
	h := a.limited(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
		}
		if r.URL.Query().Get("block") != "" {
			entered.Done()
			<-release
		}
		w.WriteHeader(http.StatusOK)
	}))
	serve := func(userName, verb, method, target, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		ctx := request.WithUser(req.Context(), &user.DefaultInfo{Name: userName})
		ctx = request.WithRequestInfo(ctx, &request.RequestInfo{IsResourceRequest: true, Verb: verb})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(ctx))
		return rec
	}
	var done sync.WaitGroup
	for _, verb := range []string{"get", "list", "watch"} {
		entered.Add(1)
		done.Add(1)
		go func() { defer done.Done(); serve("alice", verb, "GET", "/x?block=1", "") }()
	}
	entered.Wait()
	if rec := serve("alice", "get", "GET", "/x", ""); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "alice has 2 requests in flight") {
		t.Errorf("third request of alice: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if rec := serve("alice", "watch", "GET", "/x", ""); rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "watches") {
		t.Errorf("second watch of alice: %d %s", rec.Code, rec.Body)
	}
	if rec := serve("bob", "get", "GET", "/x", ""); rec.Code != http.StatusOK {
		t.Errorf("bob is limited by alice's requests: %d %s", rec.Code, rec.Body)
	}
	close(release)
	done.Wait()
	if rec := serve("alice", "get", "GET", "/x", ""); rec.Code != http.StatusOK {
		t.Errorf("alice after her requests ended: %d %s", rec.Code, rec.Body)
	}

	deep := strings.Repeat(`{"a":`, 11) + `1` + strings.Repeat(`}`, 11)
	if rec := serve("bob", "create", "POST", "/x", deep); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "10 levels") {
		t.Errorf("deep body: %d %s", rec.Code, rec.Body)
	}
	shallow := strings.Repeat(`{"a":`, 10) + `1` + strings.Repeat(`}`, 10)
	if rec := serve("bob", "patch", "PATCH", "/x", shallow); rec.Code != http.StatusOK {
		t.Errorf("body at the limit: %d %s", rec.Code, rec.Body)
	}
	if bodies[len(bodies)-1] != shallow {
		t.Errorf("the handler read %q, want the body as sent", bodies[len(bodies)-1])
	}
}
