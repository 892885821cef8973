package pool

// The tests' harness, one for every language's pools: a Set of one pool
// (poolUnderTest, which each language's tests wrap to pass arguments as
// they write them), a pool on bare pipes (rawPool) for the protocol frame
// by frame and for benchmarks, and the waits and checks they share.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

func TestMain(m *testing.M) {
	RunReaperIfAsked()
	if os.Getenv("NEXUS_POOL_TEST_HOST") == "1" {
		runTestHost()
		return
	}
	if dir := os.Getenv(morlocHostEnv); dir != "" {
		runMorlocTestHost(dir)
		return
	}
	// Keep the extracted runtimes out of the developer's own cache; the
	// C++ test builds go there all the same (cachedCppBuild).
	userCacheDir, _ = os.UserCacheDir()
	os.Exit(testenv.RunInScratchCache(m, "pool"))
}

// group is the runner of pool index, one written against nexus's runtime.
func (s *Set) group(index int) *poolGroup { return s.pools[index].runner.(*poolGroup) }

// morloc is the runner of the program's morloc pools.
func (s *Set) morloc() *morlocProgram {
	for _, r := range s.runners {
		if m, ok := r.(*morlocProgram); ok {
			return m
		}
	}
	panic("the program has no morloc pools")
}

// syncBuffer collects pool output while pools write it: a lockedWriter
// into a buffer that String reads under the same lock.
type syncBuffer struct {
	lockedWriter
	buf bytes.Buffer
}

func newSyncBuffer() *syncBuffer {
	b := &syncBuffer{}
	b.w = &b.buf
	return b
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits up to within for the output to hold want: pool output
// travels on its own pipe, so it may trail the reply of the call that
// printed it.
func (b *syncBuffer) waitFor(t *testing.T, want string, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); !strings.Contains(b.String(), want); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("pool output lacks %q:\n%s", want, b)
			return
		}
	}
}

// loggedSet is a Set started for a test: it keeps what the pools wrote
// (stderr) and what the Set logged at debug level (logs), shows both when
// the test fails, and closes the Set when the test ends.
type loggedSet struct {
	*Set
	stderr *syncBuffer
	logs   *syncBuffer
}

// startLoggedSet starts specs with a short stop grace unless opts says
// otherwise; opts' Stderr and Logger are the loggedSet's.
func startLoggedSet(t testing.TB, specs []Spec, opts Options) *loggedSet {
	t.Helper()
	// The test's temporary directory is made first so that it is removed
	// after the Set is closed (cleanups run last-registered first): a call
	// that timed out may still be writing there, as Python's handler of
	// Cancelled does, until Close stops its process.
	t.TempDir()
	ls := &loggedSet{stderr: newSyncBuffer(), logs: newSyncBuffer()}
	opts.Stderr = ls.stderr
	opts.Logger = slog.New(slog.NewTextHandler(ls.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.StopGrace == 0 {
		opts.StopGrace = 500 * time.Millisecond
	}
	ls.Set = Start(context.Background(), specs, opts)
	t.Cleanup(func() {
		ls.Close()
		if t.Failed() {
			t.Logf("pool output:\n%s\nlogs:\n%s", ls.stderr, ls.logs)
		}
	})
	return ls
}

// quiet is opts with the pools' output and the Set's logs thrown away.
func quiet(opts Options) Options {
	opts.Stderr, opts.Logger = io.Discard, slog.New(slog.DiscardHandler)
	return opts
}

// poolUnderTest is a loggedSet of one pool. Each language's tests start
// theirs (startTestSet, startRSet, startCppPool) and give arguments in the
// form they write them.
type poolUnderTest struct {
	*loggedSet
	index       int           // the pool's index in the Set
	callTimeout time.Duration // how long one call may take
}

// startPoolUnderTest starts the one pool spec describes (see startLoggedSet).
func startPoolUnderTest(t *testing.T, spec Spec, opts Options, callTimeout time.Duration) *poolUnderTest {
	t.Helper()
	return &poolUnderTest{startLoggedSet(t, []Spec{spec}, opts), spec.Index, callTimeout}
}

// callRaw calls function mid of the pool with args as they are.
func (p *poolUnderTest) callRaw(t *testing.T, mid int, args []json.RawMessage, h Hooks) (json.RawMessage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), p.callTimeout)
	defer cancel()
	return p.Call(ctx, p.index, mid, args, h)
}

// mustCallRaw is callRaw that fails the test on an error.
func (p *poolUnderTest) mustCallRaw(t *testing.T, mid int, args []json.RawMessage) json.RawMessage {
	t.Helper()
	v, err := p.callRaw(t, mid, args, Hooks{})
	if err != nil {
		t.Fatalf("call of mid %d with %s: %v", mid, args, err)
	}
	return v
}

