package backuptest

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// PollInterval is how often Eventually calls its condition.
const PollInterval = 100 * time.Millisecond

// Eventually polls cond every PollInterval until it returns nil, failing
// the test (as what) with cond's last error after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	EventuallyEvery(t, PollInterval, timeout, what, cond)
}

// EventuallyEvery is Eventually polling every interval.
func EventuallyEvery(t testing.TB, interval, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), interval, timeout, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s: %v", what, timeout, last)
	}
}
