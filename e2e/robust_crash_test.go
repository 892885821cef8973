package e2e

import (
	"strings"
	"testing"
)

// A pool that dies fails the call that killed it and every other call in
// flight on it with isError and the reason, and the next call succeeds on a
// fresh process (docs/internals.md, "Death and restarts").
func TestCrashedPoolIsRestarted(t *testing.T) {
	tests := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"crash", map[string]any{"_1": 7}, []string{"pool py died (exit status 7); last stderr:", "crashing with status 7"}},
		{"segfault", nil, []string{"pool py died (signal: segmentation fault); last stderr:", "about to read address 0"}},
	}
	s := startServer(t, unruly())
	s.handshake()
	for i, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			s.t = t
			before := s.mustInt(100*i+1, "pid", nil)
			// A slow call is in flight when the pool dies.
			s.sendCall(100*i+2, "slow", map[string]any{"_1": 20000})
			// Concurrent requests may reach the pool in any order: a call
			// answered after it means the slow call has reached the pool
			// (a goroutine's worth of scheduling, not a guarantee, but
			// under -race on 2 loaded CPUs the crash once overtook it).
			if n := s.mustInt(100*i+6, "ok", map[string]any{"_1": 1}); n != 2 {
				t.Fatalf("ok(1) before the crash = %d", n)
			}
			s.sendCall(100*i+3, tt.tool, tt.args)
			for range 2 {
				r := s.recv()
				text, isErr := toolText(t, r)
				if !isErr {
					t.Errorf("call %s succeeded on a dying pool: %s", idOf(r), text)
				}
				for _, want := range tt.want[:1] {
					if !strings.Contains(text, want) {
						t.Errorf("call %s: %q lacks %q", idOf(r), text, want)
					}
				}
				if idOf(r) == fmtPID(100*i+3) && !strings.Contains(text, tt.want[1]) {
					t.Errorf("the crashing call: %q lacks the pool's last stderr %q", text, tt.want[1])
				}
			}
			if n := s.mustInt(100*i+4, "ok", map[string]any{"_1": 1}); n != 2 {
				t.Errorf("ok(1) after the crash = %d", n)
			}
			if after := s.mustInt(100*i+5, "pid", nil); after == before {
				t.Errorf("pid %d before and after the crash", before)
			}
		})
	}
	s.t = t
	if r := s.request(999, "ping", nil); r["result"] == nil {
		t.Errorf("ping after the crashes: %v", r)
	}
}

// Every runtime's pool is restarted after it dies, and its calls say why.
func TestCrashAnyLanguage(t *testing.T) {
	p := newPolyglot(t)
	s := startServer(t, p.dir)
	s.handshake()
	for i, lang := range p.langs {
		text, isErr := s.callTool(10*i+1, lang+"Crash", map[string]any{"_1": 7})
		if !isErr || !strings.HasPrefix(text, "pool "+lang) || !strings.Contains(text, " died (exit status 7); last stderr:\n") ||
			!strings.Contains(text, "crashing with status 7") {
			t.Errorf("%sCrash: %q (isError %v), want the pool's death with its last stderr", lang, text, isErr)
		}
		if n := s.mustInt(10*i+2, lang+"Ok", map[string]any{"_1": 1}); n != 2 {
			t.Errorf("%sOk after the crash = %d", lang, n)
		}
	}
}
