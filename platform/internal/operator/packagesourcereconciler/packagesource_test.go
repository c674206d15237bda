package packagesourcereconciler

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"oras.land/oras-go/v2/registry/remote/auth"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/safetar"
	"cozystack.io/platform/internal/status"
)

func TestPullFailureReasons(t *testing.T) {
	tests := []struct {
		name   string
		why    string
		err    error
		reason string // the condition reason
		kind   status.State
		msg    string
	}{
		{
			name:   "digest",
			why:    "a digest mismatch, even wrapped, stalls the source and names both digests",
			err:    fmt.Errorf("wrapped: %w", &artifact.DigestMismatchError{Blob: "chart charts/a", Expected: "sha256:aa", Actual: "sha256:bb"}),
			reason: v1alpha1.ReasonDigestMismatch,
			kind:   status.StateStalled,
			msg:    "expected sha256:aa, got sha256:bb",
		},
		{
			name:   "size",
			why:    "a size mismatch is a digest mismatch too: the bytes are not the ones named",
			err:    &artifact.SizeMismatchError{Blob: "config", Digest: "sha256:aa", Expected: 3, Actual: 2},
			reason: v1alpha1.ReasonDigestMismatch,
			kind:   status.StateStalled,
			msg:    "expected 3 bytes, got 2",
		},
		{
			name:   "unsafe",
			why:    "an unsafe archive stalls the source and names the entry",
			err:    fmt.Errorf("chart charts/a: %w", &safetar.EntryError{Entry: "../x", Err: safetar.ErrPathTraversal}),
			reason: v1alpha1.ReasonUnsafeArchive,
			kind:   status.StateStalled,
			msg:    `entry "../x": path traversal`,
		},
		{
			name:   "invalid",
			why:    "an invalid artifact stalls the source and says how to build a valid one",
			err:    fmt.Errorf("%w: manifest artifactType", artifact.ErrInvalidArtifact),
			reason: v1alpha1.ReasonInvalidArtifact,
			kind:   status.StateStalled,
			msg:    "cozypkg build",
		},
		{
			name:   "too large",
			why:    "a blob over a limit makes the artifact invalid",
			err:    &artifact.TooLargeError{Blob: "config", Size: 10, Limit: 5},
			reason: v1alpha1.ReasonInvalidArtifact,
			kind:   status.StateStalled,
			msg:    "exceeds the limit",
		},
		{
			name:   "network",
			why:    "any other error is a pull failure, retried (Progressing, not Stalled)",
			err:    errors.New("dial tcp 127.0.0.1:1: connection refused"),
			reason: v1alpha1.ReasonPullFailed,
			kind:   status.StateProgressing,
			msg:    "connection refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := pullFailure("reg/x:1", tt.err, "; still serving 1.0.0@sha256:cc")
			if r.Reason != tt.reason || r.State != tt.kind {
				t.Errorf("%s: reason %s kind %d, want %s %d (%s)", tt.name, r.Reason, r.State, tt.reason, tt.kind, tt.why)
			}
			for _, want := range []string{"reg/x:1", tt.msg, "still serving 1.0.0@sha256:cc"} {
				if !strings.Contains(r.Message, want) {
					t.Errorf("%s: message %q lacks %q (%s)", tt.name, r.Message, want, tt.why)
				}
			}
		})
	}
}

func TestDockerCredential(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte("bob:s3cret"))
	cfg := []byte(`{"auths": {"reg.example:5000": {"auth": "` + b64 + `"}, "https://other.example": {"username": "al", "password": "pw"}}}`)
	for host, want := range map[string]auth.Credential{
		"reg.example:5000": {Username: "bob", Password: "s3cret"},
		"other.example":    {Username: "al", Password: "pw"},
	} {
		got, err := dockerCredential(cfg, host)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", host, got, err, want)
		}
	}
	if _, err := dockerCredential(cfg, "missing.example"); err == nil || !strings.Contains(err.Error(), "no entry for missing.example") {
		t.Errorf("missing host: %v", err)
	}
	if _, err := dockerCredential([]byte("{"), "x"); err == nil || !strings.Contains(err.Error(), "spec.oci.pullSecretRef") {
		t.Errorf("bad JSON: %v", err)
	}
}

// TestBackoff: retries wait firstRetry, doubling with each failure in a
// row, never longer than the source's interval (docs/operator/catalogs.md, "Catalog delivery": 10 s, doubling, at most spec.interval).
func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		failures int
		interval time.Duration
		want     time.Duration
	}{
		{1, 10 * time.Minute, 10 * time.Second},
		{2, 10 * time.Minute, 20 * time.Second},
		{5, 10 * time.Minute, 160 * time.Second},
		{7, 10 * time.Minute, 10 * time.Minute},
		{1000, 10 * time.Minute, 10 * time.Minute},
		{1, 5 * time.Second, 5 * time.Second},
		{3, 30 * time.Second, 30 * time.Second},
	} {
		if got := backoff(tc.failures, tc.interval); got != tc.want {
			t.Errorf("backoff(%d, %s) = %s, want %s", tc.failures, tc.interval, got, tc.want)
		}
	}
}
