package pool

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The tests of the morloc driver run the pools the real morloc 0.69.0
// compiles from testdata/morloc/<program>/main.loc: compiled at test time
// (morloc's generated pools embed its runtime, so they are not committed)
// and kept between runs under the user's cache directory, keyed by
// everything the build reads. Under -short (the fast tier) only
// TestMorlocCalls and TestMorlocConcurrentSharedResults run: each start of
// the program's pools takes seconds; the rest are long (testenv.Long).

// buildMorlocProgram compiles testdata/morloc/<name> with `morloc make`
// (morlocbuild, into the user's cache as it was before TestMain moved
// XDG_CACHE_HOME) and returns the directory holding the launcher and its
// pools.
func buildMorlocProgram(t testing.TB, name string) string {
	t.Helper()
	tc := testenv.Morloc(t)
	src, err := filepath.Abs(filepath.Join("testdata", "morloc", name))
	if err != nil {
		t.Fatal(err)
	}
	base := userCacheDir
	if base == "" {
		base = os.TempDir()
	}
	dir, err := tc.Compile(src, filepath.Join(base, "nexus-test", "morloc"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// morlocProgramSpecs reads the manifest of a built program's launcher
// into Specs, and returns each command's pool and mid by name.
func morlocProgramSpecs(t testing.TB, dir string) ([]Spec, map[string][2]int) {
	t.Helper()
	specs, commands, err := readMorlocProgram(dir)
	if err != nil {
		t.Fatal(err)
	}
	return specs, commands
}

// readMorlocProgram reads the manifest of the program's launcher, as
// nexus does, into Specs whose functions have their schemas and the pools
// they call.
func readMorlocProgram(dir string) ([]Spec, map[string][2]int, error) {
	m, err := manifest.Load(filepath.Join(dir, "nexus"))
	if err != nil {
		return nil, nil, err
	}
	specs := make([]Spec, len(m.Pools))
	for i, p := range m.Pools {
		specs[i] = Spec{Index: i, Lang: p.Lang, Exec: p.Exec, Dir: dir, Runtime: p.Runtime, Socket: p.Socket, PoolHash: p.PoolHash, Functions: map[int]Function{}}
	}
	commands := map[string][2]int{}
	for _, c := range m.Commands {
		fn := Function{Name: c.Name, Return: c.Return.T, Needs: c.NeededPools}
		for _, a := range c.Args {
			fn.Args = append(fn.Args, a.T)
		}
		specs[c.Pool].Functions[c.Mid] = fn
		commands[c.Name] = [2]int{c.Pool, c.Mid}
	}
	return specs, commands, nil
}

// morlocTestSet runs the pools of a morloc program.
type morlocTestSet struct {
	*loggedSet
	dir      string
	specs    []Spec
	commands map[string][2]int

	mu     sync.Mutex
	events []string // "py started", ...
}

// startMorlocSet builds testdata/morloc/multi and starts its pools;
// edit, if set, may change the Specs first.
func startMorlocSet(t *testing.T, opts Options, edit func([]Spec)) *morlocTestSet {
	t.Helper()
	dir := buildMorlocProgram(t, "multi")
	specs, commands := morlocProgramSpecs(t, dir)
	if edit != nil {
		edit(specs)
	}
	ts := &morlocTestSet{dir: dir, specs: specs, commands: commands}
	opts.OnEvent = func(lang string, e Event) {
		ts.mu.Lock()
		ts.events = append(ts.events, lang+" "+string(e))
		ts.mu.Unlock()
	}
	opts.Morloc.WireVersion = "0.69.0"
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 30 * time.Second
	}
	ts.loggedSet = startLoggedSet(t, specs, opts)
	return ts
}

// call calls the command name with args, each marshalled to JSON.
func (ts *morlocTestSet) call(t *testing.T, name string, args ...any) (string, error) {
	t.Helper()
	return ts.callWith(t, context.Background(), CallOptions{}, name, args...)
}

func (ts *morlocTestSet) callWith(t *testing.T, ctx context.Context, opts CallOptions, name string, args ...any) (string, error) {
	t.Helper()
	at, ok := ts.commands[name]
	if !ok {
		t.Fatalf("the program has no command %s", name)
	}
	raw := make([]json.RawMessage, len(args))
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw[i] = b
	}
	v, err := ts.CallWith(ctx, at[0], at[1], raw, opts)
	return string(v.JSON), err
}

func (ts *morlocTestSet) mustCall(t *testing.T, name string, args ...any) string {
	t.Helper()
	v, err := ts.call(t, name, args...)
	if err != nil {
		t.Fatalf("%s%v: %v", name, args, err)
	}
	return v
}

// process returns the process of pool i in the program's first live
// instance, started if need be.
func (ts *morlocTestSet) process(t *testing.T, i int) *morlocProcess {
	t.Helper()
	p, err := firstInstance(t, ts.Set).process(context.Background(), i, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// firstInstance returns the program's lowest numbered live instance.
func firstInstance(t testing.TB, s *Set) *morlocInstance {
	t.Helper()
	m := s.morloc()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.live) == 0 {
		t.Fatal("the program has no live instance")
	}
	return m.live[0]
}

func (ts *morlocTestSet) eventList() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return strings.Join(ts.events, ", ")
}

// The pools of a program start and answer calls: scalars, strings, a
// record, an optional, a result larger than morloc's 64 KiB inline limit
// (in shared memory), and calls from one language's pool to the other's.
func TestMorlocCalls(t *testing.T) {
	ts := startMorlocSet(t, Options{}, nil)
	if err := ts.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []any
		want string
	}{
		{"add", []any{2, 40}, "42"},
		{"add", []any{-2147483648, 2147483647}, "-1"},
		{"echo", []any{"héllo \"wörld\"\n"}, `"héllo \"wörld\"\n"`},
		{"echo", []any{""}, `""`},
		{"stats", []any{"a bb ccc"}, `{"nwords":3,"longest":"ccc","mean":2,"words":["a","bb","ccc"]}`},
		{"stats", []any{""}, `{"nwords":0,"longest":"","mean":0,"words":[]}`},
		{"maybe", []any{3}, "3"},
		{"maybe", []any{-3}, "null"},
		{"cadd", []any{20, 22}, "42"},
		{"viaC", []any{4}, "-3"},  // C++ calls Python
		{"viaPy", []any{4}, "-5"}, // Python calls C++
	}
	for _, tt := range tests {
		if got := ts.mustCall(t, tt.name, tt.args...); got != tt.want {
			t.Errorf("%s%v = %s, want %s", tt.name, tt.args, got, tt.want)
		}
	}
	for _, name := range []string{"big", "cbig"} {
		for _, n := range []int{100, 100_000, 3_000_000} { // inline, then shared memory
			got := ts.mustCall(t, name, n)
			var s string
			if err := json.Unmarshal([]byte(got), &s); err != nil || len(s) != n || strings.Trim(s, "xy") != "" {
				t.Errorf("%s(%d): %d bytes (%v): %.40s...", name, n, len(s), err, got)
			}
		}
	}
	// A list argument that came as an array (CallOptions.Arrays) is sent
	// from its bytes; a result of 800 KB comes back through shared memory.
	for _, n := range []int{3, 100_000} {
		xs := make([]float64, n)
		data := make([]byte, 8*n)
		for i := range xs {
			xs[i] = float64(i)*1.25 - 7
			binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(xs[i]))
		}
		arrays := []ndarray.Array{{Path: []any{0}, DType: ndarray.F8, Shape: []int{n}, Data: data}}
		got, err := ts.callWith(t, context.Background(), CallOptions{Arrays: arrays, GiveArrays: true}, "creals", nil)
		var back []float64
		if err != nil || json.Unmarshal([]byte(got), &back) != nil || !slices.Equal(back, xs) {
			t.Errorf("creals of %d Reals as an array: %v, %.60s", n, err, got)
		}
		if arrays[0].Data != nil {
			t.Errorf("the array's bytes are kept after it was sent, given")
		}
	}
	// With CallOptions.Ret, a list of numbers comes back as an array.
	{
		xs := []float64{1.5, -2, 1e300}
		data := make([]byte, 8*len(xs))
		for i, x := range xs {
			binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(x))
		}
		at := ts.commands["creals"]
		v, err := ts.CallWith(context.Background(), at[0], at[1], []json.RawMessage{json.RawMessage("null")},
			CallOptions{Arrays: []ndarray.Array{{Path: []any{0}, DType: ndarray.F8, Shape: []int{len(xs)}, Data: slices.Clone(data)}},
				Ret: &ndarray.Ret{Rank: 1, Number: ndarray.Real}})
		if err != nil || len(v.Arrays) != 1 || v.Arrays[0].DType != ndarray.F8 || !slices.Equal(v.Arrays[0].Data, data) {
			t.Errorf("creals with Ret: %+v, %v; want the array back", v, err)
		}
	}
	if got := ts.mustCall(t, "total", []float64{1.5, 2.25}); got != "3.75" {
		t.Errorf("total([1.5, 2.25]) = %s", got)
	}
	// An argument that does not fit its schema is refused before the pool sees it.
	if _, err := ts.call(t, "add", 2147483648, 1); err == nil || !strings.Contains(err.Error(), "2147483648 does not fit i4") {
		t.Errorf("add(2147483648, 1): %v, want a refusal", err)
	}
}

