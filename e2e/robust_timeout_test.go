package e2e

import (
	"strings"
	"testing"
	"time"
)

// A command's metadata.timeout bounds its calls: the client gets isError
// at once, the stuck pool process is replaced, and a call already running
// in it finishes undisturbed.
func TestTimeoutFromManifest(t *testing.T) {
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
