// Package adfixtures decodes the 25 upstream ApplicationDefinitions that
// tests read from ../shared (testenv.UpstreamADs): All and Named. Only
// tests use it: the product never reads ../shared.
package adfixtures
