package pool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// callWith runs one call with options and a generous overall bound.
func (ts *testSet) callWith(t *testing.T, mid int, opts CallOptions, args ...any) (json string, err error, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	began := time.Now()
	v, err := ts.CallWith(ctx, 0, mid, rawArgs(t, args...), opts)
	return string(v.JSON), err, time.Since(began)
}

func TestShortDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "30s"},
		{5 * time.Minute, "5m"},
		{90 * time.Second, "1m30s"},
		{2 * time.Hour, "2h"},
		{150 * time.Millisecond, "150ms"},
		{1500 * time.Millisecond, "1.5s"},
	}
	for _, tt := range tests {
		if got := shortDuration(tt.d); got != tt.want {
			t.Errorf("shortDuration(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// A call that overruns its timeout returns at once with a message naming
// it. A call that stops when cancelled leaves its process in service.
func TestTimeoutOfCooperativeCall(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}}, Options{CancelGrace: 5 * time.Second})
	before := ts.pid(t)
	marker := filepath.Join(t.TempDir(), "marker")
	_, err, took := ts.callWith(t, midSleepUntilCancelled, CallOptions{Name: "longSum", Timeout: 300 * time.Millisecond}, marker)
	var te *TimeoutError
	if !errors.As(err, &te) || err.Error() != "call to 'longSum' timed out after 300ms" {
		t.Fatalf("error %v (%T), want call to 'longSum' timed out after 300ms", err, err)
	}
	if took > 3*time.Second {
		t.Errorf("the call took %s to time out", took)
	}
	waitForFile(t, marker, "cancelled")
	if after := ts.pid(t); after != before {
		t.Errorf("the pool was replaced (pid %d, then %d) though its call stopped", before, after)
	}
	if logs := ts.logs.String(); strings.Contains(logs, "stuck") {
		t.Errorf("a call that stopped was reported stuck:\n%s", logs)
	}
}

// A call that does not stop when its timeout cancels it gets its process
// replaced: new calls go to a fresh process at once, while the calls
// already running in the old one finish there undisturbed.
func TestTimeoutReplacesStuckProcess(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}}, Options{CancelGrace: 300 * time.Millisecond})
	old := ts.pid(t)
	// A call that keeps running in the old process.
	release := filepath.Join(t.TempDir(), "release")
	h, started := startedHook()
	other := make(chan error, 1)
	go func() {
		v, err := ts.Call(context.Background(), 0, midWaitFor, rawArgs(t, release, "undisturbed"), h)
		if err == nil && string(v) != `"undisturbed"` {
			err = errors.New("wrong value " + string(v))
		}
		other <- err
	}()
	<-started
	// time.sleep cannot be interrupted: this call is stuck.
	_, err, _ := ts.callWith(t, midSlowPID, CallOptions{Name: "hang", Timeout: 200 * time.Millisecond}, 3600)
	if err == nil || err.Error() != "call to 'hang' timed out after 200ms" {
		t.Fatalf("error %v, want the timeout", err)
	}
	// After the grace, the worker has a fresh process.
	var fresh int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if fresh = ts.pid(t); fresh != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stuck process was never replaced")
		}
	}
	ts.waitForLog(t, `msg="replacing a stuck pool process" pool=py pid=`+strconv.Itoa(old)+` why="call to 'hang' did not stop within 300ms of being timed out"`)
	// The old process still runs the other call, which succeeds.
	if !processAlive(old) {
		t.Fatalf("the old process %d was killed while a call ran in it", old)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-other:
		if err != nil {
			t.Fatalf("the call in the old process: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call in the old process never returned")
	}
	// Then the old process, stuck call and all, is stopped.
	if !processGone(old, 10*time.Second) {
		t.Errorf("the retired process %d still runs after its last call", old)
	}
	if got := ts.mustCall(t, midAddOne, 1); string(got) != "2" {
		t.Errorf("add_one(1) on the fresh process = %s", got)
	}
}

