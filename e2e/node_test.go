package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The tests that drive nexus with the TypeScript SDK or the conformance
// suite run Node scripts from two folders that scripts/install-deps.sh
// fills: e2e/tsclient (stdio clients, run by the machine's node) and
// e2e/conformance (HTTP clients and the suite, run by the Node 22 it pins).

// tsClient is node and e2e/tsclient, ready to run its TypeScript SDK
// clients; the test stops (testenv.MissingTool) when either is missing.
func tsClient(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.MissingTool(t, "node is not installed: the TypeScript SDK client cannot run")
	}
	dir = filepath.Join(repoRoot, "e2e", "tsclient")
	requireTSSDK(t, dir)
	return node, dir
}

// tsHTTPClient is the pinned node and e2e/conformance, ready to run its
// TypeScript SDK clients over Streamable HTTP.
func tsHTTPClient(t *testing.T) (node, dir string) {
	t.Helper()
	dir = conformanceDir()
	requireTSSDK(t, dir)
	return filepath.Join(dir, "node_modules", ".bin", "node"), dir
}

// requireTSSDK stops the test when the TypeScript SDK is not installed in
// dir.
func requireTSSDK(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		rel, _ := filepath.Rel(repoRoot, dir)
		testenv.MissingTool(t, "the TypeScript SDK is not installed in "+rel+": run scripts/install-deps.sh")
	}
}

// conformanceSuite is the pinned node, the conformance suite's entry point
// and e2e/conformance; the test stops when the suite is not installed.
func conformanceSuite(t *testing.T) (node, suite, dir string) {
	t.Helper()
	dir = conformanceDir()
	node = filepath.Join(dir, "node_modules", ".bin", "node")
	suite = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, f := range []string{node, suite} {
		if _, err := os.Stat(f); err != nil {
			testenv.MissingTool(t, "the MCP conformance suite is not installed ("+f+"): run scripts/install-deps.sh")
		}
	}
	return node, suite, dir
}

// runNodeJSON runs node with args in dir and reads the one JSON value the
// script prints into out; a script that fails or prints something else
// fails the test, with the script's stderr.
func runNodeJSON(t *testing.T, node, dir string, out any, args ...string) {
	t.Helper()
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", args[0], err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("node %s printed %s: %v", args[0], stdout, err)
	}
}
