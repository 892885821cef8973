package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A tools/call alone in flight runs on nexus's stdin reader and waits for
// its pool and for stdin in one poll(2) (internal/mcp/inline.go). Whatever
// comes on stdin while it waits is still read at once, in every language: a
// ping is answered while the call runs, the call's cancellation stops it (no
// reply), and the calls after run as before (docs/spec.md §4.1, §4.7).
func TestInlineCallStillReadsStdin(t *testing.T) {
	for _, lang := range []string{"py", "r", "cpp"} {
		t.Run(lang, func(t *testing.T) {
			switch lang {
			case "r":
				if _, err := exec.LookPath("Rscript"); err != nil {
					t.Fatal("Rscript is not installed (make deps)")
				}
			case "cpp":
				if _, err := os.Stat(filepath.Join(program("bench"), "pools", "cpp", "pool-cpp.out")); err != nil {
					t.Fatal("testdata/bench's C++ pool is not built (make pools)")
				}
			}
			s := startServer(t, program("bench"))
			s.handshake()
			add := func(id, a int) {
				t.Helper()
				s.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"add_` + lang + `","arguments":{"a":` + strconv.Itoa(a) + `,"b":1000}}}`)
				m := s.recv()
				if text, isErr := toolText(t, m); isErr || text != strconv.Itoa(a+1000) || idOf(m) != strconv.Itoa(id) {
					t.Fatalf("add_%s(%d, 1000): %v", lang, a, m)
				}
			}
			// Calls one at a time: after the first, each reads its own reply.
			for i := 1; i <= 5; i++ {
				add(i, i)
			}
			for round := range 2 {
				id := `"long` + strconv.Itoa(round) + `"`
				s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"sleep_` + lang + `","arguments":{"ms":30000}}}`)
				time.Sleep(300 * time.Millisecond) // read alone, so it runs on the stdin reader
				if round == 0 {
					// Input while it waits: a ping, answered at once.
					start := time.Now()
					s.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
					if line := s.recvRaw(); line != `{"jsonrpc":"2.0","id":"ping","result":{}}` {
						t.Fatalf("while sleep_%s runs: %s, want the ping's reply", lang, line)
					}
					if d := time.Since(start); d > 10*time.Second {
						t.Errorf("the ping took %s while sleep_%s ran", d, lang)
					}
				}
				// The cancellation, the first input in round 1, stops it.
				start := time.Now()
				s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
				add(10+round, 7) // answered, and no reply to the cancelled call before it
				if d := time.Since(start); d > 20*time.Second {
					t.Errorf("round %d: the call after the cancellation took %s: did sleep_%s stop?", round, d, lang)
				}
			}
			for i := 20; i < 23; i++ {
				add(i, i)
			}
			s.expectSilence(300 * time.Millisecond)
			if err := s.closeAndWait(); err != nil {
				t.Errorf("nexus exited with %v", err)
			}
			if strings.Contains(s.stderr.String(), "panic") {
				t.Errorf("nexus stderr:\n%s", s.stderr.String())
			}
		})
	}
}
