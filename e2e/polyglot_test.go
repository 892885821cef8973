package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Robustness across languages, end to end: stray output of Python, R and
// C++ functions and of their children never reaches the protocol stream,
// failures come back as isError in every language, and one program runs
// pools of several languages at once. (The C++ segfault is in cpp_test.go.)

// chattyMarks are the lines the fidelity program's chatty_<lang> functions
// write to stdout, each once per call: by the language itself and by a
// child process it starts.
var chattyMarks = map[string][]string{
	"py":  {"from-py-print", "from-py-child"},
	"r":   {"from-r-cat", `[1] "from-r-print"`, "from-r-child"},
	"cpp": {"from-cpp-cout", "from-cpp-printf", "from-cpp-child"},
}

// While the pools of three languages print (print, cat, std::cout, printf)
// and start children that print (os.system, system, std::system), with
// calls in flight in all of them at once, every byte nexus writes to stdout
// is a JSON-RPC reply, one per request, and the output reaches stderr.
func TestPolyglotStdoutPurity(t *testing.T) {
	requireFidelity(t)
	s := startServer(t, program("fidelity"))
	s.handshake()

	const rounds = 4
	pending := map[string]string{} // id → tool
	id := 0
	for round := 0; round < rounds; round++ {
		for _, lang := range fidelityLangs {
			id++
			s.sendCall(id, "chatty_"+lang, nil)
			pending[fmt.Sprint(id)] = "chatty_" + lang
			id++
			s.sendCall(id, "idStr_"+lang, map[string]any{"_1": "line one\nline two"})
			pending[fmt.Sprint(id)] = "idStr_" + lang
		}
	}
	id++
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
	pending[fmt.Sprint(id)] = "ping"

	var stdout bytes.Buffer
	// checkLine asserts one stdout line is a whole JSON-RPC reply to a
	// request still pending, and the right one.
	checkLine := func(line []byte) {
		stdout.Write(line)
		if !bytes.HasSuffix(line, []byte("\n")) {
			t.Errorf("stdout ends without a newline: %q", line)
		}
		var reply struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
			Method  string          `json:"method"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&reply); err != nil || dec.More() {
			t.Errorf("stdout line is not one JSON-RPC reply (%v): %q", err, line)
			return
		}
		tool, ok := pending[string(reply.ID)]
		if reply.JSONRPC != "2.0" || !ok || reply.Method != "" || (reply.Result == nil) == (reply.Error == nil) {
			t.Errorf("stdout line is not a reply to a pending request: %q", line)
			return
		}
		delete(pending, string(reply.ID))
		want := map[string]string{"ping": `{}`}[tool]
		switch {
		case strings.HasPrefix(tool, "chatty_"):
			want = `{"content":[{"type":"text","text":"\"done\""}],"isError":false}`
		case strings.HasPrefix(tool, "idStr_"):
			want = `{"content":[{"type":"text","text":"\"line one\\nline two\""}],"isError":false}`
		}
		if string(reply.Result) != want {
			t.Errorf("%s: result %s, want %s", tool, reply.Result, want)
		}
	}
	for len(pending) > 0 {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("nexus closed stdout with %d requests unanswered", len(pending))
			}
			checkLine(line)
		case <-time.After(60 * time.Second):
			t.Fatalf("%d requests unanswered after 60s: %v", len(pending), pending)
		}
	}
	s.closeExpectingNoMore()
	stderr := s.stderr.String()
	for lang, marks := range chattyMarks {
		for _, mark := range marks {
			if bytes.Contains(stdout.Bytes(), []byte(mark)) {
				t.Errorf("%s's %q reached stdout", lang, mark)
			}
			if n := strings.Count(stderr, mark); n != rounds {
				t.Errorf("%s's %q is on stderr %d times, want %d (once per call)", lang, mark, n, rounds)
			}
		}
	}
}

// A Python raise, an R stop() and a C++ throw come back as isError with
// the message, in the middle of other calls to every pool, and each pool
// goes on serving.
func TestPolyglotErrors(t *testing.T) {
	requireFidelity(t)
	s := startServer(t, program("fidelity"))
	s.handshake()
	wantError := map[string]string{
		"py":  "ValueError: boom: bad AC — 12",
		"r":   "boom: bad AC — 12",
		"cpp": "boom: bad AC — 12",
	}
	// Send everything first, so that the failures happen while other calls
	// to the same pools are in flight; then match replies by id.
	type expect struct {
		text    string
		isError bool
	}
	want := map[string]expect{}
	id := 0
	for round := 0; round < 3; round++ {
		for _, lang := range fidelityLangs {
			id++
			s.sendCall(id, "fail_"+lang, map[string]any{"_1": "bad AC — 12"})
			want[fmt.Sprint(id)] = expect{wantError[lang], true}
			id++
			s.sendCall(id, "negInt_"+lang, map[string]any{"_1": round + 1})
			want[fmt.Sprint(id)] = expect{fmt.Sprint(-(round + 1)), false}
		}
	}
	for len(want) > 0 {
		r := s.recv()
		w, ok := want[idOf(r)]
		if !ok {
			t.Fatalf("unexpected reply %v", r)
		}
		delete(want, idOf(r))
		if text, isErr := toolText(t, r); text != w.text || isErr != w.isError {
			t.Errorf("reply %s: %q (isError %v), want %q (isError %v)", idOf(r), text, isErr, w.text, w.isError)
		}
	}
	// The R and C++ failures were ordinary errors: no pool died for them.
	if strings.Contains(s.stderr.String(), "died") {
		t.Errorf("a pool died of an error its function raised:\n%s", s.stderr.String())
	}
}

// countPools counts the live descendants of pid whose command line holds
// each marker.
func countPools(pid int, markers map[string]string) map[string]int {
	counts := map[string]int{}
	for _, cmdline := range descendants(pid) {
		for lang, marker := range markers {
			if strings.Contains(cmdline, marker) {
				counts[lang]++
			}
		}
	}
	return counts
}

// waitPools waits until nexus runs exactly the wanted number of processes
// of each pool (by command line) and fails with what it runs otherwise.
func waitPools(t *testing.T, s *server, markers map[string]string, want map[string]int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := countPools(s.cmd.Process.Pid, markers)
		same := len(got) == len(want)
		for lang, n := range want {
			same = same && got[lang] == n
		}
		if same {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool processes %v, want %v; nexus runs %v", got, want, descendants(s.cmd.Process.Pid))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var combatPools = map[string]string{"py": "pools/py/pool.py", "r": "pools/r/pool.R"}

// `nexus mcp testdata/combat` starts its Python and R pools at once, R with
// its default workers (one per CPU, up to 4), and a call to each works; the
// manual's transcripts themselves are TestManualTranscripts.
func TestCombatStartsBothPools(t *testing.T) {
	for _, why := range []string{testenv.PythonMissing(), rAvailable()} {
		if why != "" {
			testenv.MissingTool(t, why)
		}
	}
	s := startServer(t, program("combat"))
	s.handshake()
	waitPools(t, s, combatPools, map[string]int{"py": 1, "r": min(4, runtime.NumCPU())})
	if text, isErr := s.callTool(1, "intro", map[string]any{"_1": "Owlbear"}); isErr || text != `"A wild Owlbear appears!"` {
		t.Errorf("intro = %q (isError %v)", text, isErr)
	}
	if text, isErr := s.callTool(2, "fighterDamage", map[string]any{"_1": 20}); isErr || text != "7" {
		t.Errorf("fighterDamage = %q (isError %v)", text, isErr)
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
}

// --workers sets every pool's processes unless its manifest entry says
// (fidelity's R pool sets metadata.workers 2).
func TestWorkersFlagAndMetadata(t *testing.T) {
	requireFidelity(t)
	s := startServer(t, program("fidelity"), "--workers", "3")
	s.handshake()
	markers := map[string]string{"py": "pools/py/pool.py", "r": "pools/r/pool.R", "cpp": "pool-cpp.out"}
	waitPools(t, s, markers, map[string]int{"py": 3, "r": 2, "cpp": 3})
	// Six calls to R at once: two processes, one call at a time each,
	// all answered.
	for i := 1; i <= 6; i++ {
		s.sendCall(i, "negInt_r", map[string]any{"_1": i})
	}
	seen := map[string]bool{}
	for i := 0; i < 6; i++ {
		r := s.recv()
		if text, isErr := toolText(t, r); isErr || text != "-"+idOf(r) {
			t.Errorf("negInt_r for call %s: %q (isError %v)", idOf(r), text, isErr)
		}
		seen[idOf(r)] = true
	}
	if len(seen) != 6 {
		t.Errorf("replies to %v, want 6 distinct calls", seen)
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
}
