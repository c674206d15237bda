package a

import "testing"

func TestA(t *testing.T) {}

// Exported in a test file.
func Exported() {}
