// Package crdsync writes the CRDs of a catalog's operator charts from
// where they are pinned, never from a hand-made copy. crds.yaml at the root
// of the catalog lists the sources; each file lands in <chart>/crds/ with a
// one-line header naming its source. Three kinds of source:
//
//   - files of a Go module (module + files): at a version crds.yaml pins
//     (fetched with `go mod download` outside the catalog module, so
//     checked against the Go checksum database without touching go.mod),
//     or at the version the catalog's go.mod requires when crds.yaml names
//     none;
//   - CRDs generated with controller-gen (module + generate: packages of a
//     module go.mod requires, at go.mod's version; controller-gen at the
//     version go.mod pins as a tool);
//   - a file of a mirror directory the user names (mirror + sha256), for
//     operators without a usable Go module; without a mirror directory
//     such a source is skipped, never guessed.
//
// Each catalog keeps its own cmd/sync-crds, whose main calls [Main]: the go
// command must run in the catalog's module, which pins the versions.
//
// # crds.yaml
//
//	sources:
//	  - chart: charts/a-operator          # chart directory, inside the catalog
//	    module: example.com/a             # a Go module path
//	    version: v1.2.3                   # optional; files sources only
//	    files: [config/crd/bases/*.yaml]  # globs inside the module
//	    exclude: ["*_internal.yaml"]      # optional globs of file names to leave out
//	  - chart: charts/b-operator
//	    module: example.com/b
//	    generate: [api/v1]                # packages inside the module
//	    options: [allowDangerousTypes=true] # optional controller-gen crd options
//	  - chart: charts/c-operator
//	    mirror: c.yaml                    # a file name in the mirror directory
//	    sha256: <64 hex digits>
//
// A generated or mirror file keeps the name controller-gen or the mirror
// gives it; a module file keeps its base name. Two sources may not write
// the same file.
//
// # Errors
//
//   - [Load]: the read error (fs.ErrNotExist when crds.yaml is missing), a
//     strict YAML error (an unknown field), or an error wrapping
//     [ErrInvalidSource] that names the file and the entry
//     ("crds.yaml: sources[2]: ...").
//   - [Resolve]: an error wrapping [ErrDigestMismatch] for a mirror file
//     whose content is not the pinned one; the go command's or
//     controller-gen's error (with its standard error); "no file matches"
//     for a glob that matches nothing; "two sources write" for a clash.
//   - [Check]: an error wrapping [ErrOutOfSync] that names every file that
//     differs, is missing, or comes from no source.
//   - [Write]: file system errors.
package crdsync
