// Package adwatcher keeps the application API's set of served kinds in
// step with the ApplicationDefinitions in the cluster, and reports on each
// AD whether its kind is served (condition Served, K1). ADs are watched:
// kinds come and go at run time, without a restart, and a bad AD disables
// only its own kind, with Served=False and a reason, while every other
// kind keeps serving (contracts/schemas/v1alpha1/k1-application.md, "The
// AD", status).
//
// A kind never leaves while it has applications: every AD carries
// v1alpha1.FinalizerApplications, and a deleted AD whose kind still has
// applications stays served, with reason Terminating naming how many and
// where, until the last is deleted (contract K1, "Lifecycle of a kind").
package adwatcher
