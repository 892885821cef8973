package pool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// callerInput stands for nexus's stdin in a call waiting inline: a pipe
// the test writes to, and a Yield that, as mcp's, hands the input over the
// first time only, and counts how often it was called.
type callerInput struct {
	r, w   *os.File
	yields atomic.Int32
}

func newCallerInput(t *testing.T) *callerInput {
	t.Helper()
	r, w := testPipe(t)
	return &callerInput{r: r, w: w}
}

func (ci *callerInput) inline() *Inline {
	return &Inline{Fd: int(ci.r.Fd()), Yield: func() bool { return ci.yields.Add(1) == 1 }}
}

// onlyProcess is the live process of the Set's one worker.
func (ts *testSet) onlyProcess(t *testing.T) *process {
	t.Helper()
	w := ts.group(0).workers[0]
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.cur.proc.(*process)
	if !ok {
		t.Fatalf("the worker's process is a %T", w.cur.proc)
	}
	return p
}

func (ts *testSet) inlineCall(ctx context.Context, t *testing.T, ci *callerInput, opts CallOptions, mid int, args ...any) (string, error) {
	t.Helper()
	opts.Inline = ci.inline()
	v, err := ts.CallWith(ctx, 0, mid, rawArgs(t, args...), opts)
	return string(v.JSON), err
}

// rdState is who reads p's fd 4, and how many calls took it so far.
func (p *process) rdState() (readerState, uint64) {
	p.rd.mu.Lock()
	defer p.rd.mu.Unlock()
	return p.rd.state, p.rd.takes
}

// holdReclaim makes the processes t starts from now on leave a free fd 4
// free for 2 s, not 20 ms: a loaded machine's pause between two calls must
// not count as calls stopping. It is put back after the pools' Close
// (cleanups run last-registered first), so call it before startTestPool.
func holdReclaim(t *testing.T) {
	old := reclaimAfter
	t.Cleanup(func() { reclaimAfter = old })
	reclaimAfter = 2 * time.Second
}

// warmUpInline makes calls given an Inline until readLoop has let go of
// fd 4, so that the next such call reads its own reply, and returns the
// process. readLoop lets go after a reply only if a call asked for it
// before that reply was read; a fast reply can beat the asking, and then
// the next call waits the ordinary way too. Each call that does must
// yield; readLoop lets go within a few.
func (ts *testSet) warmUpInline(t *testing.T) *process {
	t.Helper()
	if _, err := ts.inlineCall(context.Background(), t, newCallerInput(t), CallOptions{}, midAddOne, 1); err != nil {
		t.Fatal(err)
	}
	p := ts.onlyProcess(t)
	for i := 0; ; i++ {
		if state, _ := p.rdState(); state == readerFree {
			return p
		}
		if i == 10 {
			t.Fatal("readLoop still holds fd 4 after 10 calls that asked to wait inline")
		}
		ci := newCallerInput(t)
		_, before := p.rdState()
		if _, err := ts.inlineCall(context.Background(), t, ci, CallOptions{}, midAddOne, 1); err != nil {
			t.Fatal(err)
		}
		if _, after := p.rdState(); after == before && ci.yields.Load() == 0 {
			t.Error("a call that waited the ordinary way did not yield first")
		}
	}
}

