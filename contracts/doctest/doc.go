// Package doctest reads this repository's Markdown documents for the tests
// that check what they say against the code: a test names the file (a
// slash-separated path from the repository root, such as
// "docs/operator/catalogs.md") and the heading of the section it checks,
// so a section that moves moves its test with one edit.
//
// The repository root is the nearest directory above the working directory
// that holds go.work beside sdk/localcp/versions.yaml (Root, the rule of
// sdk/localcp.RepoRoot); a document or heading that is missing fails the test,
// naming it. Headings inside fenced code blocks are not headings.
package doctest
