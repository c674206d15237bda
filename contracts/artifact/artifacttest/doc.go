// Package artifacttest makes catalog artifact parts for tests of the
// artifact format and of what pulls it: large chart archives of random,
// incompressible data, written as a stream so a test never holds one in
// memory either.
package artifacttest
