// Package e2e drives the real nexus binary over real pipes with real
// language pools. TestMain builds the binary once.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

var nexusBin string

// repoRoot is the module root, so tests can name testdata/ programs.
var repoRoot string

func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(file))
	dir, err := os.MkdirTemp("", "nexus-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nexusBin = filepath.Join(dir, "nexus")
	// The full run builds nexus with the race detector; -short, the fast
	// tier, without it: a -race nexus builds and runs several times slower.
	flag.Parse()
	buildArgs := []string{"build", "-race", "-o", nexusBin, "./cmd/nexus"}
	if testing.Short() {
		buildArgs = []string{"build", "-o", nexusBin, "./cmd/nexus"}
	}
	build := exec.Command("go", buildArgs...)
	build.Dir = repoRoot
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building nexus:", err)
		os.Exit(1)
	}
	// Compiled (C++) pools of the example programs; a no-op when up to date
	// or when no C++ toolchain is installed (those tests then skip).
	pools := exec.Command("./scripts/build-pools.sh")
	pools.Dir = repoRoot
	pools.Stdout, pools.Stderr = os.Stderr, os.Stderr
	if err := pools.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the example pools:", err)
		os.Exit(1)
	}
	// The tests signal nexus as a terminal would (SIGHUP, SIGINT) and expect
	// it to act. A suite started under nohup, or as a background job of a
	// script, ignores those, and every process it starts inherits that:
	// nexus run would rightly keep ignoring SIGHUP then, and its hangup test
	// fail. A signal this process is notified of is set back to its default
	// in the processes it starts; the suite itself still drops them (the
	// channel is never read).
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if signal.Ignored(sig) {
			signal.Notify(make(chan os.Signal, 1), sig)
		}
	}
	// A -race binary sleeps a second as it exits (GORACE atexit_sleep_ms,
	// 1000 by default); the tests start nexus hundreds of times and wait for
	// it to exit, so every nexus they start skips that sleep.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func program(name string) string { return filepath.Join(repoRoot, "testdata", name) }

// writeProgram writes a program's files (path → contents) into a new
// directory and returns it.
func writeProgram(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := writeFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeFiles writes files (path below dir → contents), making the
// directories they need.
func writeFiles(dir string, files map[string]string) error {
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// syncBuffer collects a child's stderr safely.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed (and replaced) by each Write; see await
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// await waits until the text written contains want, woken by each write,
// and reports whether it came within d.
func (s *syncBuffer) await(want string, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if strings.Contains(s.b.String(), want) {
			s.mu.Unlock()
			return true
		}
		if s.written == nil {
			s.written = make(chan struct{})
		}
		written := s.written
		s.mu.Unlock()
		select {
		case <-written:
		case <-timer.C:
			return false
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is a running `nexus mcp` with its pipes.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // every stdout line, raw
	stderr *syncBuffer
	done   chan struct{}
	exit   error
}

// startServer runs `nexus mcp TARGET extra...` and reads its stdout line by line.
func startServer(t *testing.T, target string, extra ...string) *server {
	t.Helper()
	return startServerEnv(t, nil, target, extra...)
}

// startServerEnv is startServer with env added to nexus's environment.
func startServerEnv(t *testing.T, env []string, target string, extra ...string) *server {
	t.Helper()
	args := append([]string{"mcp", target}, extra...)
	cmd := exec.Command(nexusBin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, stdin: stdin, lines: make(chan []byte, 1024), stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.lines <- line
			}
			if err != nil {
				close(s.lines)
				return
			}
		}
	}()
	go func() { s.exit = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.stdin.Close()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("nexus stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

func (s *server) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("write to nexus: %v", err)
	}
}

// recvRaw returns the next stdout line (without "\n").
func (s *server) recvRaw() string {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("nexus closed stdout; stderr:\n%s", s.stderr.String())
		}
		return strings.TrimSuffix(string(line), "\n")
	case <-time.After(60 * time.Second):
		s.t.Fatalf("no reply from nexus within 60s; stderr:\n%s", s.stderr.String())
	}
	return ""
}

// msg is a decoded JSON-RPC message; numbers stay json.Number.
type msg map[string]any

