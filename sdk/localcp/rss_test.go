package localcp

import (
	"os"
	"testing"
)

// The test binary's own peak resident set is read, and is positive.
func TestPeakRSS(t *testing.T) {
	n, err := PeakRSS(os.Getpid())
	if err != nil || n <= 0 {
		t.Fatalf("PeakRSS(self) = %d, %v", n, err)
	}
	if _, err := PeakRSS(-1); err == nil {
		t.Error("PeakRSS(-1): no error")
	}
}
