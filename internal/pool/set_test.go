package pool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The mids of testdata/pools/pool.py.
const (
	midAddOne = iota + 1
	midReverse
	midFail
	midWaitFor
	midSleepUntilCancelled
	midNexusSleepUntilCancelled
	midDie
	midCount
	midPID
	midSpawnChild
	midLog
	midNotJSON
	midEcho
	midSlowPID
	midPNGSignature
	midFailUnprintably
	midPlot
	midSegfault
	midDieOnCue
	testPoolMids = iota // how many functions pool.py has
)

// testSet runs a Python pool (testdata/pools); its calls take Go values.
type testSet struct{ *poolUnderTest }

func testdataDir(t *testing.T) string { return testdataPath(t, "pools") }

// startTestSet starts one Python pool (index 0) running script.
func startTestSet(t *testing.T, spec Spec, opts Options) *testSet {
	t.Helper()
	testenv.NeedPython(t)
	if spec.Lang == "" {
		spec.Lang = "py"
	}
	if spec.Dir == "" {
		spec.Dir = testdataDir(t)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 20 * time.Second
	}
	return &testSet{startPoolUnderTest(t, spec, opts, 30*time.Second)}
}

func startTestPool(t *testing.T) *testSet {
	return startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}}, Options{})
}

// rawArgs encodes each Go value as one JSON argument.
func rawArgs(t *testing.T, args ...any) []json.RawMessage {
	t.Helper()
	var raw []json.RawMessage
	for _, a := range args {
		if r, ok := a.(json.RawMessage); ok {
			raw = append(raw, r)
			continue
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b)
	}
	return raw
}

func (ts *testSet) call(t *testing.T, mid int, args ...any) (json.RawMessage, error) {
	t.Helper()
	return ts.callRaw(t, mid, rawArgs(t, args...), Hooks{})
}

func (ts *testSet) mustCall(t *testing.T, mid int, args ...any) json.RawMessage {
	t.Helper()
	return ts.mustCallRaw(t, mid, rawArgs(t, args...))
}

func (ts *testSet) pid(t *testing.T) int {
	t.Helper()
	return ts.pidOf(t, midPID)
}