func decode(t *testing.T, line string) msg {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var m msg
	if err := d.Decode(&m); err != nil {
		t.Fatalf("reply is not a JSON object: %v: %q", err, line)
	}
	return m
}

func (s *server) recv() msg { s.t.Helper(); return decode(s.t, s.recvRaw()) }

// checkSays fails the test for each of has that text (what names it)
// lacks, and for each of hasNot that it holds.
func checkSays(t *testing.T, what, text string, has, hasNot []string) {
	t.Helper()
	for _, s := range has {
		if !strings.Contains(text, s) {
			t.Errorf("%s lacks %q:\n%s", what, s, text)
		}
	}
	for _, s := range hasNot {
		if strings.Contains(text, s) {
			t.Errorf("%s holds %q:\n%s", what, s, text)
		}
	}
}

// sameJSON says whether a and b are JSON texts of the same value, whatever
// their members' order and spacing.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// expectSilence asserts nothing arrives on stdout for a while.
func (s *server) expectSilence(d time.Duration) {
	s.t.Helper()
	select {
	case line := <-s.lines:
		s.t.Fatalf("expected no output, got %q", line)
	case <-time.After(d):
	}
}

// request sends a request and returns its reply (no other traffic expected).
func (s *server) request(id int, method string, params any) msg {
	s.t.Helper()
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	b, _ := json.Marshal(req)
	s.send(string(b))
	return s.recv()
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`

// handshake runs initialize + notifications/initialized.
// toolNames lists the tools, in order, as a tools/list request (of id)
// gets them.
func (s *server) toolNames(id int) []string {
	s.t.Helper()
	var names []string
	for _, tl := range s.request(id, "tools/list", nil)["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	return names
}

func (s *server) handshake() {
	s.t.Helper()
	s.send(initLine)
	r := s.recv()
	if r["result"] == nil {
		s.t.Fatalf("initialize failed: %v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// closeExpectingNoMore closes stdin and fails the test unless nexus exits
// 0 and prints nothing more on stdout: every byte there must have been a
// reply already read.
func (s *server) closeExpectingNoMore() {
	s.t.Helper()
	if err := s.closeAndWait(); err != nil {
		s.t.Errorf("nexus exit: %v", err)
	}
	for line := range s.lines {
		s.t.Errorf("stdout line after every reply: %q", line)
	}
}

// closeAndWait closes stdin and waits for nexus to exit, returning its status.
func (s *server) closeAndWait() error {
	s.t.Helper()
	s.stdin.Close()
	select {
	case <-s.done:
		return s.exit
	case <-time.After(30 * time.Second):
		s.t.Fatalf("nexus did not exit within 30s of stdin closing; stderr:\n%s", s.stderr.String())
	}
	return nil
}

func idOf(m msg) string {
	switch v := m["id"].(type) {
	case json.Number:
		return v.String()
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	}
	return fmt.Sprint(m["id"])
}

func errCode(m msg) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	n, _ := e["code"].(json.Number).Int64()
	return int(n)
}

func errMessage(m msg) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// toolText returns a tools/call result's first text block and isError.
func toolText(t *testing.T, m msg) (string, bool) {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("expected a result, got %v", m)
	}
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("result has no content: %v", m)
	}
	block := content[0].(map[string]any)
	isErr, _ := res["isError"].(bool)
	return block["text"].(string), isErr
}

// descendants lists the live descendants of pid (via /proc), with their command lines.
func descendants(pid int) map[int]string {
	parent := map[int]int{}
	cmdline := map[int]string{}
	for _, p := range testenv.Pids() {
		f, err := testenv.ProcStat(p)
		if err != nil || f[0] == "Z" {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
		cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		cmdline[p] = strings.ReplaceAll(string(cl), "\x00", " ")
	}
	out := map[int]string{}
	var walk func(int)
	walk = func(root int) {
		for p, pp := range parent {
			if pp == root {
				if _, seen := out[p]; !seen {
					out[p] = cmdline[p]
					walk(p)
				}
			}
		}
	}
	walk(pid)
	return out
}

// waitGone waits until none of pids is alive.
func waitGone(t *testing.T, pids map[int]string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		left := 0
		for p := range pids {
			if testenv.Running(p) {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for p, c := range pids {
		if testenv.Running(p) {
			t.Errorf("process %d (%s) outlived nexus", p, c)
		}
	}
}
