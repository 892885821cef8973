// Package testenv owns the two rules by which nexus's tests meet this
// machine (issue 12): what a test does when a tool it needs is missing, and
// which tests the fast tier (go test -short ./...) leaves out. Only tests
// import it.
package testenv

import "testing"

// MissingTool stops a test that needs a tool this machine lacks (R, g++,
// Node, a built pool). Under -short it is skipped, saying why; in the full
// run it fails, since make test installs everything first: a skip there
// would make the run say less than it seems.
func MissingTool(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why + " (skipped under -short)")
	}
	t.Fatal(why + ": make test installs what the tests need (scripts/install-deps.sh); go test -short skips this test instead")
}

// Long keeps a test out of the fast tier: under -short it is skipped;
// make test runs it. Soak, orphan, conformance, long timeout tests and
// those that take seconds are long.
func Long(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("a long test: make test runs it, go test -short does not")
	}
}