// Calls one at a time, each given an Inline, read their own replies: the
// first ones wait for the start, then for readLoop (it held fd 4), and
// hand the caller's input over first; the rest take fd 4 themselves and,
// without input, never yield. Once calls stop, readLoop reads fd 4 again.
func TestInlineCallsReadTheirOwnReplies(t *testing.T) {
	holdReclaim(t)
	ts := startTestPool(t)
	p := ts.warmUpInline(t)
	_, before := p.rdState()
	ci := newCallerInput(t)
	const n = 20
	for i := range n {
		got, err := ts.inlineCall(context.Background(), t, ci, CallOptions{}, midAddOne, i)
		if want := strings.TrimSpace(string(rawArgs(t, i+1)[0])); err != nil || got != want {
			t.Fatalf("add_one(%d) = %s, %v; want %s", i, got, err, want)
		}
	}
	_, after := p.rdState()
	takes := after - before
	if takes != n {
		t.Errorf("%d of %d calls read their own replies", takes, n)
	}
	if y := ci.yields.Load(); y != 0 {
		t.Errorf("Yield called %d times without input", y)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		state, _ := p.rdState()
		if state == readerLoop {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fd 4 is not readLoop's 10s after the last call (state %d)", state)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// What the pool says now is read: its death, between calls.
	if got := ts.mustCall(t, midAddOne, 1); string(got) != "2" {
		t.Errorf("add_one(1) after readLoop took fd 4 back = %s", got)
	}
}

// A call waiting inline that meets something other than its reply hands
// the caller's input over (Yield) and waits the ordinary way: input on the
// caller's descriptor, its cancellation, its timeout, its pool's death.
// Progress read inline reaches its hook. The pool serves on afterwards.
//
// Each function reports progress and then waits for the test: a call
// reads fd 4 inline only from the moment it asks for it, after sending
// itself, and a pool that died before that leaves fd 4 to readLoop, which
// reads the pool's last output (process.release); that call rightly waits
// the ordinary way.
func TestInlineCallLeavesTheInlineWait(t *testing.T) {
	holdReclaim(t)
	ts := startTestPool(t)
	tests := []struct {
		name    string
		mid     int
		timeout time.Duration
		// act runs once the function runs; marker is the function's argument.
		act   func(ci *callerInput, cancel context.CancelFunc, marker string) error
		check func(t *testing.T, err error)
		// wrote is what the function writes to marker before it ends, if
		// anything: the subtest waits for it, so that the pool never
		// writes into a temporary directory being removed.
		wrote string
	}{
		{"input on the caller's descriptor", midSleepUntilCancelled, 0,
			func(ci *callerInput, cancel context.CancelFunc, _ string) error {
				if _, err := ci.w.Write([]byte("{}\n")); err != nil {
					return err
				}
				go func() {
					for ci.yields.Load() == 0 {
						time.Sleep(time.Millisecond)
					}
					cancel() // then, yielded, it is cancelled the ordinary way
				}()
				return nil
			},
			func(t *testing.T, err error) {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
			}, "cancelled"},
		{"cancelled", midSleepUntilCancelled, 0,
			func(_ *callerInput, cancel context.CancelFunc, _ string) error { cancel(); return nil },
			func(t *testing.T, err error) {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
			}, "cancelled"},
		{"timed out", midSleepUntilCancelled, 300 * time.Millisecond,
			func(*callerInput, context.CancelFunc, string) error { return nil },
			func(t *testing.T, err error) {
				var te *TimeoutError
				if !errors.As(err, &te) {
					t.Errorf("err = %v, want a *TimeoutError", err)
				}
			}, "cancelled"},
		{"the pool died", midDieOnCue, 0,
			func(_ *callerInput, _ context.CancelFunc, cue string) error {
				return os.WriteFile(cue, nil, 0o644)
			},
			func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "died (exit status 3)") {
					t.Errorf("err = %v, want the pool's death", err)
				}
			}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Calls first: they leave fd 4 free for the next.
			p := ts.warmUpInline(t)
			ci := newCallerInput(t)
			_, takes := p.rdState()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			marker := filepath.Join(t.TempDir(), "marker")
			var mu sync.Mutex
			progressed := 0
			opts := CallOptions{Timeout: tt.timeout, Hooks: Hooks{Progress: func(float64, *float64, string) {
				mu.Lock()
				progressed++
				mu.Unlock()
				if err := tt.act(ci, cancel, marker); err != nil {
					t.Error(err)
					cancel()
				}
			}}}
			done := make(chan error, 1)
			go func() {
				_, err := ts.inlineCall(ctx, t, ci, opts, tt.mid, marker)
				done <- err
			}()
			select {
			case err := <-done:
				tt.check(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("the call did not return")
			}
			if _, after := p.rdState(); after != takes+1 {
				t.Errorf("the call did not wait inline (%d takes, want %d)", after, takes+1)
			}
			mu.Lock()
			if progressed != 1 {
				t.Errorf("%d progress reports reached the hook, want 1", progressed)
			}
			mu.Unlock()
			if ci.yields.Load() == 0 {
				t.Error("Yield never called: the ordinary wait does not watch the caller's input")
			}
			if tt.wrote != "" {
				waitForFile(t, marker, tt.wrote)
			}
			if got := ts.mustCall(t, midAddOne, 41); string(got) != "42" {
				t.Errorf("then add_one(41) = %s", got)
			}
		})
	}
}

// A call waiting inline reads the replies of other calls in flight too,
// and hands each to its caller.
func TestInlineCallBesideOrdinaryCalls(t *testing.T) {
	ts := startTestPool(t)
	ci := newCallerInput(t)
	for range 3 {
		if _, err := ts.inlineCall(context.Background(), t, ci, CallOptions{}, midAddOne, 1); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow := ts.startCall(t, ctx, midSleepUntilCancelled, rawArgs(t, filepath.Join(t.TempDir(), "marker")))
	var calls []func() error
	for i := range 4 {
		calls = append(calls, func() error {
			got, err := ts.inlineCall(context.Background(), t, ci, CallOptions{}, midAddOne, 100+i)
			if err == nil && got != strings.TrimSpace(string(rawArgs(t, 101+i)[0])) {
				err = errors.New("add_one(" + string(rawArgs(t, 100+i)[0]) + ") = " + got)
			}
			return err
		}, func() error {
			got, err := ts.call(t, midAddOne, 200+i)
			if err == nil && string(got) != string(rawArgs(t, 201+i)[0]) {
				err = errors.New("add_one(" + string(rawArgs(t, 200+i)[0]) + ") = " + string(got))
			}
			return err
		})
	}
	atOnce(t, calls...)
	cancel()
	waitCancelled(t, slow)
}