func TestCallValues(t *testing.T) {
	ts := startTestPool(t)
	tests := []struct {
		name string
		mid  int
		args []any
		want string // the exact JSON text returned
	}{
		{"integer past 2^53", midAddOne, []any{json.RawMessage("9007199254740993")}, "9007199254740994"},
		{"integer past 2^64", midAddOne, []any{json.RawMessage("18446744073709551615")}, "18446744073709551616"},
		{"integer of 30 digits", midAddOne, []any{json.RawMessage("-123456789012345678901234567890")}, "-123456789012345678901234567889"},
		{"unicode string", midReverse, []any{"héllo wörld 🎲 ✓"}, `"✓ 🎲 dlröw olléh"`},
		{"lone surrogate is escaped", midReverse, []any{json.RawMessage(`"a\ud800"`)}, `"\ud800a"`},
		{"bytes are base64", midPNGSignature, nil, `"iVBORw0KGgo="`},
		{"no arguments", midEcho, nil, `[]`},
		{"mixed arguments keep their order", midEcho, []any{json.RawMessage(`1`), "a", nil, json.RawMessage(`{"k":[true,2.5]}`)}, `[1,"a",null,{"k":[true,2.5]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ts.mustCall(t, tt.mid, tt.args...)
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	ts.stderr.waitFor(t, "[pool py] echo called with 4 arguments\n", 30*time.Second)
}

func TestCallErrors(t *testing.T) {
	ts := startTestPool(t)
	tests := []struct {
		name          string
		mid           int
		args          []any
		wantMessage   string
		wantTraceback string
	}{
		{"function raises", midFail, []any{"bad AC"}, "ValueError: bad AC", "in fail"},
		{"unknown mid", 42, nil, unknownMid(42, testPoolMids), ""},
		{"result is not JSON", midNotJSON, nil, "TypeError: Object of type object is not JSON serializable", ""},
		{"exception that cannot be printed", midFailUnprintably, nil, "Unprintable: <unprintable Unprintable>", "in fail_unprintably"},
		{"wrong number of arguments", midAddOne, []any{1, 2}, "TypeError: add_one() takes 1 positional argument but 2 were given", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ts.call(t, tt.mid, tt.args...)
			ce := callError(t, err)
			if ce.Message != tt.wantMessage || err.Error() != tt.wantMessage {
				t.Errorf("message %q, want %q", ce.Message, tt.wantMessage)
			}
			if ce.Lang != "py" {
				t.Errorf("Lang %q, want py", ce.Lang)
			}
			if !strings.Contains(ce.Traceback, tt.wantTraceback) {
				t.Errorf("traceback %q does not contain %q", ce.Traceback, tt.wantTraceback)
			}
		})
	}
	// The pool survives its functions' failures.
	if got := ts.mustCall(t, midAddOne, 1); string(got) != "2" {
		t.Errorf("after the errors, add_one(1) = %s", got)
	}
}

func TestInvalidArgumentJSON(t *testing.T) {
	ts := startTestPool(t)
	_, err := ts.Call(context.Background(), 0, midEcho, []json.RawMessage{json.RawMessage(`{"a":`)}, Hooks{})
	if err == nil || !strings.Contains(err.Error(), "pool py: encoding the call's arguments") {
		t.Fatalf("error %v, want one about the arguments", err)
	}
	if got := ts.mustCall(t, midAddOne, 1); string(got) != "2" {
		t.Errorf("after the bad call, add_one(1) = %s", got)
	}
}

func TestUnknownPoolIndex(t *testing.T) {
	ts := startTestPool(t)
	_, err := ts.Call(context.Background(), 7, midPID, nil, Hooks{})
	if err == nil || err.Error() != "no pool with index 7" {
		t.Errorf("error %v, want no pool with index 7", err)
	}
}

// A fast call made while a slow one runs must not wait for it.
func TestConcurrentCallsReturnOutOfOrder(t *testing.T) {
	ts := startTestPool(t)
	release := filepath.Join(t.TempDir(), "release")
	finished := make(chan string, 20)
	errs := make(chan error, 20)

	h, started := startedHook()
	go func() {
		v, err := ts.Call(context.Background(), 0, midWaitFor, rawArgs(t, release, "slow"), h)
		if err != nil {
			errs <- err
			return
		}
		finished <- string(v)
	}()
	select {
	case <-started:
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the slow call never started")
	}

	var wg sync.WaitGroup
	for i := range 19 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			v, err := ts.Call(ctx, 0, midEcho, rawArgs(t, i), Hooks{})
			if err != nil {
				errs <- err
				return
			}
			finished <- string(v)
		})
	}
	wg.Wait()
	// Only now may the slow call end.
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var order []string
	for len(order) < 20 {
		select {
		case v := <-finished:
			order = append(order, v)
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of 20 calls finished: %v", len(order), order)
		}
	}
	if order[19] != `"slow"` {
		t.Errorf("completion order %v: the slow call should be last", order)
	}
	var want []string
	for i := range 19 {
		want = append(want, fmt.Sprintf("[%d]", i))
	}
	fast := slices.Clone(order[:19])
	slices.Sort(fast)
	slices.Sort(want)
	if !slices.Equal(fast, want) {
		t.Errorf("fast replies %v, want %v", fast, want)
	}
}

func TestCancelReachesPython(t *testing.T) {
	tests := []struct {
		name       string
		mid        int
		wantMarker string
	}{
		{"interrupts Python code", midSleepUntilCancelled, "cancelled"},
		{"wakes nexus.sleep", midNexusSleepUntilCancelled, "cancelled=True"},
	}
	ts := startTestPool(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "marker")
			ctx, cancel := context.WithCancel(context.Background())
			h, started := startedHook()
			go func() { <-started; cancel() }()
			done := make(chan error, 1)
			go func() {
				_, err := ts.Call(ctx, 0, tt.mid, rawArgs(t, marker), h)
				done <- err
			}()
			waitCancelled(t, done)
			if got := readWhenWritten(marker); string(got) != tt.wantMarker {
				t.Errorf("the function wrote %q, want %q: it did not see Cancelled", got, tt.wantMarker)
			}
			if got := ts.mustCall(t, midAddOne, 41); string(got) != "42" {
				t.Errorf("after the cancel, add_one(41) = %s", got)
			}
		})
	}
}

func TestCancelWhileStarting(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "silent.py"}}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := ts.Call(ctx, 0, midPID, nil, Hooks{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want context.DeadlineExceeded", err)
	}
	if waited := time.Since(began); waited > 5*time.Second {
		t.Errorf("Call took %s to notice its context ended", waited)
	}
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name    string
		exec    []string
		timeout time.Duration
		want    []string // all in the error
	}{
		{"pool exits at once", []string{"python3", "exits.py"}, 0, []string{
			"pool py failed to start: exited before it was ready (exit status 1); last stderr:\n",
			"loading the model from weights.bin\nFileNotFoundError: weights.bin",
		}},
		{"missing executable", []string{"python9-nexus-missing", "pool.py"}, 0, []string{
			"pool py failed to start: python9-nexus-missing is not installed (there is no python9-nexus-missing in PATH)",
		}},
		{"missing relative executable", []string{"pools/missing/pool.out"}, 0, []string{
			"pool py failed to start: " + filepath.Join(testdataDir(t), "pools/missing/pool.out") + " not found — build the program first",
		}},
		{"never ready", []string{"python3", "silent.py"}, 300 * time.Millisecond, []string{
			"pool py never became ready within 300ms",
		}},
		{"protocol error", []string{"python3", "garbage.py"}, 0, []string{
			"pool py failed to start: it broke the protocol: blob length 2147483647 is over 1073741824",
		}},
		{"newer protocol", []string{"python3", "future.py"}, 0, []string{
			"pool py failed to start: it speaks pool protocol 3; this nexus speaks 1 and 2",
		}},
		{"no exec", nil, 0, []string{"pool py failed to start: its manifest entry has no exec command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTestSet(t, Spec{Exec: tt.exec}, Options{StartTimeout: tt.timeout})
			_, err := ts.call(t, midPID)
			wantFailure(t, "the call", err, tt.want...)
		})
	}
}

func TestFailedStartOutputIsCopied(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "exits.py"}}, Options{})
	if _, err := ts.call(t, midPID); err == nil {
		t.Fatal("the call succeeded")
	}
	ts.stderr.waitFor(t, "[pool py] loading the model from weights.bin\n[pool py] FileNotFoundError: weights.bin\n", 30*time.Second)
}

// A pool that failed to start is tried again by the next call.
func TestRetryAfterFailedStart(t *testing.T) {
	dir := t.TempDir()
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}, Dir: dir}, Options{})
	_, err := ts.call(t, midPID)
	if err == nil || !strings.Contains(err.Error(), "pool py failed to start: exited before it was ready (exit status 2)") {
		t.Fatalf("error %v, want the missing pool file to fail the start", err)
	}
	source, err := os.ReadFile(filepath.Join(testdataDir(t), "pool.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pool.py"), source, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ts.mustCall(t, midAddOne, 1); string(got) != "2" {
		t.Errorf("add_one(1) = %s", got)
	}
}

func TestPoolDiesMidCall(t *testing.T) {
	ts := startTestPool(t)
	before := ts.pid(t)
	_, err := ts.call(t, midDie, "the dice rolled off the table")
	wantFailure(t, "the call", err, "pool py died (exit status 3); last stderr:\n", "the dice rolled off the table")
	var ce *CallError
	if errors.As(err, &ce) {
		t.Errorf("a dead pool gave a CallError: %v", err)
	}
	after := ts.pid(t)
	if after == before {
		t.Errorf("the pool answered from pid %d both before and after dying", before)
	}
	if err := syscall.Kill(before, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the dead pool %d is still there: kill(0) = %v", before, err)
	}
}

func TestProgress(t *testing.T) {
	ts := startTestPool(t)
	type report struct {
		progress float64
		total    float64
		message  string
	}
	var reports []report
	h := Hooks{Progress: func(progress float64, total *float64, message string) {
		r := report{progress: progress, total: -1, message: message}
		if total != nil {
			r.total = *total
		}
		reports = append(reports, r)
	}}
	v, err := ts.Call(context.Background(), 0, midCount, rawArgs(t, 5), h)
	if err != nil || string(v) != "5" {
		t.Fatalf("count(5) = %s, %v", v, err)
	}
	if len(reports) != 5 {
		t.Fatalf("got %d progress reports, want 5: %v", len(reports), reports)
	}
	for i, r := range reports {
		want := report{progress: float64(i + 1), total: 5, message: fmt.Sprintf("step %d", i+1)}
		if r != want {
			t.Errorf("report %d = %+v, want %+v", i, r, want)
		}
	}
	// Without a hook the pool is not asked for progress, and still answers.
	if got := ts.mustCall(t, midCount, 3); string(got) != "3" {
		t.Errorf("count(3) without progress = %s", got)
	}
}

func TestLog(t *testing.T) {
	ts := startTestPool(t)
	var level string
	var data json.RawMessage
	h := Hooks{Log: func(l string, d json.RawMessage) { level, data = l, d }}
	if _, err := ts.Call(context.Background(), 0, midLog, rawArgs(t, 7), h); err != nil {
		t.Fatal(err)
	}
	if level != "warning" || string(data) != `{"got":7}` {
		t.Errorf("Log hook got %q %s, want warning {\"got\":7}", level, data)
	}
	// Without a hook the record goes to the logger.
	ts.mustCall(t, midLog, 8)
	if logs := ts.logs.String(); !strings.Contains(logs, `level=WARN msg="pool log" pool=py data="{\"got\":8}"`) {
		t.Errorf("logs do not hold the pool's record:\n%s", logs)
	}
}

func TestWorkersShareCalls(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}, Workers: 2}, Options{})
	release := filepath.Join(t.TempDir(), "release")
	done := ts.startCall(t, context.Background(), midWaitFor, rawArgs(t, release, "slow"))
	// Worker 1 has the slow call, so these go to worker 2.
	busyWorker2 := ts.pid(t)
	ts.mustCall(t, midEcho)
	os.WriteFile(release, nil, 0o644)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Both idle now: the lowest-numbered worker, 1, takes the call.
	idleWorker1 := ts.pid(t)
	if busyWorker2 == idleWorker1 {
		t.Errorf("both calls went to pid %d: calls are not spread over the workers", idleWorker1)
	}
	ts.stderr.waitFor(t, "[pool py#2] echo called with 0 arguments\n", 30*time.Second)
}

func TestCloseLeavesNoProcess(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}, Workers: 2}, Options{})
	var pair []int
	if err := json.Unmarshal(ts.mustCall(t, midSpawnChild), &pair); err != nil || len(pair) != 2 {
		t.Fatalf("spawn_child gave %v, %v", pair, err)
	}
	// Both workers, so Close has two pools to stop.
	var pids sync.Map
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			v, err := ts.Call(context.Background(), 0, midSlowPID, rawArgs(t, 0.2), Hooks{})
			if err == nil {
				pids.Store(string(v), true)
			}
		})
	}
	wg.Wait()
	all := []int{pair[0], pair[1]}
	pids.Range(func(k, _ any) bool {
		pid, _ := strconv.Atoi(k.(string))
		all = append(all, pid)
		return true
	})
	if len(all) < 4 {
		t.Fatalf("pids %v: want a child and two workers", all)
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range all {
		if !processGone(pid, 5*time.Second) {
			t.Errorf("process %d is still running after Close (pids %v)", pid, all)
		}
	}
	// The pool processes themselves are reaped by Close.
	for _, pid := range all[2:] {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pool process %d: kill(0) = %v, want ESRCH", pid, err)
		}
	}
}

// processGone waits for pid to end. A zombie counts as gone: it runs no
// more, and reaping an orphan is init's business.
func processGone(pid int, wait time.Duration) bool {
	for deadline := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
		if !testenv.Running(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

func TestCloseFailsCallsInFlight(t *testing.T) {
	ts := startTestPool(t)
	release := filepath.Join(t.TempDir(), "never")
	done := ts.startCall(t, context.Background(), midWaitFor, rawArgs(t, release, "x"))
	ts.Close()
	select {
	case err := <-done:
		if err == nil || err.Error() != "pool py: stopped" {
			t.Errorf("in-flight call returned %v, want pool py: stopped", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight call did not return after Close")
	}
	_, err := ts.call(t, midPID)
	if err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Errorf("call after Close returned %v, want an error saying the pools are shut down", err)
	}
	if err := ts.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Run by hand as a user would, with its runtime at hand but without the
// pipes nexus gives it (no NEXUS_POOL_ variables), a pool of any language
// says what it is and exits with status 2 instead of hanging.
func TestPoolRefusesToRunStandalone(t *testing.T) {
	tests := []struct {
		lang string
		prog func(t *testing.T) (dir string, argv []string)
	}{
		{"py", func(t *testing.T) (string, []string) {
			testenv.NeedPython(t)
			return testdataDir(t), []string{"python3", "pool.py"}
		}},
		{"r", func(t *testing.T) (string, []string) {
			testenv.NeedR(t)
			return rTestdata(t), []string{"Rscript", "pool.R"}
		}},
		{"cpp", func(t *testing.T) (string, []string) {
			exe := buildCppTestPool(t)
			return filepath.Dir(exe), []string{exe}
		}},
	}
	rt, err := RuntimeDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			dir, argv := tt.prog(t)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = dir
			cmd.Env = slices.DeleteFunc(poolEnv(tt.lang, 1, rt), func(kv string) bool { return strings.HasPrefix(kv, "NEXUS_POOL_") })
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
				t.Errorf("standalone pool: %v, want exit status 2; stderr:\n%s", err, &stderr)
			}
			if want := "This program is a nexus pool"; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr %q does not explain what the program is (%q)", &stderr, want)
			}
		})
	}
}

// runTestHost plays nexus in a child process of the test: it starts the test
// pool, has it start a child, prints [pool pid, child pid] and waits to be
// killed.
func runTestHost() {
	exec, mid := []string{"python3", "pool.py"}, midSpawnChild
	if os.Getenv("NEXUS_POOL_TEST_POOL") == "sequential" {
		exec, mid = []string{"python3", "sequential.py", "false"}, 5
	}
	s := Start(context.Background(), []Spec{{Lang: "py", Exec: exec, Dir: os.Getenv("NEXUS_POOL_TEST_DIR")}},
		Options{Reaper: os.Getenv("NEXUS_POOL_TEST_REAPER") == "1"})
	pids, err := s.Call(context.Background(), 0, mid, nil, Hooks{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s\n", pids)
	select {}
}

// A pool dies with nexus, even when nexus cannot clean up, and so do the
// children its functions started: the Python runtime kills its process
// group when nexus goes; for a runtime that does not, the reaper does.
func TestPoolDiesWithNexus(t *testing.T) {
	testenv.NeedPython(t)
	tests := []struct {
		name   string
		pool   string // NEXUS_POOL_TEST_POOL
		reaper bool
	}{
		{"Python runtime", "", false},
		{"runtime that leaves its children, and the reaper", "sequential", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := []string{"NEXUS_POOL_TEST_HOST=1", "NEXUS_POOL_TEST_DIR=" + testdataDir(t), "NEXUS_POOL_TEST_POOL=" + tt.pool}
			if tt.reaper {
				env = append(env, "NEXUS_POOL_TEST_REAPER=1")
			}
			host, line, err := startHost(t, env...)
			var pids []int
			if err != nil || json.Unmarshal([]byte(line), &pids) != nil || len(pids) != 2 {
				t.Fatalf("reading the pool's and its child's pids from the host: %q, %v", line, err)
			}
			for _, pid := range pids {
				if err := syscall.Kill(pid, 0); err != nil {
					t.Fatalf("process %d is not running before the host dies: %v", pid, err)
				}
			}
			host.Process.Kill()
			host.Wait()
			for i, pid := range pids {
				if !processGone(pid, 5*time.Second) {
					t.Errorf("%s %d outlived the nexus that started it", []string{"pool", "its child"}[i], pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// A Python pool exits by itself when told to: Close does not have to wait
// out the grace and signal it.
func TestPoolExitsOnShutdown(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}}, Options{StopGrace: 20 * time.Second})
	pid := ts.pid(t)
	began := time.Now()
	ts.Close()
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("Close took %s: the pool did not exit on shutdown", took)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pool %d: kill(0) = %v after Close, want ESRCH", pid, err)
	}
	if logs := ts.logs.String(); strings.Contains(logs, "pool process ended") {
		t.Errorf("a pool stopped on purpose was reported as ended:\n%s", logs)
	}
}

func TestContentHook(t *testing.T) {
	ts := startTestPool(t)
	var blocks json.RawMessage
	calls := 0
	h := Hooks{Content: func(b json.RawMessage) { blocks = b; calls++ }}
	v, err := ts.Call(context.Background(), 0, midPlot, rawArgs(t, "a plot"), h)
	if err != nil {
		t.Fatal(err)
	}
	if string(v) != "6" {
		t.Errorf("value %s, want 6 (the caption's length)", v)
	}
	want := `[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"text","text":"a plot"}]`
	if calls != 1 || string(blocks) != want {
		t.Errorf("Content hook called %d times with %s, want once with %s", calls, blocks, want)
	}
	// A result without content leaves the hook alone; without a hook, content is dropped.
	calls = 0
	if _, err := ts.Call(context.Background(), 0, midAddOne, rawArgs(t, 1), h); err != nil || calls != 0 {
		t.Errorf("add_one: err %v, Content hook called %d times, want 0", err, calls)
	}
	if got := ts.mustCall(t, midPlot, "x"); string(got) != "1" {
		t.Errorf("plot without a hook = %s, want 1", got)
	}
}

func TestCheckContent(t *testing.T) {
	tests := []struct {
		content string
		wantErr string // "" for valid
	}{
		{`[]`, ""},
		{`[{"type":"text","text":"hi"}]`, ""},
		{`[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"future-kind"}]`, ""},
		{`{"type":"text"}`, "content is not an array of content blocks"},
		{`"text"`, "content is not an array of content blocks"},
		{`[1]`, "content is not an array of content blocks"},
		{`[{"text":"no type"}]`, "content block 0 has no type"},
		{`[{"type":"text"},{"type":3}]`, "content is not an array of content blocks"},
	}
	for _, tt := range tests {
		err := checkContent(json.RawMessage(tt.content))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", tt.content, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: %v, want an error containing %q", tt.content, err, tt.wantErr)
		}
	}
}

func TestDefaultWorkers(t *testing.T) {
	tests := []struct {
		lang string
		want int
	}{
		{"py", 1},
		{"cpp", 1},
		{"r", min(4, runtime.NumCPU())},
		{"rust", 1},
	}
	for _, tt := range tests {
		if got := DefaultWorkers(tt.lang); got != tt.want {
			t.Errorf("DefaultWorkers(%q) = %d, want %d", tt.lang, got, tt.want)
		}
		// A Spec without Workers gets the default; one with Workers keeps it.
		s := Start(context.Background(), []Spec{{Index: 0, Lang: tt.lang}, {Index: 1, Lang: tt.lang, Workers: 3}}, quiet(Options{}))
		if got := len(s.group(0).workers); got != tt.want {
			t.Errorf("%s pool without Workers runs %d workers, want %d", tt.lang, got, tt.want)
		}
		if got := len(s.group(1).workers); got != 3 {
			t.Errorf("%s pool with Workers 3 runs %d workers", tt.lang, got)
		}
		s.Close()
	}
}

// A pool that lists its mids in its ready message is checked against the
// manifest at start: a function the pool lacks is named in a warning.
func TestMissingMidWarnedAtStart(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "pool.py"}, Functions: map[int]Function{
		midAddOne: {Name: "addOne"},
		42:        {Name: "ghost"},
	}}, Options{})
	ts.waitForLog(t, `level=WARN msg="pool lacks a function the manifest gives it: calls to it will fail" pool=py command=ghost mid=42 "pool has"="1, 2, 3,`)
	if strings.Contains(ts.logs.String(), "command=addOne") {
		t.Errorf("a function the pool has was reported missing:\n%s", ts.logs)
	}
	_, err := ts.call(t, 42)
	var ce *CallError
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, "unknown mid 42 (this pool has 1, 2, 3") {
		t.Errorf("the call: %v, want the pool's unknown mid error", err)
	}
}

