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
	node, suite, dir := conformanceSuite(t)
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
			// The score is over the scenarios the requirements set scores
			// (its server list); the others run too, not scored (pending
			// ones, the tasks extension). Every scored one passes.
			scored := scoredScenarios(t, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "requirements", requirements+".yaml"))
			passed := passedScenarios(string(out))
			var failed []string
			for _, sc := range scored {
				if !passed[sc] {
					failed = append(failed, sc)
				}
			}
			if len(failed) > 0 {
				t.Errorf("requirements %s: scored scenarios not passed: %v", requirements, failed)
			}
			t.Logf("requirements %s: %d of %d scored scenarios pass; %d of %d run", requirements, len(scored)-len(failed), len(scored), pass, all)
		})
	}
}

// scoredScenarios reads the server scenarios a requirements file scores:
// the items of its top-level "server:" list.
func scoredScenarios(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the suite's requirements: %v", err)
	}
	var out []string
	in := false
	for line := range strings.SplitSeq(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "server:"):
			in = true
		case in && strings.HasPrefix(line, "  - "):
			out = append(out, strings.TrimSpace(strings.TrimPrefix(line, "  - ")))
		case in && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, " "):
			in = false
		}
	}
	if len(out) == 0 {
		t.Fatalf("no scored server scenarios in %s", path)
	}
	return out
}

// passedScenarios are the scenarios a run's summary marks passed ("✓ name: ...").
func passedScenarios(out string) map[string]bool {
	_, summary, _ := strings.Cut(out, "=== SUMMARY ===")
	passed := map[string]bool{}
	for line := range strings.SplitSeq(summary, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "✓ "); ok {
			name, _, _ := strings.Cut(rest, ":")
			passed[name] = true
		}
	}
	return passed
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
