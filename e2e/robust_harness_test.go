package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// callTool sends tools/call and returns the reply's text and isError.
func (s *server) callTool(id int, name string, args map[string]any) (string, bool) {
	s.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return toolText(s.t, s.request(id, "tools/call", map[string]any{"name": name, "arguments": args}))
}

// sendCall sends tools/call without waiting for the reply.
func (s *server) sendCall(id any, name string, args map[string]any) {
	s.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		s.t.Fatal(err)
	}
	s.send(string(b))
}

// recvWithin returns the next stdout line, or false when none comes within d.
func (s *server) recvWithin(d time.Duration) (string, bool) {
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("nexus closed stdout; stderr:\n%s", s.stderr.String())
		}
		return strings.TrimSuffix(string(line), "\n"), true
	case <-time.After(d):
		return "", false
	}
}

// waitForStderr waits until nexus's stderr holds text n times.
func (s *server) waitForStderr(text string, n int) {
	s.t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); strings.Count(s.stderr.String(), text) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			s.t.Fatalf("stderr does not say %q %d times within 2 minutes:\n%s", text, n, s.stderr.String())
		}
	}
}

// mustInt calls a tool that returns an integer.
func (s *server) mustInt(id int, name string, args map[string]any) int {
	s.t.Helper()
	text, isErr := s.callTool(id, name, args)
	var n int
	if isErr || json.Unmarshal([]byte(text), &n) != nil {
		s.t.Fatalf("%s: %q (isError %v), want an integer", name, text, isErr)
	}
	return n
}

// waitForDescendant waits until nexus has a descendant whose command line
// contains want, and returns every descendant then.
func waitForDescendant(t *testing.T, pid int, want string) map[int]string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		kids := descendants(pid)
		for _, c := range kids {
			if strings.Contains(c, want) {
				return kids
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no descendant of %d runs %q: %v", pid, want, kids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// isPythonPool reports whether a command line is a Python pool's own
// process: not the bash of a pyenv shim on its way to it (nor one of the
// subshells that shim forks), which has pool.py in its command line too.
func isPythonPool(cmdline string) bool {
	return strings.Contains(cmdline, "pool.py") && !strings.Contains(cmdline, "libexec/pyenv")
}

// waitForPythonPools waits until n Python pool processes descend from pid,
// and returns all its descendants. Pools a call did not ask for start once
// the called one is ready, so a test that wants them all waits for them.
func waitForPythonPools(t *testing.T, pid, n int) map[int]string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		kids := descendants(pid)
		found := 0
		for _, c := range kids {
			if isPythonPool(c) {
				found++
			}
		}
		if found >= n {
			return kids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Python pools descend from %d, want %d: %v", found, pid, n, kids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// unruly is the program whose functions crash, hang and spawn children.
func unruly() string { return program("bad/unruly") }

func fmtPID(pid int) string { return fmt.Sprint(pid) }