// A caller's cancel gets the same treatment as a timeout.
func TestCancelledStuckCallReplacesProcess(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}}, Options{CancelGrace: 200 * time.Millisecond})
	old := ts.pid(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := ts.Call(ctx, 0, midSlowPID, rawArgs(t, 3600), Hooks{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's", err)
	}
	if !processGone(old, 20*time.Second) {
		t.Fatalf("the process %d with a stuck cancelled call is still running", old)
	}
	if fresh := ts.pid(t); fresh == old {
		t.Errorf("still served by %d", old)
	}
}

func TestTimeoutWhileStarting(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "silent.py"}}, Options{CallTimeout: 200 * time.Millisecond})
	_, err, took := ts.callWith(t, midPID, CallOptions{})
	if err == nil || err.Error() != "call to mid 9 of pool py timed out after 200ms while pool py was starting" {
		t.Fatalf("error %v, want the timeout while starting", err)
	}
	if took > 3*time.Second {
		t.Errorf("took %s", took)
	}
	// A negative Timeout overrides the set's: the call waits for the start
	// (and here fails when the start times out instead).
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := ts.CallWith(ctx, 0, midPID, nil, CallOptions{Timeout: -1}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("without a timeout: %v, want the context's deadline", err)
	}
}

// In a pool that runs one call at a time, calls queued behind a stuck one
// never began: "concurrent": false lets nexus send them to the fresh
// process; without the member it cannot know, so they fail with the reason.
func TestStuckSequentialPool(t *testing.T) {
	testenv.Long(t)
	tests := []struct {
		claim   string
		wantErr string // for the queued call; "" means it succeeds
	}{
		{"false", ""},
		{"none", "pool py was replaced: call to 'block' did not stop within 300ms of being timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.claim, func(t *testing.T) {
			steer := t.TempDir()
			if err := os.WriteFile(filepath.Join(steer, "open"), nil, 0o644); err != nil { // no process is held
				t.Fatal(err)
			}
			ts := startTestSet(t, Spec{Exec: []string{"python3", "sequential.py", tt.claim, steer}}, Options{CancelGrace: 300 * time.Millisecond})
			old := seqPID(t, ts)
			blocked := make(chan error, 1)
			go func() {
				_, err, _ := ts.callWith(t, 2, CallOptions{Name: "block", Timeout: 300 * time.Millisecond}, 3600)
				blocked <- err
			}()
			waitForPath(t, filepath.Join(steer, "blocking")) // the block call goes first
			v, err, _ := ts.callWith(t, 1, CallOptions{Name: "addOne"}, 41)
			if berr := <-blocked; berr == nil || berr.Error() != "call to 'block' timed out after 300ms" {
				t.Errorf("the blocking call: %v, want its timeout", berr)
			}
			if tt.wantErr == "" {
				if err != nil || v != "42" {
					t.Errorf("the queued call: %s, %v; want 42 from the fresh process", v, err)
				}
			} else if err == nil || err.Error() != tt.wantErr {
				t.Errorf("the queued call: %s, %v; want error %q", v, err, tt.wantErr)
			}
			if !processGone(old, 10*time.Second) {
				t.Errorf("the stuck process %d still runs", old)
			}
			if fresh := seqPID(t, ts); fresh == old {
				t.Errorf("still served by %d", old)
			}
		})
	}
}

// A call waiting to be written to a pool that is busy (one call at a time,
// not reading) can still be cancelled, however big its arguments.
func TestCancelWhileThePipeIsFull(t *testing.T) {
	testenv.Long(t)
	steer := t.TempDir()
	ts := startTestSet(t, Spec{Exec: []string{"python3", "sequential.py", "false", steer}}, Options{CancelGrace: 10 * time.Second})
	seqPID(t, ts)
	go ts.CallWith(context.Background(), 0, 2, rawArgs(t, 8), CallOptions{}) //nolint:errcheck // keeps the pool busy for 8s
	waitForPath(t, filepath.Join(steer, "blocking"))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := ts.CallWith(ctx, 0, 4, rawArgs(t, strings.Repeat("x", 4<<20)), CallOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's deadline", err)
	}
	if took := time.Since(began); took > 5*time.Second { // waiting for the pipe takes the block's 8s
		t.Errorf("the cancelled call took %s: it waited for the pipe", took)
	}
	// The pool is fine afterwards.
	if v, err, _ := ts.callWith(t, 1, CallOptions{}, 1); err != nil || v != "2" {
		t.Errorf("add_one after: %s, %v", v, err)
	}
}

