package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// conformanceDir holds the pinned conformance suite and Node 22, installed
// by scripts/install-deps.sh (npm ci in e2e/conformance).
func conformanceDir() string { return filepath.Join(repoRoot, "e2e", "conformance") }

// The official MCP conformance suite, both requirement sets, against ONE
// `nexus serve` endpoint serving both protocol eras. Failures the server
// cannot avoid are listed, with reasons, in e2e/conformance/baseline.yml;
// the suite fails on any other failure and on a baseline entry that passes.
func TestHTTPConformance(t *testing.T) {
	testenv.Long(t)
	dir := conformanceDir()
	node := filepath.Join(dir, "node_modules", ".bin", "node")
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, f := range []string{node, suite} {
		if _, err := os.Stat(f); err != nil {
			msg := "the MCP conformance suite is not installed (" + f + "): run scripts/install-deps.sh"
			testenv.MissingTool(t, msg)
		}
	}
	srv := startHTTP(t, nil, "serve", "--port", "0", program("everything"))
	for _, requirements := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(requirements, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server",
				"--url", srv.url,
				"--requirements", requirements,
				"--expected-failures", filepath.Join(dir, "baseline.yml"),
				"--timeout", "20000")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("conformance --requirements %s: %v\n%s", requirements, err, out)
			}
			pass, all := scenarioScore(string(out))
			t.Logf("requirements %s: %d of %d scenarios pass (the rest are in baseline.yml)", requirements, pass, all)
		})
	}
}

// scenarioScore counts the scenarios of a suite run's summary ("✓ name: 3
// passed, 0 failed" or "✗ ..."), and those that passed.
func scenarioScore(out string) (pass, all int) {
	_, summary, _ := strings.Cut(out, "=== SUMMARY ===")
	for line := range strings.SplitSeq(summary, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "✓ "):
			pass++
			all++
		case strings.HasPrefix(line, "✗ "):
			all++
		}
	}
	return pass, all
}