// pidOf returns what function mid, which takes no arguments and answers
// its process id, answers.
func (p *poolUnderTest) pidOf(t *testing.T, mid int) int {
	t.Helper()
	pid, err := strconv.Atoi(string(p.mustCallRaw(t, mid, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// startedHook returns hooks whose progress closes started the first time:
// the test pool's blocking functions report progress 0 once they run.
func startedHook() (Hooks, <-chan struct{}) {
	started := make(chan struct{})
	var once sync.Once
	return Hooks{Progress: func(float64, *float64, string) { once.Do(func() { close(started) }) }}, started
}

// startCall makes a call on its own goroutine and returns once the
// function runs (the test pools' blocking functions report progress then);
// the call's error comes on the channel.
func (p *poolUnderTest) startCall(t *testing.T, ctx context.Context, mid int, args []json.RawMessage) <-chan error {
	t.Helper()
	h, started := startedHook()
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, p.index, mid, args, h)
		done <- err
	}()
	waitStarted(t, started, done)
	return done
}

// waitStarted waits until started is closed: the call's function is
// under way. The call's ending first, or its function never getting under
// way, fails the test.
func waitStarted(t *testing.T, started <-chan struct{}, errs <-chan error) {
	t.Helper()
	select {
	case <-started:
	case err := <-errs:
		t.Fatalf("the call ended before its function got under way: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the call's function never got under way")
	}
}

// waitCancelled waits for the error of a call that was cancelled, which
// must be context.Canceled.
func waitCancelled(t *testing.T, errs <-chan error) {
	t.Helper()
	select {
	case err := <-errs:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled call returned %v, want context.Canceled", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
}

// wantFailure fails the test unless what (a call) failed with an error
// whose text holds each of wants.
func wantFailure(t *testing.T, what string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded", what)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not contain %q", what, err, want)
		}
	}
}

// callError is err as the *CallError of a function that failed, or fails
// the test.
func callError(t *testing.T, err error) *CallError {
	t.Helper()
	var ce *CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want a *CallError", err, err)
	}
	return ce
}

// readWhenWritten returns what a function writes to path (a marker),
// waiting up to 10 s for it; nothing if it never does.
func readWhenWritten(path string) []byte {
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got, _ = os.ReadFile(path); len(got) > 0 {
			break
		}
	}
	return got
}

// unknownMid is a pool's error for a call of mid when it has functions 1
// to poolMids.
func unknownMid(mid, poolMids int) string {
	have := make([]string, poolMids)
	for i := range have {
		have[i] = strconv.Itoa(i + 1)
	}
	return fmt.Sprintf("unknown mid %d (this pool has %s)", mid, strings.Join(have, ", "))
}

// testdataPath is the absolute path of testdata/name.
func testdataPath(t testing.TB, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// testPipe makes a pipe whose ends, those still open, close when the
// test ends.
func testPipe(t testing.TB) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// rawPool runs a pool on bare pipes, so that tests can speak the protocol
// to a language runtime frame by frame, and benchmarks can measure it
// without a Set between.
type rawPool struct {
	cmd    *exec.Cmd
	in     *os.File // nexus → pool (its fd 3)
	out    *os.File // pool → nexus (its fd 4)
	r      *bufio.Reader
	output *syncBuffer // the pool's stdout and stderr

	recvWait  time.Duration // how long recv waits for a frame
	exitWait  time.Duration // how long exitCode waits for the exit
	useNumber bool          // recv keeps numbers as their JSON text
}

// startRawProcess starts argv in dir as a pool of lang, with fds 3 and 4
// and the environment nexus gives pools; setup may change the command.
func startRawProcess(t testing.TB, p *rawPool, lang, dir string, argv []string, setup func(*exec.Cmd)) *rawPool {
	t.Helper()
	rt, err := RuntimeDir()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := testPipe(t)
	outR, outW := testPipe(t)
	p.in, p.out, p.r = inW, outR, bufio.NewReaderSize(outR, 1<<16)
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Dir = dir
	p.cmd.Env = poolEnv(lang, 1, rt)
	p.cmd.ExtraFiles = []*os.File{inR, outW}
	p.output = newSyncBuffer()
	p.cmd.Stdout = p.output
	p.cmd.Stderr = p.output
	if setup != nil {
		setup(p.cmd)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() {
		p.in.Close()
		p.out.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
		if t.Failed() {
			t.Logf("pool output:\n%s", p.output.String())
		}
	})
	return p
}

func (p *rawPool) send(t testing.TB, frame string) {
	t.Helper()
	if err := writeFrame(p.in, []byte(frame)); err != nil {
		t.Fatal(err)
	}
}

// sendBlob sends one blob frame (protocol 2): the data of an array that
// the next message describes.
func (p *rawPool) sendBlob(t testing.TB, data []byte) {
	t.Helper()
	if err := writeBlob(p.in, data); err != nil {
		t.Fatal(err)
	}
}

// recv returns the next message, decoded; it fails the test if blobs come
// before it (recvWithBlobs takes those).
func (p *rawPool) recv(t *testing.T) map[string]any {
	t.Helper()
	m, blobs := p.recvWithBlobs(t)
	if len(blobs) > 0 {
		t.Fatalf("%d blobs came before the message %v", len(blobs), m)
	}
	return m
}

// recvWithBlobs returns the next message, decoded, and the blobs that came
// before it.
func (p *rawPool) recvWithBlobs(t *testing.T) (map[string]any, [][]byte) {
	t.Helper()
	p.out.SetReadDeadline(time.Now().Add(p.recvWait))
	var blobs [][]byte
	var payload []byte
	for {
		body, blob, err := readFrame(p.r)
		if err != nil {
			t.Fatalf("reading a frame from the pool: %v; its output:\n%s", err, p.output.String())
		}
		if !blob {
			payload = body
			break
		}
		blobs = append(blobs, body)
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	if p.useNumber {
		d.UseNumber()
	}
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("frame %q: %v", payload, err)
	}
	return m, blobs
}

// mids are the numbers 1 to n as recv decodes them: a ready message's
// "mids".
func (p *rawPool) mids(n int) []any {
	mids := make([]any, n)
	for i := range mids {
		if p.useNumber {
			mids[i] = json.Number(strconv.Itoa(i + 1))
		} else {
			mids[i] = float64(i + 1)
		}
	}
	return mids
}

// recvExact returns the next message and the blobs before it, as they
// came: for benchmarks, which trust the pool and wait as long as it takes.
// Each frame is read into a buffer of its exact size.
func (p *rawPool) recvExact(b testing.TB) ([]byte, [][]byte) {
	var blobs [][]byte
	for {
		body, blob, err := readExactFrame(p.r)
		if err != nil {
			b.Fatalf("reading a frame from the pool: %v", err)
		}
		if !blob {
			return body, blobs
		}
		blobs = append(blobs, body)
	}
}

// exitCode waits for the pool to exit by itself.
func (p *rawPool) exitCode(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return exitErr.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(p.exitWait):
		t.Fatal("the pool did not exit")
		return -1
	}
}

