package backup

import "testing"

func TestGroup(t *testing.T) {
	if Group == "" {
		t.Fatal("no group")
	}
}