// A function that raises gives a *CallError with the pool's message.
func TestMorlocFailure(t *testing.T) {
	testenv.Long(t)
	ts := startMorlocSet(t, Options{}, nil)
	_, err := ts.call(t, "fail", "the dice rolled off the table")
	var ce *CallError
	if !errors.As(err, &ce) {
		t.Fatalf("fail: %v (%T), want a *CallError", err, err)
	}
	if ce.Lang != "py" || !strings.Contains(ce.Message, "the dice rolled off the table") || !strings.Contains(ce.Message, "Error (pool daemon in m") {
		t.Errorf("CallError %+v lacks the pool's message", ce)
	}
	if got := ts.mustCall(t, "add", 1, 2); got != "3" {
		t.Errorf("add after a failure = %s", got)
	}
}

// A value the pool cannot read aborts the worker that reads it (morloc's
// msgpack reader asserts); the call fails saying so, its instance is
// retired, and the next call works.
func TestMorlocWorkerAbort(t *testing.T) {
	testenv.Long(t)
	ts := startMorlocSet(t, Options{}, func(specs []Spec) {
		// Claim echo takes an Int: the pool, expecting a string, gets an int.
		for mid, fn := range specs[0].Functions {
			if fn.Name == "echo" {
				fn.Args = []*manifest.Type{mustType(t, "i4")}
				specs[0].Functions[mid] = fn
			}
		}
	})
	before := ts.process(t, 0).pid()
	_, err := ts.call(t, "echo", 7)
	if err == nil || !strings.Contains(err.Error(), "pool py: the call ended without a reply") || !strings.Contains(err.Error(), "worker running it died") {
		t.Fatalf("echo(7) on a pool expecting a string: %v", err)
	}
	var ce *CallError
	if errors.As(err, &ce) {
		t.Errorf("a dead worker gave a *CallError: %v", err)
	}
	ts.stderr.waitFor(t, "Assertion", 5*time.Second)
	if got := ts.mustCall(t, "add", 1, 2); got != "3" {
		t.Errorf("add after the abort = %s", got)
	}
	// morloc's R pools start no worker in place of a dead one, so the
	// instance is retired, Python's though it would have carried on.
	if after := ts.process(t, 0).pid(); after == before {
		t.Errorf("the process %d whose worker died still serves", before)
	}
	if !processGone(before, 10*time.Second) {
		t.Errorf("the replaced process %d still runs", before)
	}
	if got := ts.mustCall(t, "viaC", 2); got != "-1" {
		t.Errorf("viaC(2), C++ calling the new Python process = %s", got)
	}
}

