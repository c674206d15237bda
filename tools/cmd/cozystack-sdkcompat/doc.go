// Command cozystack-sdkcompat keeps the public SDK module cozystack.io/sdk
// compatible between its releases (package
// cozystack.io/tools/internal/sdkcompat; sdk/backup/README.md, "SDK compatibility").
//
//	cozystack-sdkcompat check      the tree against the previous release's baseline
//	cozystack-sdkcompat canary     prove check fails on a removed function and a renamed CRD field
//	cozystack-sdkcompat baseline   cut sdk/compat/v<sdk/VERSION>/ from the tree
//
// Every command takes --root (the repository; default: the one the
// working directory is in) and -o table|json (table by default). The
// result goes to stdout, an error to stderr as "error: <message>".
//
// Exit status: 0 when the check passes (compatible changes included), the
// canary proved the check works, or the baseline was written; 1 when the
// check found an incompatible change no decision accepts (or a version
// that breaks the versioning rule), a canary step did not do what it must,
// or baseline refused to cut; 2 on a usage error (an unknown command or
// flag, an argument, a bad -o) or a setup error (no sdk/VERSION, no
// baseline, a package that does not compile, apidiff not buildable).
package main
