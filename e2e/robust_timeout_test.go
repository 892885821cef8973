package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// A command's metadata.timeout bounds its calls: the client gets isError
// at once, the stuck pool process is replaced, and a call already running
// in it finishes undisturbed.
func TestTimeoutFromManifest(t *testing.T) {
	testenv.Long(t)
	s := startServer(t, unruly())
	s.handshake()
	old := s.mustInt(1, "pid", nil)
	s.sendCall("slow", "slow", map[string]any{"_1": 4000})
	time.Sleep(300 * time.Millisecond) // slow is running
	began := time.Now()
	text, isErr := s.callTool(2, "hang", nil)
	if !isErr || text != "call to 'hang' timed out after 1s" {
		t.Errorf("hang: %q (isError %v), want the 1s timeout", text, isErr)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the timed-out call took %s", took)
	}
	// New calls go to a fresh process once the cancel grace (2s) is over.
	var fresh int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if fresh = s.mustInt(3, "pid", nil); fresh != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stuck pool was never replaced")
		}
	}
	r := s.recv()
	if text, isErr := toolText(t, r); idOf(r) != `"slow"` || isErr || text != "4000" {
		t.Errorf("the call running beside the stuck one: id %s %q isError %v, want 4000", idOf(r), text, isErr)
	}
	waitGone(t, map[int]string{old: "the retired pool"})
	if !strings.Contains(s.stderr.String(), "replacing a stuck pool process") {
		t.Errorf("stderr does not say the pool was replaced:\n%s", s.stderr.String())
	}
}

// --timeout bounds every command that sets none.
func TestTimeoutFlag(t *testing.T) {
	testenv.Long(t)
	s := startServer(t, unruly(), "--timeout", "700ms")
	s.handshake()
	text, isErr := s.callTool(1, "block", map[string]any{"_1": 60})
	if !isErr || text != "call to 'block' timed out after 700ms" {
		t.Errorf("block: %q (isError %v), want the 700ms timeout", text, isErr)
	}
	// A command's own timeout beats the flag.
	text, isErr = s.callTool(2, "hang", nil)
	if !isErr || text != "call to 'hang' timed out after 1s" {
		t.Errorf("hang: %q (isError %v), want its own 1s timeout", text, isErr)
	}
	if n := s.mustInt(3, "ok", map[string]any{"_1": 1}); n != 2 {
		t.Errorf("ok(1) = %d", n)
	}
}

// A stuck call times out in every runtime, and a call queued behind it is
// not lost: in R, which runs one call at a time ("concurrent": false), it
// never began and is sent to the fresh process; in Python and C++ it runs
// beside the stuck one and answers at once.
func TestTimeoutAnyLanguage(t *testing.T) {
	testenv.Long(t)
	p := newPolyglot(t)
	s := startServer(t, p.dir, "--workers", "1") // <lang>Block's own timeout is 1s
	s.handshake()
	for i, lang := range p.langs {
		s.sendCall(fmt.Sprintf("%s-block", lang), lang+"Block", map[string]any{"_1": 60})
		time.Sleep(200 * time.Millisecond) // the block call goes first
		s.sendCall(fmt.Sprintf("%s-ok", lang), lang+"Ok", map[string]any{"_1": 41})
		got := map[string]string{}
		for range 2 {
			line, ok := s.recvWithin(30 * time.Second)
			if !ok {
				t.Fatalf("%s: replies missing: %v", lang, got)
			}
			r := decode(t, line)
			text, isErr := toolText(t, r)
			got[idOf(r)] = fmt.Sprintf("%s|%v", text, isErr)
		}
		if want := "call to '" + lang + "Block' timed out after 1s|true"; got[`"`+lang+`-block"`] != want {
			t.Errorf("%sBlock: %q, want %q", lang, got[`"`+lang+`-block"`], want)
		}
		if got[`"`+lang+`-ok"`] != "42|false" {
			t.Errorf("%sOk queued behind the stuck call: %q, want 42", lang, got[`"`+lang+`-ok"`])
		}
		if n := s.mustInt(100+i, lang+"Ok", map[string]any{"_1": 1}); n != 2 {
			t.Errorf("%sOk afterwards = %d", lang, n)
		}
	}
}
