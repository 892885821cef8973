package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/morlocload"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Concurrent calls to a program morloc 0.69.0 compiled
// (testdata/morloc-0.69/bench), with many in flight at once over MCP on
// stdio, as an agent sends them.

// mixedCalls is how many calls a burst holds: Python echoes, C++ scalings,
// Python ranges and R ramps, each result over 64 KiB (morlocload.Mixed).
const mixedCalls = 48

// burstReply is what came back for one call of a burst.
type burstReply struct {
	text  string
	isErr bool
	err   string // a JSON-RPC error's message
}

// sendBurst sends calls at once, ids first, first+1, ..., without waiting
// for any reply.
func (s *server) sendBurst(first int, calls []morlocload.Call) {
	s.t.Helper()
	var b strings.Builder
	for i, c := range calls {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", first+i, c.Tool, c.Arguments())
	}
	s.send(strings.TrimSuffix(b.String(), "\n"))
}

// burstReplies reads a reply for each of n calls sent with ids first...;
// a call whose reply does not come within d has none in the map.
func (s *server) burstReplies(first, n int, d time.Duration) map[int]burstReply {
	s.t.Helper()
	got := map[int]burstReply{}
	deadline := time.Now().Add(d)
	for len(got) < n {
		line, ok := s.recvWithin(time.Until(deadline))
		if !ok {
			break
		}
		m := decode(s.t, line)
		if _, ok := m["id"]; !ok {
			continue // a notification
		}
		id, err := strconv.Atoi(idOf(m))
		i := id - first
		if _, seen := got[i]; err != nil || seen || i < 0 || i >= n {
			s.t.Fatalf("a reply with id %s, not one of %d…%d still waiting: %s", idOf(m), first, first+n-1, brief(line))
		}
		br := burstReply{err: errMessage(m)}
		if m["error"] == nil {
			br.text, br.isErr = toolText(s.t, m)
		}
		got[i] = br
	}
	return got
}

// wrongAnswers lists, for each call of a burst, what was wrong with its
// reply: an error, a wrong value, or none at all.
func wrongAnswers(calls []morlocload.Call, got map[int]burstReply) []string {
	var wrong []string
	for i, c := range calls {
		r, ok := got[i]
		var why string
		switch {
		case !ok:
			why = "no reply"
		case r.err != "":
			why = "error " + brief(r.err)
		case r.isErr:
			why = "isError " + brief(r.text)
		default:
			if err := c.Check([]byte(r.text)); err != nil {
				why = err.Error()
			}
		}
		if why != "" {
			wrong = append(wrong, fmt.Sprintf("call %d (%s): %s", i, c.Tool, why))
		}
	}
	return wrong
}

// 48 concurrent calls mixing Python, C++ and R, whose results all come
// back through shared memory, each right and each its caller's own: by
// default and with four workers a pool. Every call is sent before any
// reply is read.
func TestMorlocConcurrentMixed(t *testing.T) {
	testenv.Long(t)
	p := compileMorloc(t, "bench")
	for _, mode := range []struct {
		name  string
		extra []string
	}{
		{"default", nil},
		{"workers=4", []string{"--workers", "4"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			s := p.startMCP(t, mode.extra...)
			calls := morlocload.Mixed(mixedCalls)
			const rounds = 3 // the later ones with every pool warm
			for round := range rounds {
				first := 100 * (round + 1)
				start := time.Now()
				s.sendBurst(first, calls)
				got := s.burstReplies(first, len(calls), 3*time.Minute)
				wrong := wrongAnswers(calls, got)
				t.Logf("round %d: %d calls in %s, %d wrong", round+1, len(calls), time.Since(start).Round(time.Millisecond), len(wrong))
				if len(wrong) > 0 {
					t.Errorf("round %d: %d of %d concurrent calls wrong:\n%s", round+1, len(wrong), len(calls), strings.Join(wrong, "\n"))
				}
			}
		})
	}
}

// nexus SIGKILLed during a burst of concurrent calls leaves nothing
// behind: no pool process or worker, socket, temporary directory or
// /dev/shm volume of any process that served the burst.
func TestMorlocNoLeftoversAfterBurst(t *testing.T) {
	testenv.Long(t)
	p := compileMorloc(t, "bench")
	s := p.startMCP(t, "--workers", "4")
	pid := s.cmd.Process.Pid
	calls := morlocload.Mixed(mixedCalls)
	s.sendBurst(1, calls)
	// Killed once results flow and every pool runs, most calls still in
	// flight; what every pool process was started with is gathered until
	// then, so that one started late in the burst is known too.
	launches := map[morlocLaunch]bool{}
	look := func() bool {
		for pid := range p.poolProcesses(pid) {
			if l, err := readLaunch(pid); err == nil {
				launches[l] = true
			}
		}
		langs := map[string]bool{}
		for l := range launches {
			for _, lang := range []string{"py", "cpp", "r"} {
				if strings.Contains(filepath.Base(l.socket), "pipe-"+lang) {
					langs[lang] = true
				}
			}
		}
		return len(langs) == 3
	}
	for replies := 0; !look() || replies < 3; {
		line, ok := s.recvWithin(2 * time.Minute)
		if !ok {
			t.Fatalf("no reply to the burst within 2 minutes (%d so far)", replies)
		}
		if strings.Contains(line, `"id":`) {
			replies++
		}
		if replies == len(calls) {
			t.Fatalf("every call answered before the Python, C++ and R pools were all seen running: %v", launches)
		}
	}
	kids := descendants(pid)
	s.cmd.Process.Kill()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("nexus did not exit on SIGKILL")
	}
	t.Logf("killed with %d processes below nexus, pools started as %d launches", len(kids), len(launches))
	assertNothingLeft(t, pid, kids, launches)
}

// One call after another to a single instance (--workers 1), Python and
// C++ results of one size over 64 KiB: morloc 0.69's allocator wedges on
// the tenth (see pool's allocatorWedged), and nexus answers it all the
// same, from a fresh instance.
func TestMorlocSameSizeResultsInARow(t *testing.T) {
	testenv.Long(t)
	p := compileMorloc(t, "bench")
	s := p.startMCP(t, "--workers", "1")
	calls := morlocload.Mixed(24, "py", "cpp")
	got := map[int]burstReply{}
	for i := range calls {
		s.sendBurst(100+i, calls[i:i+1])
		got[i] = s.burstReplies(100+i, 1, time.Minute)[0]
	}
	if wrong := wrongAnswers(calls, got); len(wrong) > 0 {
		t.Errorf("%d of %d calls in a row wrong:\n%s", len(wrong), len(calls), strings.Join(wrong, "\n"))
	}
}