// Many calls at once, each on its own connection, to both pools.
func TestMorlocConcurrentCalls(t *testing.T) {
	testenv.Long(t)
	ts := startMorlocSet(t, Options{}, nil)
	const n = 40
	var calls []func() error
	for i := range n {
		for _, name := range []string{"add", "cadd"} {
			calls = append(calls, func() error {
				got, err := ts.call(t, name, i, 1000)
				if err == nil && got != strconv.Itoa(i+1000) {
					err = fmt.Errorf("%s(%d, 1000) = %s", name, i, got)
				}
				return err
			})
		}
	}
	atOnce(t, calls...)
}

// Many calls at once to one pool, each answered through shared memory (a
// list over morloc's 64 KiB inline limit), each with its own values: a
// Python or C++ pool frees a result's block when its worker starts its next
// job, which must not happen before nexus has copied the result out.
func TestMorlocConcurrentSharedResults(t *testing.T) {
	ts := startMorlocSet(t, Options{}, nil)
	const calls, n = 24, 20_000 // 80 KB of i4 each
	for _, name := range []string{"seq", "cseq"} {
		t.Run(name, func(t *testing.T) {
			var each []func() error
			for k := range calls {
				each = append(each, func() error {
					got, err := ts.call(t, name, k, n)
					var xs []int
					if err == nil {
						err = json.Unmarshal([]byte(got), &xs)
					}
					if err == nil && len(xs) != n {
						err = fmt.Errorf("%d values, want %d", len(xs), n)
					}
					for i := 0; err == nil && i < len(xs); i++ {
						if xs[i] != k*n+i {
							err = fmt.Errorf("value %d is %d, want %d", i, xs[i], k*n+i)
						}
					}
					if err != nil {
						err = fmt.Errorf("%s(%d, %d): %w", name, k, n, err)
					}
					return err
				})
			}
			atOnce(t, each...)
		})
	}
}

