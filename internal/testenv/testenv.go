// Package testenv owns the rules by which nexus's tests meet this machine:
// what a test does when a tool it needs is missing, which tests the fast
// tier (go test -short ./...) leaves out, where the tools that are not on
// PATH live (morloc 0.69.0), the scratch cache a test binary runs with
// (not the developer's), and what its processes are (/proc), for the
// tests that check that nexus leaves none behind. Only tests import it.
package testenv

import (
	"testing"

	"github.com/nexus-mcp/nexus/internal/morlocbuild"
)

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

// MorlocToolchain is the real morloc 0.69.0 that scripts/install-morloc.sh
// installs (make deps): the tests compile morloc programs with it
// (MorlocToolchain.Compile) and compare nexus with its own C nexus.
type MorlocToolchain = morlocbuild.Toolchain

// Morloc returns morloc 0.69.0's toolchain, or stops the test when it is not
// installed: skipped under -short, failed otherwise (MissingTool), saying
// what is missing and how to install it.
func Morloc(t testing.TB) MorlocToolchain {
	t.Helper()
	tc, err := morlocbuild.Installed()
	if err != nil {
		MissingTool(t, err.Error())
	}
	return tc
}
