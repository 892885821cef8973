package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// tasksScenarios are the conformance suite's pending scenarios of the
// io.modelcontextprotocol/tasks extension (SEP-2663). The suite does not
// score them yet; tasks-status-notifications skips itself (it waits for
// subscriptions/listen).
var tasksScenarios = []string{
	"tasks-lifecycle",
	"tasks-capability-negotiation",
	"tasks-wire-fields",
	"tasks-request-state-removal",
	"tasks-mrtr-input",
	"tasks-request-headers",
	"tasks-dispatch-and-envelope",
	"tasks-status-notifications",
	"tasks-required-task-error",
	"tasks-mrtr-composition",
}

// The suite's pending tasks scenarios, one by one, against ONE `nexus
// serve testdata/everything` endpoint; what nexus cannot pass is listed,
// with reasons, in e2e/conformance/tasks-baseline.yml.
func TestTasksConformance(t *testing.T) {
	testenv.Long(t)
	node, suite, dir := conformanceSuite(t)
	srv := startHTTP(t, nil, "serve", "--port", "0", program("everything"))
	for _, scenario := range tasksScenarios {
		t.Run(scenario, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server",
				"--url", srv.url,
				"--suite", "pending",
				"--scenario", scenario,
				"--expected-failures", filepath.Join(dir, "tasks-baseline.yml"),
				"--timeout", "60000")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("conformance --scenario %s: %v\n%s", scenario, err, out)
			}
		})
	}
}
