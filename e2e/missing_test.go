package e2e

import "testing"

// missingTool stops a test that needs a tool this machine lacks (R, g++,
// Node, a built pool). Under -short it is skipped, saying why; in the full
// run it fails, since make test installs everything first (issue 12: a
// skip there would make the run say less than it seems).
func missingTool(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why + " (skipped under -short)")
	}
	t.Fatal(why + ": make test installs what the tests need (scripts/install-deps.sh); go test -short skips this test instead")
}

// longTest keeps a test out of the fast tier: under -short (go test -short
// ./..., README) it is skipped; make test runs it. Soak, orphan, conformance,
// long timeout tests and those that take seconds are long.
func longTest(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("a long test: make test runs it, go test -short does not")
	}
}
