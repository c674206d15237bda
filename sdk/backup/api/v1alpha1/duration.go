package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func mustDuration(s string) *metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic("v1alpha1: bad default duration " + s)
	}
	return &metav1.Duration{Duration: d}
}

// Or returns d's duration, or def when d is nil.
func Or(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}
