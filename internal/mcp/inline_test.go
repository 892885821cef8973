package mcp

import (
	"bufio"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// stdioPipes serves srv over real pipes (a stdin poll(2) can watch, as
// nexus's is) and returns a way to send a line, to read the next reply
// line, and to end the session.
func stdioPipes(t *testing.T, srv *Server) (send func(string), next func() string, end func()) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() {
		served <- srv.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send = func(line string) {
		if _, err := inW.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	next = func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("stdout ended")
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no reply within 10 s: is stdin read while the call waits?")
		}
		return ""
	}
	end = func() {
		inW.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("ServeStdio did not return after stdin closed")
		}
		inR.Close()
		outR.Close()
	}
	return send, next, end
}

// A tools/call runs on the stdin reader when alone in flight; a Caller
// that cannot watch stdin (not an InlineCaller) gets it handed to another
// reader first, so a ping and the call's cancellation still get through
// while it waits (docs/spec.md §4.1: every request gets its reply).
func TestStdioHandsStdinOverBeforeAnOrdinaryCallerWaits(t *testing.T) {
	pool := newFakePool()
	pool.started = make(chan string, 1)
	srv := newTestServer(t, pool, Options{})
	send, next, end := stdioPipes(t, srv)
	defer end()
	send(initLine)
	next()
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-pool.started // then the ping comes while slow waits, not read ahead with it
	pingThenCancelSlow(t, send, next, pool)
}

// pingThenCancelSlow sends a ping while slow (request 2) waits and wants
// its reply first, then cancels slow and wants it to see that once.
func pingThenCancelSlow(t *testing.T, send func(string), next func() string, pool *fakePool) {
	t.Helper()
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := next(); !strings.Contains(got, `"id":3`) {
		t.Fatalf("first reply %s, want the ping's while slow runs", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	deadline := time.Now().Add(5 * time.Second)
	for pool.cancels() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if pool.cancels() != 1 {
		t.Fatalf("slow saw %d cancellations, want 1", pool.cancels())
	}
}

// inlinePool is a fakePool that takes CallHooks.Inline: it records what
// each call was given, and slow watches stdin with poll(2) until it has
// input, yields it, and then waits for its cancellation.
type inlinePool struct {
	*fakePool
	mu      sync.Mutex
	offered []bool        // per call: was it given an InlineWait
	yields  []bool        // what each Yield reported
	polling chan struct{} // slow is watching stdin
}

func (p *inlinePool) TakesInline() {}

func (p *inlinePool) Call(ctx context.Context, c argmap.Call, h CallHooks) (ndarray.Value, error) {
	p.mu.Lock()
	p.offered = append(p.offered, h.Inline != nil)
	p.mu.Unlock()
	if c.Command.Name == "slow" && h.Inline != nil {
		fds := []unix.PollFd{{Fd: int32(h.Inline.Fd), Events: unix.POLLIN}}
		close(p.polling)
		for {
			n, err := unix.Poll(fds, 100)
			if err == nil && n > 0 {
				break
			}
			if ctx.Err() != nil {
				break
			}
		}
		y := h.Inline.Yield()
		p.mu.Lock()
		p.yields = append(p.yields, y, h.Inline.Yield())
		p.mu.Unlock()
	}
	return p.fakePool.Call(ctx, c, h)
}

// An InlineCaller's calls alone in flight are offered the stdin reader's
// goroutine; the one that yields stdin on input hands it over once, and
// what comes next on stdin is read: a ping, the call's cancellation.
func TestStdioInlineCallYieldsStdinOnInput(t *testing.T) {
	pool := &inlinePool{fakePool: newFakePool(), polling: make(chan struct{})}
	srv := newTestServer(t, pool, Options{})
	send, next, end := stdioPipes(t, srv)
	defer end()
	send(initLine)
	next()
	for i := range 3 {
		send(`{"jsonrpc":"2.0","id":1` + string(rune('0'+i)) + `,"method":"tools/call","params":{"name":"add","arguments":{"_1":41}}}`)
		if got := next(); !strings.Contains(got, `"text":"42"`) {
			t.Fatalf("add: %s", got)
		}
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	select {
	case <-pool.polling:
	case <-time.After(10 * time.Second):
		t.Fatal("slow was not offered the stdin reader's goroutine")
	}
	pingThenCancelSlow(t, send, next, pool.fakePool)
	// After the cancellation, calls run inline again.
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"_1":1}}}`)
	if got := next(); !strings.Contains(got, `"text":"2"`) {
		t.Fatalf("add after slow: %s", got)
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	want := []bool{true, true, true, true, true}
	if len(pool.offered) != len(want) {
		t.Fatalf("%d calls, want %d", len(pool.offered), len(want))
	}
	for i := range want {
		if pool.offered[i] != want[i] {
			t.Errorf("call %d offered inline: %v, want %v", i, pool.offered[i], want[i])
		}
	}
	if len(pool.yields) != 2 || !pool.yields[0] || pool.yields[1] {
		t.Errorf("slow's two Yields reported %v, want [true false]: stdin is handed over once", pool.yields)
	}
}

// A stdin poll(2) cannot watch is never offered: a regular file is
// always readable, a reader without a descriptor cannot be watched.
func TestPollableFd(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if fd := pollableFd(r); fd < 0 {
		t.Error("a pipe: not pollable")
	}
	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fd := pollableFd(f); fd != -1 {
		t.Errorf("a regular file: fd %d, want -1", fd)
	}
	if fd := pollableFd(strings.NewReader("x")); fd != -1 {
		t.Errorf("a strings.Reader: fd %d, want -1", fd)
	}
}
