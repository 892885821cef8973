package pool

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// launched reports whether pool index's first worker has begun a start.
func launched(s *Set, index int) bool {
	w := s.group(index).workers[0]
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur != nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// With StartDelay, a call's pool starts alone; the others start once it is
// ready; with no call, every pool starts when the delay has passed.
func TestStartDelay(t *testing.T) {
	testenv.NeedPython(t)
	specs := func() []Spec {
		return []Spec{
			{Index: 0, Lang: "py", Exec: []string{"python3", "pool.py"}, Dir: testdataDir(t)},
			{Index: 1, Lang: "py", Exec: []string{"python3", "pool.py"}, Dir: testdataDir(t)},
		}
	}
	t.Run("a call first", func(t *testing.T) {
		s := Start(context.Background(), specs(), quiet(Options{StartDelay: time.Hour}))
		defer s.Close()
		time.Sleep(100 * time.Millisecond)
		if launched(s, 0) || launched(s, 1) {
			t.Fatal("a pool started before any call, an hour before its delay")
		}
		if v, err := s.Call(context.Background(), 1, midAddOne, rawArgs(t, 1), Hooks{}); err != nil || string(v) != "2" {
			t.Fatalf("call: %s, %v", v, err)
		}
		waitFor(t, "the other pool to start once the called one was ready", func() bool { return launched(s, 0) })
	})

	t.Run("a call waiting past the delay", func(t *testing.T) {
		sp := specs()
		// A pool that starts once the test lets it, called at once: it is
		// still starting when the delay has passed, however slow the
		// machine. The delay leaves the call a second to come first.
		release := filepath.Join(t.TempDir(), "release")
		sp[0].Exec = []string{"python3", "-c", "import os, sys, time, runpy\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.01)\nrunpy.run_path('pool.py', run_name='__main__')", release}
		began := time.Now()
		s := Start(context.Background(), sp, quiet(Options{StartDelay: time.Second}))
		defer s.Close()
		done := make(chan error, 1)
		go func() {
			_, err := s.Call(context.Background(), 0, midAddOne, rawArgs(t, 1), Hooks{})
			done <- err
		}()
		time.Sleep(time.Until(began.Add(1500 * time.Millisecond))) // past the delay
		if launched(s, 1) {
			t.Error("the other pool started while the called one was still starting, past the delay")
		}
		if err := os.WriteFile(release, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the other pool to start once the called one was ready", func() bool { return launched(s, 1) })
	})

	t.Run("no call", func(t *testing.T) {
		s := Start(context.Background(), specs(), quiet(Options{StartDelay: 200 * time.Millisecond}))
		defer s.Close()
		waitFor(t, "both pools to start after the delay", func() bool { return launched(s, 0) && launched(s, 1) })
	})
}

// Stopping a pool that is still starting does not wait for it to notice:
// it has nothing to finish.
func TestCloseWhileStarting(t *testing.T) {
	testenv.NeedPython(t)
	s := Start(context.Background(), []Spec{{Index: 0, Lang: "py", Exec: []string{"python3", "silent.py"}, Dir: testdataDir(t)}},
		quiet(Options{StartTimeout: time.Minute, StopGrace: 10 * time.Second}))
	waitFor(t, "the pool to start starting", func() bool { return launched(s, 0) })
	time.Sleep(200 * time.Millisecond) // python3 is up, sleeping before any ready
	began := time.Now()
	s.Close()
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("Close took %s: it waited out the stop grace for a pool that never became ready", took)
	}
}