// sameReplies checks that the replies to one call made two ways (how
// says which) are the same but for their ids.
func sameReplies(t *testing.T, how string, a, b map[string]any) {
	t.Helper()
	delete(a, "id")
	delete(b, "id")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s the replies differ:\n%.300v\n%.300v", how, a, b)
	}
}

// isResult checks that reply is the error wantError or, when wantError is
// "", a result, and reports whether it is a result to look into.
func isResult(t *testing.T, reply map[string]any, wantError string) bool {
	t.Helper()
	if wantError != "" {
		if reply["type"] != "error" || reply["message"] != wantError {
			t.Errorf("reply %.300v, want the error %q", reply, wantError)
		}
		return false
	}
	if reply["type"] != "result" {
		t.Fatalf("reply %.300v", reply)
	}
	return true
}

// exitCase is what a test sends a pool on bare pipes, and how the pool
// must exit.
type exitCase struct {
	name   string
	send   func(p *rawPool, t *testing.T)
	status int    // its exit status
	output string // what its output holds, after the prefix testExits is given
}

// testExits runs each case on a fresh pool from start, which gives it past
// its ready message: the pool must exit by itself within 10 s, with the
// case's status, its output holding prefix followed by the case's output.
func testExits(t *testing.T, start func(t *testing.T) *rawPool, prefix string, cases []exitCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			p := start(t)
			began := time.Now()
			tt.send(p, t)
			if got := p.exitCode(t); got != tt.status {
				t.Errorf("exit status %d, want %d; output:\n%s", got, tt.status, p.output.String())
			}
			if took := time.Since(began); took > 10*time.Second {
				t.Errorf("the pool took %s to exit", took)
			}
			if want := prefix + tt.output; !strings.Contains(p.output.String(), want) {
				t.Errorf("output %q lacks %q", p.output.String(), want)
			}
		})
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readExactFrame reads one frame with a buffer of its exact size: the
// benchmark trusts the pool, and a blob must not take the bytes after it.
func readExactFrame(r io.Reader) ([]byte, bool, error) {
	var header [frameHeader]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, false, err
	}
	n := binary.BigEndian.Uint32(header[:])
	body := make([]byte, n&^blobBit)
	_, err := io.ReadFull(r, body)
	return body, n&blobBit != 0, err
}

// startHost starts this test binary as a nexus stand-in (TestMain's host
// branches, chosen by env) and reads the first line it prints: what it
// started. The host is killed when the test ends, if the test has not.
func startHost(t *testing.T, env ...string) (*exec.Cmd, string, error) {
	t.Helper()
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), env...)
	host.Stderr = os.Stderr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		host.Process.Kill()
		host.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	return host, line, err
}

// atOnce runs each call in a goroutine of its own, all at once, and fails
// the test with every error they return.
func atOnce(t *testing.T, calls ...func() error) {
	t.Helper()
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