// A pool process that dies takes its instance with it: a fresh one starts
// at once, the next call works, and the program's other pool reaches the
// new process.
func TestMorlocKilledPoolRecovers(t *testing.T) {
	testenv.Long(t)
	ts := startMorlocSet(t, Options{}, nil)
	if got := ts.mustCall(t, "viaC", 4); got != "-3" {
		t.Fatalf("viaC(4) = %s", got)
	}
	old := ts.process(t, 0)
	if err := syscall.Kill(old.pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-old.ended()
	var got string
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, err = ts.call(t, "add", 1, 2); err == nil {
			break
		}
	}
	if err != nil || got != "3" {
		t.Fatalf("add after the pool was killed: %s, %v", got, err)
	}
	if fresh := ts.process(t, 0); fresh.pid() == old.pid() {
		t.Fatalf("the same process %d serves after its death", old.pid())
	}
	if got := ts.mustCall(t, "viaC", 5); got != "-4" {
		t.Errorf("viaC(5), C++ calling the restarted Python pool = %s", got)
	}
	if ev := ts.eventList(); !strings.Contains(ev, "py crashed, py restarted") {
		t.Errorf("events %q lack the crash and the restart", ev)
	}
}

// A pool that only its sibling pools call (here the C++ pool, reached
// through viaPy) never answers nexus itself. It counts as healthy once a
// call that needed it succeeded, or once it stayed up for HealthyAfter: its
// next death is then restarted at once, however many came before. One that
// dies again before either is backed off, as any pool is: calls that need
// it fail at once, saying so.
func TestMorlocSiblingOnlyPoolHealth(t *testing.T) {
	testenv.Long(t)
	const healthyAfter = 1500 * time.Millisecond
	ts := startMorlocSet(t, Options{RestartDelay: time.Minute, HealthyAfter: healthyAfter}, nil)
	if err := ts.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	kill := func(why string) *morlocProcess {
		t.Helper()
		p := ts.process(t, 1)
		if err := syscall.Kill(p.pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.ended() // the program has learnt of the death
		m := ts.morloc()
		m.mu.Lock()
		h := m.health[1]
		failures, wait := h.failures, time.Until(h.retryAt)
		m.mu.Unlock()
		t.Logf("%s: %d failures in a row, next start in %s", why, failures, wait.Round(time.Millisecond))
		return p
	}
	restartedAtOnce := func(old *morlocProcess, why string) {
		t.Helper()
		if p := ts.process(t, 1); p.pid() == old.pid() {
			t.Fatalf("%s: the dead process %d is still the pool's", why, old.pid())
		}
	}

	// Killed before any call reached it: a first failure, restarted at once.
	old := kill("killed fresh")
	restartedAtOnce(old, "the first death")
	// A call that needed it (Python calling C++) succeeds: it is healthy.
	if got := ts.mustCall(t, "viaPy", 4); got != "-5" {
		t.Fatalf("viaPy(4) = %s", got)
	}
	old = kill("killed after a call needed it")
	restartedAtOnce(old, "a death after a call that needed the pool succeeded")
	// Up for HealthyAfter with no call at all: healthy too.
	time.Sleep(healthyAfter + 200*time.Millisecond)
	old = kill("killed after HealthyAfter")
	restartedAtOnce(old, "a death after HealthyAfter up")
	// Killed again at once, neither called nor up long: backed off.
	kill("killed again at once")
	start := time.Now()
	if _, err := ts.call(t, "cadd", 1, 2); err == nil || !strings.Contains(err.Error(), "pool cpp is down after 2 failures in a row") {
		t.Errorf("a second death in a row before the pool was healthy: %v, want a backoff", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the call backed off after %s, want at once", took)
	}
}

// A call that does not end times out at once. morloc's pools cannot
// cancel it: its instance is retired (its processes stopped, its socket
// gone), and the next call runs in a fresh one. A cancelled call is the
// same.
func TestMorlocHungCall(t *testing.T) {
	testenv.Long(t)
	ts := startMorlocSet(t, Options{}, nil)
	old := ts.process(t, 0)
	began := time.Now()
	_, err := ts.callWith(t, context.Background(), CallOptions{Timeout: 500 * time.Millisecond}, "hang", 60.0)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Call != "call to 'hang'" {
		t.Fatalf("hang: %v, want a *TimeoutError", err)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("the timeout took %s to come back", took)
	}
	if got, err := ts.callWith(t, context.Background(), CallOptions{Timeout: 30 * time.Second}, "add", 2, 3); err != nil || got != "5" {
		t.Fatalf("add after the hung call: %s, %v", got, err)
	}
	fresh := ts.process(t, 0)
	if fresh.pid() == old.pid() {
		t.Fatal("the process of the hung call still takes calls")
	}
	if ev := ts.eventList(); !strings.Contains(ev, "py restarted") {
		t.Errorf("events %q lack the replacement", ev)
	}
	if !processGone(old.pid(), 10*time.Second) {
		t.Errorf("the retired process %d still runs", old.pid())
	}
	if _, err := os.Stat(old.socket); !os.IsNotExist(err) {
		t.Errorf("the retired process's socket %s is still there (%v)", old.socket, err)
	}
	if got := ts.mustCall(t, "viaC", 1); got != "0" {
		t.Errorf("viaC(1) through the new process = %s", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if _, err := ts.callWith(t, ctx, CallOptions{}, "hang", 60.0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled hang: %v", err)
	}
	if got, err := ts.callWith(t, context.Background(), CallOptions{Timeout: 30 * time.Second}, "add", 3, 4); err != nil || got != "7" {
		t.Errorf("add after the cancelled call: %s, %v", got, err)
	}
	if ts.process(t, 0).pid() == fresh.pid() {
		t.Error("the process of the cancelled call still takes calls")
	}
}

// A call whose work hangs in another pool (Python calling C++, which
// hangs) holds that pool too: its whole instance is retired, both
// processes stop, and a fresh instance serves the next call.
func TestMorlocHungCallInSibling(t *testing.T) {
	testenv.Long(t)
	ts := startMorlocSet(t, Options{}, nil)
	oldPy, oldCpp := ts.process(t, 0).pid(), ts.process(t, 1).pid()
	_, err := ts.callWith(t, context.Background(), CallOptions{Timeout: 500 * time.Millisecond}, "hangViaC", 600.0)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("hangViaC: %v, want a *TimeoutError", err)
	}
	if got, err := ts.callWith(t, context.Background(), CallOptions{Timeout: 30 * time.Second}, "viaPy", 4); err != nil || got != "-5" {
		t.Fatalf("viaPy(4), Python calling C++, after the hung call: %s, %v", got, err)
	}
	if ts.process(t, 0).pid() == oldPy || ts.process(t, 1).pid() == oldCpp {
		t.Errorf("processes py %d → %d, cpp %d → %d: want both replaced", oldPy, ts.process(t, 0).pid(), oldCpp, ts.process(t, 1).pid())
	}
	ts.logs.waitFor(t, `msg="retiring a morloc instance" instance=1 why="call to 'hangViaC' timed out`, 5*time.Second)
	for _, pid := range []int{oldPy, oldCpp} {
		if !processGone(pid, 10*time.Second) {
			t.Errorf("the retired process %d still runs", pid)
		}
	}
}

// morlocLeftovers lists what of a program's pools is left: processes in
// the pools' groups, the temporary directory, shared-memory files.
func morlocLeftovers(pids []int, tmpdir, basename string, wait time.Duration) []string {
	var left []string
	deadline := time.Now().Add(wait)
	for _, pid := range pids {
		if !processGone(pid, time.Until(deadline)) {
			left = append(left, fmt.Sprintf("process %d", pid))
		}
		for ; ; time.Sleep(20 * time.Millisecond) {
			members := groupMembers(pid)
			if len(members) == 0 {
				break
			}
			if time.Now().After(deadline) {
				left = append(left, fmt.Sprintf("processes %v of group %d", members, pid))
				break
			}
		}
	}
	for ; ; time.Sleep(20 * time.Millisecond) {
		var files []string
		if _, err := os.Lstat(tmpdir); err == nil {
			files = append(files, tmpdir)
		}
		shm, _ := filepath.Glob(filepath.Join(shmDir, basename+"*"))
		files = append(files, shm...)
		if len(files) == 0 || time.Now().After(deadline) {
			return append(left, files...)
		}
	}
}

// groupMembers lists the live processes (zombies aside: whoever reaps
// orphans here may take a moment) of process group pgid.
func groupMembers(pgid int) []int {
	var pids []int
	for _, pid := range testenv.Pids() {
		if f, err := testenv.ProcStat(pid); err == nil && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Close leaves nothing behind: no process, socket, temporary directory or
// shared-memory file.
func TestMorlocCloseLeavesNothing(t *testing.T) {
	testenv.Long(t)
	ts := startMorlocSet(t, Options{}, nil)
	ts.mustCall(t, "big", 200_000) // shared memory beyond volume 0
	ts.mustCall(t, "cadd", 1, 2)
	pids := []int{ts.process(t, 0).pid(), ts.process(t, 1).pid()}
	inst := firstInstance(t, ts.Set)
	tmpdir, basename := inst.tmpdir, inst.basename
	if shm, _ := filepath.Glob(filepath.Join(shmDir, basename+"_*")); len(shm) < 2 {
		t.Errorf("shared memory %v: want volumes 0 and more", shm)
	}
	if fi, err := os.Lstat(filepath.Join(tmpdir, "pipe-py")); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("%s/pipe-py is not the pool's socket: %v", tmpdir, err)
	}
	ts.Close()
	if left := morlocLeftovers(pids, tmpdir, basename, 2*time.Second); len(left) > 0 {
		t.Errorf("left behind after Close: %v", left)
	}
}

// morlocHostEnv runs the test binary as a nexus serving testdata/morloc/multi
// (runMorlocTestHost) when set to the program's directory.
const morlocHostEnv = "NEXUS_MORLOC_TEST_HOST"

// runMorlocTestHost starts the program's pools with a reaper, makes them
// use shared memory, prints their pids, temporary directory and basename
// as JSON, and waits to be killed.
func runMorlocTestHost(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	specs, commands, err := readMorlocProgram(dir)
	if err != nil {
		fail(err)
	}
	s := Start(context.Background(), specs, Options{Reaper: true, Morloc: MorlocOptions{WireVersion: "0.69.0"}})
	big := commands["big"]
	if _, err := s.Call(context.Background(), big[0], big[1], []json.RawMessage{json.RawMessage("200000")}, Hooks{}); err != nil {
		fail(err)
	}
	var pids []int
	inst := s.morloc().live[0]
	for i := range specs {
		p, err := inst.process(context.Background(), i, nil)
		if err != nil {
			fail(err)
		}
		pids = append(pids, p.pid())
	}
	out, _ := json.Marshal(map[string]any{"pids": pids, "tmpdir": inst.tmpdir, "basename": inst.basename})
	fmt.Printf("%s\n", out)
	select {}
}

// A nexus killed with SIGKILL leaves nothing behind either: the pools die
// (Pdeathsig, then the reaper), and the reaper removes the temporary
// directory and the shared-memory files.
func TestMorlocKilledNexusLeavesNothing(t *testing.T) {
	testenv.Long(t)
	dir := buildMorlocProgram(t, "multi")
	host, line, err := startHost(t, morlocHostEnv+"="+dir)
	var got struct {
		Pids     []int  `json:"pids"`
		TmpDir   string `json:"tmpdir"`
		Basename string `json:"basename"`
	}
	if err != nil || json.Unmarshal([]byte(line), &got) != nil || len(got.Pids) != 2 {
		t.Fatalf("reading the host's pools: %q, %v", line, err)
	}
	if shm, _ := filepath.Glob(filepath.Join(shmDir, got.Basename+"_*")); len(shm) == 0 {
		t.Errorf("no shared memory made by the host's pools")
	}
	host.Process.Kill()
	host.Wait()
	if left := morlocLeftovers(got.Pids, got.TmpDir, got.Basename, 10*time.Second); len(left) > 0 {
		t.Errorf("left behind by a killed nexus: %v", left)
	}
}

func mustType(t testing.TB, s string) *manifest.Type {
	t.Helper()
	ty, err := manifest.ParseType(s)
	if err != nil {
		t.Fatalf("schema %q: %v", s, err)
	}
	return ty
}

// BenchmarkMorlocSmallCall measures one small call through the morloc
// driver: a connection, a call packet, a result packet, in each language.
func BenchmarkMorlocSmallCall(b *testing.B) {
	dir := buildMorlocProgram(b, "multi")
	specs, commands := morlocProgramSpecs(b, dir)
	s := Start(context.Background(), specs, quiet(Options{Morloc: MorlocOptions{WireVersion: "0.69.0"}}))
	defer s.Close()
	if err := s.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	args := []json.RawMessage{json.RawMessage("20"), json.RawMessage("22")}
	for _, name := range []string{"cadd", "add"} {
		at := commands[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v, err := s.Call(context.Background(), at[0], at[1], args, Hooks{})
				if err != nil || string(v) != "42" {
					b.Fatalf("%s: %s, %v", name, v, err)
				}
			}
		})
	}
}
