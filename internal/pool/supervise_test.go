package pool

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Every call in flight on a process that dies fails with the reason; the
// worker starts a new process at once, and the next call succeeds on it.
func TestCrashFailsCallsInFlightAndRestarts(t *testing.T) {
	tests := []struct {
		name string
		mid  int
		args []any
		want []string // in the error of every call in flight
	}{
		{"exit status", midDie, []any{"the dice rolled off the table"}, []string{"pool py died (exit status 3); last stderr:\n", "the dice rolled off the table"}},
		{"segmentation fault", midSegfault, nil, []string{"pool py died (signal: segmentation fault); last stderr:\n", "about to crash"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTestPool(t)
			before := ts.pid(t)
			// Two calls wait in the pool when it dies.
			release := filepath.Join(t.TempDir(), "never")
			errs := make(chan error, 2)
			for range 2 {
				h, started := startedHook()
				go func() {
					_, err := ts.Call(context.Background(), 0, midWaitFor, rawArgs(t, release, "x"), h)
					errs <- err
				}()
				<-started
			}
			_, err := ts.call(t, tt.mid, tt.args...)
			for i, err := range []error{err, <-errs, <-errs} {
				wantFailure(t, fmt.Sprintf("call %d on a dead pool", i), err, tt.want...)
			}
			// The new process starts without waiting for a call.
			w := ts.group(0).workers[0]
			var fresh poolProcess
			for deadline := time.Now().Add(20 * time.Second); fresh == nil; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("no new process started after the death")
				}
				w.mu.Lock()
				if a := w.cur; a != nil && !a.unusable() {
					select {
					case <-a.done:
						fresh = a.proc
					default:
					}
				}
				w.mu.Unlock()
			}
			if after := ts.pid(t); after == before || after != fresh.pid() {
				t.Errorf("pid before %d, after %d, restarted process %d", before, after, fresh.pid())
			}
		})
	}
}

// A pool that keeps dying before it is healthy waits longer and longer
// before each start; calls meanwhile fail at once with the reason, and one
// healthy run starts the count afresh.
func TestCrashLoopBacksOff(t *testing.T) {
	testenv.Long(t)
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}}, Options{RestartDelay: 2 * time.Second})
	ts.pid(t) // healthy: it answered
	for i, want := range []string{"pool py died (exit status 3)", "pool py died (exit status 3)"} {
		if _, err := ts.call(t, midDie, "crash"); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("crash %d: %v, want %q", i+1, err, want)
		}
	}
	// Two deaths in a row without an answer between them: backing off.
	began := time.Now()
	_, err := ts.call(t, midAddOne, 1)
	wantFailure(t, "a call during the backoff", err, "pool py is down after 2 failures in a row; next start in ", "Last failure: pool py died (exit status 3); last stderr:\ncrash")
	if took := time.Since(began); took > time.Second {
		t.Errorf("the failing call took %s: it should fail at once", took)
	}
	// After the delay the pool is started again by itself, and serves.
	time.Sleep(time.Until(began.Add(2500 * time.Millisecond)))
	if got := ts.mustCall(t, midAddOne, 1); string(got) != "2" {
		t.Errorf("add_one(1) after the backoff = %s", got)
	}
	// That answer made it healthy: the next death restarts it at once.
	if _, err := ts.call(t, midDie, "crash"); err == nil {
		t.Fatal("die succeeded")
	}
	if got := ts.mustCall(t, midAddOne, 2); string(got) != "3" {
		t.Errorf("add_one(2) after a death following a healthy run = %s", got)
	}
}

// A pool that cannot start is tried again by the next call, then waits out
// a growing delay, during which calls fail at once with its start failure.
func TestFailingStartBacksOff(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "exits.py"}}, Options{RestartDelay: 10 * time.Second})
	// The first call waits for Start's own attempt: the first failure. The
	// second starts the pool again at once: the second failure.
	for i := range 2 {
		_, err := ts.call(t, midPID)
		if err == nil || !strings.HasPrefix(err.Error(), "pool py failed to start: exited before it was ready (exit status 1)") {
			t.Fatalf("call %d: %v, want the start failure", i+1, err)
		}
	}
	began := time.Now()
	_, err := ts.call(t, midPID)
	if err == nil || !strings.HasPrefix(err.Error(), "pool py is down after 2 failures in a row; next start in ") ||
		!strings.Contains(err.Error(), "Last failure: pool py failed to start: exited before it was ready (exit status 1); last stderr:\nloading the model") {
		t.Fatalf("third call: %v, want the backoff with the start failure", err)
	}
	if took := time.Since(began); took > time.Second {
		t.Errorf("the call during the backoff took %s", took)
	}
}

func TestRestartDelays(t *testing.T) {
	var b backoff
	o := &Options{RestartDelay: 100 * time.Millisecond, MaxRestartDelay: 30 * time.Second}
	boom := errors.New("boom")
	want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	for i, d := range want {
		if got := b.failed(boom, false, o); got != d {
			t.Errorf("failure %d: delay %s, want %s", i+1, got, d)
		}
	}
	for range 100 {
		b.failed(boom, false, o)
	}
	if got := b.failed(boom, false, o); got != 30*time.Second {
		t.Errorf("after 106 failures: delay %s, want the 30s cap", got)
	}
	if got := b.failed(boom, true, o); got != 0 {
		t.Errorf("a failure after a healthy run: delay %s, want 0", got)
	}
}
