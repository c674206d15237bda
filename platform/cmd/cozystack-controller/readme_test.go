package main

import (
	"testing"

	"cozystack.io/platform/internal/command/commandtest"
)

// Every flag `make demo` gives cozystack-controller is one of its flags.
func TestMakefileFlags(t *testing.T) {
	commandtest.MakefileFlags(t, newCommand(), "cozystack-controller", "../../../Makefile")
}