// A call queued behind a stuck one in a sequential pool is answered by the
// fresh process however long that takes to start, and while another pool
// of the set is being replaced at the same moment: no reply is dropped,
// however loaded the machine. The interleaving is forced: the fresh
// process is held before its ready message until both pools have been
// replaced and the queued call is seen still waiting.
func TestQueuedCallOutlivesASlowReplacement(t *testing.T) {
	testenv.Long(t)
	testenv.NeedPython(t)
	steer := t.TempDir()
	dir := testdataDir(t)
	set := startLoggedSet(t, []Spec{
		{Index: 0, Lang: "py", Exec: []string{"python3", "sequential.py", "false", steer}, Dir: dir},
		{Index: 1, Lang: "py", Exec: []string{"python3", "pool.py"}, Dir: dir},
	}, Options{CancelGrace: 300 * time.Millisecond, StartTimeout: 2 * time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := func(pool, mid int, timeout time.Duration, args ...any) (string, error) {
		v, err := set.CallWith(ctx, pool, mid, rawArgs(t, args...), CallOptions{Timeout: timeout})
		return string(v.JSON), err
	}
	old, err := call(0, 3, 0) // the sequential pool's pid
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(1, midPID, 0); err != nil {
		t.Fatal(err)
	}

	blocked := make(chan error, 1)
	go func() { _, err := call(0, 2, 300*time.Millisecond, 3600); blocked <- err }()
	waitForPath(t, filepath.Join(steer, "blocking"))
	type reply struct {
		v   string
		err error
	}
	queued := make(chan reply, 1)
	go func() { v, err := call(0, 1, 0, 41); queued <- reply{v, err} }()
	// A stuck call in the other pool: it is replaced at the same moment.
	if _, err := call(1, midSlowPID, 300*time.Millisecond, 3600); err == nil { // deaf to cancel: one C call
		t.Fatal("slow_pid(3600) returned")
	}
	if err := <-blocked; err == nil || err.Error() != "call to mid 2 of pool py timed out after 300ms" {
		t.Errorf("the blocking call: %v, want its timeout", err)
	}
	for deadline := time.Now().Add(time.Minute); strings.Count(set.logs.String(), "replacing a stuck pool process") < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the two stuck processes were not both replaced")
		}
	}
	held, err := filepath.Glob(filepath.Join(steer, "held.*"))
	for deadline := time.Now().Add(time.Minute); err == nil && len(held) == 0; held, err = filepath.Glob(filepath.Join(steer, "held.*")) {
		if time.Now().After(deadline) {
			t.Fatal("no fresh sequential process started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case r := <-queued:
		t.Fatalf("the queued call returned %q, %v while no process could run it", r.v, r.err)
	default:
	}
	if err := os.WriteFile(filepath.Join(steer, "open"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := <-queued; r.err != nil || r.v != "42" {
		t.Fatalf("the queued call: %q, %v; want 42 from the fresh process", r.v, r.err)
	}
	if fresh, err := call(0, 3, 0); err != nil || fresh == old || "held."+fresh != filepath.Base(held[0]) {
		t.Errorf("the sequential pool is served by %s (%v), want the held process %s, not %s", fresh, err, held[0], old)
	}
	if v, err := call(1, midAddOne, 0, 1); err != nil || v != "2" {
		t.Errorf("the other pool after its replacement: %q, %v", v, err)
	}
}

// waitForPath waits until a test pool reports an event by making path.
func waitForPath(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within a minute", path)
		}
	}
}

func seqPID(t *testing.T, ts *testSet) int {
	t.Helper()
	v, err, _ := ts.callWith(t, 3, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(v)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	if got := readWhenWritten(path); string(got) != want {
		t.Errorf("%s holds %q, want %q", path, got, want)
	}
}

func (ts *testSet) waitForLog(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(ts.logs.String(), want); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("logs lack %q:\n%s", want, ts.logs)
			return
		}
	}
}

func processAlive(pid int) bool { return !processGone(pid, 0) }

// A Spec's Functions name calls and bound them; CallOptions override.
func TestTimeoutFromSpec(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}, Functions: map[int]Function{
		midSleepUntilCancelled: {Name: "crunch", Timeout: 200 * time.Millisecond},
		midAddOne:              {Name: "addOne", Timeout: -1},
	}}, Options{CallTimeout: time.Hour})
	ts.pid(t) // started: the timeouts below are the calls', not the start's
	marker := filepath.Join(t.TempDir(), "m")
	if _, err := ts.call(t, midSleepUntilCancelled, marker); err == nil || err.Error() != "call to 'crunch' timed out after 200ms" {
		t.Errorf("Call: %v, want the Function's name and timeout", err)
	}
	if _, err, _ := ts.callWith(t, midSleepUntilCancelled, CallOptions{Name: "other", Timeout: 100 * time.Millisecond}, marker); err == nil || err.Error() != "call to 'other' timed out after 100ms" {
		t.Errorf("CallWith: %v, want the options' name and timeout", err)
	}
	if got := ts.mustCall(t, midAddOne, 1); string(got) != "2" {
		t.Errorf("add_one = %s", got)
	}
}
