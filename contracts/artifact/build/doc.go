// Package build makes a catalog artifact from a catalog directory:
// catalog.yaml, the chart and library directories it names, and the
// definition files of applicationdefinitions/ (Build, into any oras
// target: an OCI layout or a registry). The format, and how a build is made
// reproducible, are specified in contracts/artifact/README.md ("The
// artifact", "cozypkg build and push"); `cozypkg build` and `cozypkg push`
// run it.
package build