// An exec whose interpreter (#! line) is missing is told apart from a
// missing file, and a file that cannot be executed from both.
func TestExecErrors(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "pool.sh")
	os.WriteFile(script, []byte("#!/no/such/interpreter-nexus\n"), 0o755)
	plain := filepath.Join(dir, "pool.txt")
	os.WriteFile(plain, []byte("not a program\n"), 0o644)
	tests := []struct {
		exec string
		want string
	}{
		{"./pool.sh", "pool py failed to start: " + script + " exists but its interpreter (its #! line) is not installed"},
		{"./pool.txt", "pool py failed to start: " + plain + " is not executable"},
	}
	for _, tt := range tests {
		ts := startTestSet(t, Spec{Exec: []string{tt.exec}, Dir: dir}, Options{})
		if _, err := ts.call(t, midPID); err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.exec, err, tt.want)
		}
	}
}

// Ready reports whether every pool started: nil once they are up, the
// start's failure otherwise, without a call (a reload waits on it).
func TestReady(t *testing.T) {
	tests := []struct {
		name string
		exec []string
		want string // "" for ready
	}{
		{"ready", []string{"python3", "pool.py"}, ""},
		{"exits at once", []string{"python3", "exits.py"}, "pool py failed to start: exited before it was ready"},
		{"missing executable", []string{"python9-nexus-missing", "pool.py"}, "python9-nexus-missing is not installed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTestSet(t, Spec{Exec: tt.exec}, Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := ts.Ready(ctx)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Ready: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Ready: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
