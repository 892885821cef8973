package e2e

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// However nexus ends, its pools end with it, and so do the processes their
// functions started (docs/internals.md, "Process group and death").
func TestNoOrphansAfterMCP(t *testing.T) {
	testenv.Long(t)
	tests := []struct {
		name   string
		end    func(s *server)
		status string // nexus's exit, as exec reports it; "" for 0
	}{
		{"stdin closed", func(s *server) { s.stdin.Close() }, ""},
		{"SIGTERM", func(s *server) { s.cmd.Process.Signal(syscall.SIGTERM) }, ""},
		{"SIGINT", func(s *server) { s.cmd.Process.Signal(syscall.SIGINT) }, ""},
		{"SIGHUP", func(s *server) { s.cmd.Process.Signal(syscall.SIGHUP) }, ""},
		{"SIGKILL", func(s *server) { s.cmd.Process.Kill() }, "signal: killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, unruly(), "--workers", "2")
			s.handshake()
			// Two pool processes, one with a child of its own, both busy
			// (except when stdin closes: nexus would wait for the calls).
			child := s.mustInt(1, "spawn", nil)
			if tt.name != "stdin closed" {
				s.sendCall(2, "slow", map[string]any{"_1": 60000})
				s.sendCall(3, "slow", map[string]any{"_1": 60000})
			}
			waitForDescendant(t, s.cmd.Process.Pid, "sleep 300")
			kids := waitForPythonPools(t, s.cmd.Process.Pid, 2)
			pools := 0
			for _, c := range kids {
				if isPythonPool(c) {
					pools++
				}
			}
			if pools != 2 || kids[child] == "" {
				t.Fatalf("before: want two pools and the child %d among %v", child, kids)
			}
			tt.end(s)
			select {
			case <-s.done:
			case <-time.After(20 * time.Second):
				t.Fatal("nexus did not exit")
			}
			got := ""
			if s.exit != nil {
				got = s.exit.Error()
			}
			if got != tt.status {
				t.Errorf("nexus exit %q, want %q", got, tt.status)
			}
			waitGone(t, kids)
		})
	}
}

// The same for a CLI run, whose call is running when nexus is told to stop:
// it stops the call and its pools itself, and says which signal stopped it.
func TestNoOrphansAfterRun(t *testing.T) {
	testenv.Long(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(nexusBin, "run", unruly(), "spawnAndWait")
			stderr := &syncBuffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			kids := waitForDescendant(t, cmd.Process.Pid, "sleep 300")
			cmd.Process.Signal(sig)
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("nexus run did not exit on %s; stderr:\n%s", sig, stderr)
			}
			if sig != syscall.SIGKILL {
				want := "nexus: spawnAndWait: " + sig.String() + " signal received"
				if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), want) {
					t.Errorf("nexus run on %s: %v, stderr %q; want exit 1 saying %q", sig, err, stderr, want)
				}
			}
			waitGone(t, kids)
		})
	}
}

// A run started with SIGHUP ignored (nohup) keeps ignoring it: it was asked
// to outlive its terminal, and its call finishes.
func TestRunUnderNohupOutlivesHangup(t *testing.T) {
	testenv.Long(t)
	cmd := exec.Command("/bin/sh", "-c", `trap '' HUP; exec "$0" run "$1" block 2`, nexusBin, unruly())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitForPythonPools(t, cmd.Process.Pid, 1) // nexus runs (sh has exec'd it) and its call is on its way
	cmd.Process.Signal(syscall.SIGHUP)
	select {
	case err := <-done:
		if err != nil || stdout.String() != "2\n" {
			t.Errorf("nexus run under nohup, sent SIGHUP: %v, stdout %q, stderr:\n%s; want 2 and exit 0", err, stdout, stderr)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("nexus run did not finish its 2s call; stderr:\n%s", stderr)
	}
}

// The same with pools in every language, each with a child of its own: R
// cannot catch SIGTERM and the C++ runtime does not kill its group, so on
// SIGKILL it is nexus's reaper that ends their children.
func TestNoOrphansAnyLanguage(t *testing.T) {
	testenv.Long(t)
	p := newPolyglot(t)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			s := startServer(t, p.dir)
			s.handshake()
			children := map[int]string{}
			for i, lang := range p.langs {
				children[s.mustInt(i+1, lang+"Spawn", nil)] = lang
			}
			// R's child was started by a shell that has exited: it is no
			// one's descendant any more, but it is in its pool's group.
			kids := descendants(s.cmd.Process.Pid)
			for pid, lang := range children {
				if !testenv.Running(pid) {
					t.Fatalf("the %s pool's child %d is not running", lang, pid)
				}
				kids[pid] = "child of the " + lang + " pool"
			}
			s.cmd.Process.Signal(sig)
			select {
			case <-s.done:
			case <-time.After(20 * time.Second):
				t.Fatal("nexus did not exit")
			}
			waitGone(t, kids)
		})
	}
}
