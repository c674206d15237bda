// Package conformancetest runs the live checks of the contract conformance
// suite (cozystack.io/contracts/conformance.Live) against this platform:
// cozystack-api in-process (apiserver/apiservertest) on the local control
// plane. Its tests install the ApplicationDefinitions of both catalogs and
// of the suite's test catalog, read as data from their directories (no Go
// import crosses the platform–catalog boundary), and create, read and
// delete one object of each kind; and they check that the live rules find
// the violations seeded in contracts/conformance/testdata/live.
package conformancetest
