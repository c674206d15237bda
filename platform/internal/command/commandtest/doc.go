// Package commandtest holds what the tests of the platform binaries
// (platform/cmd/*) share: MakefileFlags checks that every flag the
// Makefile's recipes give a binary (docs/operator/install.md, "The platform binaries":
// `make demo` shows the flags the local control plane needs) is one of its
// flags.
package commandtest
