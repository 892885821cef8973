package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// A broken pool is reported on stderr when nexus starts, its calls get
// isError with the same reason, and the program's other pool keeps serving
// (testdata/bad/README.md).
func TestBadPrograms(t *testing.T) {
	testenv.Long(t)
	bad := func(name string) string { return program(filepath.Join("bad", name)) }
	tests := []struct {
		name   string
		flags  []string
		tool   string
		stderr string // on stderr from the start, before any call
		reply  []string
	}{
		{"missing-executable", nil, "native",
			"pool cpp failed to start: " + bad("missing-executable") + "/pools/cpp/pool-cpp.out not found — build the program first",
			[]string{"pool cpp failed to start: " + bad("missing-executable") + "/pools/cpp/pool-cpp.out not found — build the program first"}},
		{"no-interpreter", nil, "native",
			"pool py failed to start: python9-nexus-missing is not installed (there is no python9-nexus-missing in PATH)",
			[]string{"pool py failed to start: python9-nexus-missing is not installed (there is no python9-nexus-missing in PATH)"}},
		{"exits-at-once", nil, "native",
			`pool py failed to start: exited before it was ready (exit status 1); last stderr:\nloading the model from weights.bin\nFileNotFoundError`,
			[]string{"pool py failed to start: exited before it was ready (exit status 1); last stderr:\nloading the model from weights.bin\nFileNotFoundError: [Errno 2] No such file or directory: 'weights.bin'"}},
		// The pool must print before the start timeout: on a loaded machine
		// Python alone can take over a second to start.
		{"never-ready", []string{"--start-timeout", "10s"}, "native",
			`pool py never became ready within 10s; last stderr:\nwarming up the cache`,
			[]string{"pool py never became ready within 10s; last stderr:\nwarming up the cache"}},
		{"unknown-mid", nil, "ghost",
			`msg="pool lacks a function the manifest gives it: calls to it will fail" pool=py command=ghost mid=42`,
			[]string{"unknown mid 42 (this pool has 1, 2, 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, bad(tt.name), tt.flags...)
			s.handshake()
			for deadline := time.Now().Add(time.Minute); !strings.Contains(s.stderr.String(), tt.stderr); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("stderr never said %q:\n%s", tt.stderr, s.stderr.String())
				}
			}
			if n := s.mustInt(1, "ok", map[string]any{"_1": 1}); n != 2 {
				t.Errorf("ok(1) on the working pool = %d", n)
			}
			text, isErr := s.callTool(2, tt.tool, map[string]any{"_1": 1})
			if !isErr {
				t.Errorf("%s succeeded: %s", tt.tool, text)
			}
			for _, want := range tt.reply {
				if !strings.Contains(text, want) {
					t.Errorf("%s: %q lacks %q", tt.tool, text, want)
				}
			}
			if n := s.mustInt(3, "ok", map[string]any{"_1": 2}); n != 3 {
				t.Errorf("ok(2) after the failed call = %d", n)
			}
			if r := s.request(4, "ping", nil); r["result"] == nil {
				t.Errorf("ping: %v", r)
			}
		})
	}
}
