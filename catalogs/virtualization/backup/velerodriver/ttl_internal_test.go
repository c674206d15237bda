package velerodriver

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

func TestRetentionBound(t *testing.T) {
	age := &metav1.Duration{Duration: 48 * time.Hour}
	for _, tt := range []struct {
		name    string
		r       *v1alpha1.Retention
		bound   time.Duration
		bounded bool
	}{
		{"none", nil, 0, false},
		{"maxAge with default minKeep 1", &v1alpha1.Retention{MaxAge: age}, 0, false},
		{"maxAge, minKeep 0", &v1alpha1.Retention{MaxAge: age, MinKeep: ptr.To[int32](0)}, 48 * time.Hour, true},
		{"keepDaily", &v1alpha1.Retention{KeepDaily: ptr.To[int32](7), MinKeep: ptr.To[int32](0)}, 0, false},
		{"keepLast with maxAge", &v1alpha1.Retention{KeepLast: ptr.To[int32](3), MaxAge: age, MinKeep: ptr.To[int32](0)}, 0, false},
		{"zero counts, maxAge", &v1alpha1.Retention{KeepLast: ptr.To[int32](0), MaxAge: age, MinKeep: ptr.To[int32](0)}, 48 * time.Hour, true},
		{"no rule, minKeep 0", &v1alpha1.Retention{MinKeep: ptr.To[int32](0)}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, why, ok := retentionBound(tt.r)
			if ok != tt.bounded || b != tt.bound || why == "" {
				t.Errorf("got %s %v (%q), want %s %v", b, ok, why, tt.bound, tt.bounded)
			}
		})
	}
}
