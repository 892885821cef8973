package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// reply is what a hostile input may be answered with (one JSON-RPC reply).
type reply struct {
	id       string // the reply's id, as raw JSON
	code     int    // the error code; 0 for a result
	tool     bool   // a tools/call result
	isError  bool   // for a tool result
	contains string // in the error message or the tool's text
	value    string // for a tool result returning a string: the exact string
}

// hostileWant says how each input must be answered (JSON-RPC 2.0 and
// docs/spec.md §4.1, §4.4): alternatives lists every acceptable reply (nil:
// none at all); batch, when set, is the one acceptable array of replies, in
// order.
type hostileWant struct {
	alternatives []reply
	batch        []reply
}

func one(r ...reply) hostileWant { return hostileWant{alternatives: r} }

var (
	parseError = reply{id: "null", code: -32700}
	noReply    = hostileWant{}
)

func invalid(id string) reply { return reply{id: id, code: -32600} }
func pong(id string) reply    { return reply{id: id} }

// The corpus: e2e/hostile/<name>.in holds one input line, byte for byte;
// the generated cases (too big to keep as files) are built by hostileInputs.
var hostileCases = map[string]hostileWant{
	"truncated-object":     one(parseError),
	"truncated-string":     one(parseError),
	"not-json":             one(parseError),
	"two-objects-one-line": one(parseError),
	// RFC 8259 §8.1: a parser MAY ignore a byte order mark, or refuse it.
	"byte-order-mark": one(parseError, pong("4")),
	"jsonrpc-1.0":     one(invalid("5")),
	"jsonrpc-missing": one(invalid("6")),
	"jsonrpc-number":  one(invalid("7")),
	"jsonrpc-null":    one(invalid("8")),
	// Ids are echoed exactly as sent, whatever their size.
	"id-string":        one(pong(`"abc"`)),
	"id-empty-string":  one(pong(`""`)),
	"id-negative":      one(pong("-7")),
	"id-fraction":      one(pong("1.5")),
	"id-huge-integer":  one(pong("123456789012345678901234567890")),
	"id-huge-exponent": one(pong("1e400")),
	// Not ids (MCP: a string or a number, never null): the id cannot be echoed.
	"id-object": one(invalid("null")),
	"id-array":  one(invalid("null")),
	"id-true":   one(invalid("null")),
	"id-null":   one(invalid("null")),
	// JSON text is UTF-8 (RFC 8259 §8.1): echoing the bytes or refusing them both keep the client whole.
	"id-invalid-utf8":     one(pong("\"\xff\xfe\""), parseError),
	"method-missing":      one(invalid("9")),
	"method-number":       one(invalid("10")),
	"method-empty":        one(reply{id: "11", code: -32601}),
	"method-unknown":      one(reply{id: "12", code: -32601, contains: "fireball/cast"}),
	"method-invalid-utf8": one(reply{id: "13", code: -32601}, parseError),
	"method-escaped-nul":  one(reply{id: "14", code: -32601}),
	// MCP's params are objects: an array is a well-formed request with bad
	// params; a scalar is not a well-formed request at all (JSON-RPC §4),
	// and nexus answers it as bad params too.
	"params-array":              one(reply{id: "15", code: -32602}),
	"params-string":             one(reply{id: "16", code: -32602}, invalid("16")),
	"params-number":             one(reply{id: "17", code: -32602}, invalid("17")),
	"arguments-extra-key":       one(reply{id: "18", code: -32602, contains: "unexpected argument 'extra' of 'ok'"}),
	"arguments-wrong-type":      one(reply{id: "19", code: -32602, contains: "argument '_1' of 'ok': expected integer, got string"}),
	"arguments-extra-and-wrong": one(reply{id: "20", code: -32602, contains: "'ok'"}),
	"arguments-array":           one(reply{id: "21", code: -32602, contains: "arguments of 'ok' must be an object, got array"}),
	"arguments-string":          one(reply{id: "22", code: -32602, contains: "arguments of 'ok' must be an object, got string"}),
	// 1e400 is an integer, so Int takes it whole; so does a 30-digit one.
	"arguments-huge-number": one(reply{id: "23", tool: true, contains: "1" + strings.Repeat("0", 399) + "1"}),
	"arguments-big-integer": one(reply{id: "24", tool: true, contains: "123456789012345678901234567891"}),
	"tool-name-missing":     one(reply{id: "25", code: -32602, contains: "name"}),
	"tool-name-number":      one(reply{id: "26", code: -32602}),
	"tool-unknown":          one(reply{id: "27", code: -32602, contains: "unknown tool 'fireball'"}),
	"unicode-argument":      one(reply{id: "28", tool: true, value: "héllo wörld 🎲 ✓ 日本語"}),
	"unicode-escapes":       one(reply{id: "29", tool: true, value: "nul\x00 die🎲 tab\t"}),
	// What cannot be UTF-8 reaches the function as U+FFFD.
	"lone-surrogate":        one(reply{id: "30", tool: true, value: "a\uFFFDb"}),
	"invalid-utf8-argument": one(reply{id: "31", tool: true, value: "ok \uFFFD\uFFFD \uFFFD( end"}),
	"nul-after-object":      one(parseError),
	"nul-inside-string":     one(parseError),
	"nul-alone":             one(parseError),
	// Notifications and the client's own replies are never answered.
	"notification-unknown":    noReply,
	"notification-bad-params": noReply,
	"notification-tools-call": noReply,
	"client-result":           noReply,
	"client-error":            noReply,
	"scalar-string":           one(invalid("null")),
	"scalar-number":           one(invalid("null")),
	"scalar-null":             one(invalid("null")),
	"scalar-true":             one(invalid("null")),
	"batch-empty":             one(invalid("null")),
	"batch-of-junk":           {batch: []reply{invalid("null"), invalid("null"), invalid("null")}},
	"batch-mixed":             {batch: []reply{pong("34"), invalid("35")}},
	"batch-notifications":     noReply,
	// Generated.
	"long-method-name": one(reply{id: "36", code: -32601}),
	// Go's decoder stops at 10 000 levels: a parse error; a decoder without
	// a limit would see an array of arrays (not a request) or a ping.
	"nested-array-100000":  one(parseError, invalid("null")),
	"nested-params-100000": one(parseError, pong("37")),
	"line-100MiB":          one(reply{id: "null", code: -32600, contains: "longer than the 67108864-byte limit"}),
}

// hostileInputs returns every input of the corpus by name.
func hostileInputs(t *testing.T) map[string][]byte {
	t.Helper()
	inputs := map[string][]byte{}
	files, err := filepath.Glob(filepath.Join(repoRoot, "e2e", "hostile", "*.in"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[strings.TrimSuffix(filepath.Base(f), ".in")] = data
	}
	nested := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	inputs["long-method-name"] = []byte(`{"jsonrpc":"2.0","id":36,"method":"` + strings.Repeat("m", 1<<20) + `"}`)
	inputs["nested-array-100000"] = []byte(nested)
	inputs["nested-params-100000"] = []byte(`{"jsonrpc":"2.0","id":37,"method":"ping","params":{"a":` + nested + `}}`)
	inputs["line-100MiB"] = hugeLine()
	return inputs
}

// hugeLine is a ping padded to 100 MiB: over the 64 MiB cap.
func hugeLine() []byte {
	return []byte(`{"jsonrpc":"2.0","id":38,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100<<20) + `"}}`)
}

// rawReply is one reply line, decoded only as far as needed.
type rawReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r *rawReply) matches(w reply) bool {
	if string(r.ID) != w.id {
		return false
	}
	if w.code != 0 {
		return r.Error != nil && r.Error.Code == w.code && strings.Contains(r.Error.Message, w.contains)
	}
	if r.Error != nil || r.Result == nil {
		return false
	}
	if !w.tool {
		return string(r.Result) == "{}"
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(r.Result, &res) != nil || len(res.Content) == 0 || res.IsError != w.isError {
		return false
	}
	text := res.Content[0].Text
	if w.value != "" {
		var s string
		return json.Unmarshal([]byte(text), &s) == nil && s == w.value
	}
	return strings.Contains(text, w.contains)
}

// Every input of the corpus gets the reply JSON-RPC 2.0 and
// docs/spec.md §4.4 prescribe (and only that), and the server answers ping
// after each.
func TestHostileInput(t *testing.T) {
	inputs := hostileInputs(t)
	for name := range inputs {
		if _, ok := hostileCases[name]; !ok {
			t.Errorf("e2e/hostile/%s.in has no expected reply in hostileCases", name)
		}
	}
	var names []string
	for name := range hostileCases {
		if _, ok := inputs[name]; !ok {
			t.Errorf("hostileCases names %q, which has no input", name)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	s := startServer(t, unruly())
	s.handshake()
	for _, name := range names {
		input, ok := inputs[name]
		if !ok {
			continue
		}
		want := hostileCases[name]
		if _, err := s.stdin.Write(append(input, '\n')); err != nil {
			t.Fatalf("%s: writing to nexus: %v", name, err)
		}
		pingID := strconv.Quote("after-" + name)
		s.send(`{"jsonrpc":"2.0","id":` + pingID + `,"method":"ping"}`)
		// Read until the ping's reply and the case's own, which may come
		// after it (tools/call and batches run on their own).
		var got []string
		pinged := false
		wantReplies := 0
		if want.alternatives != nil || want.batch != nil {
			wantReplies = 1
		}
		for deadline := time.Now().Add(10 * time.Second); ; {
			line, ok := s.recvWithin(time.Until(deadline))
			if !ok {
				break
			}
			var r rawReply
			if !strings.HasPrefix(line, "[") && json.Unmarshal([]byte(line), &r) == nil && string(r.ID) == pingID {
				if string(r.Result) != "{}" {
					t.Errorf("%s: ping afterwards answered %s", name, line)
				}
				pinged = true
			} else {
				got = append(got, line)
			}
			if pinged && len(got) >= wantReplies {
				break
			}
		}
		if !pinged {
			t.Fatalf("%s: no answer to ping afterwards", name)
		}
		if wantReplies == 0 {
			// A stray reply to a notification would come late: give it time.
			select {
			case line := <-s.lines:
				got = append(got, string(line))
			case <-time.After(200 * time.Millisecond):
			}
		}
		checkHostileReplies(t, name, input, want, got)
	}
}

func checkHostileReplies(t *testing.T, name string, input []byte, want hostileWant, got []string) {
	t.Helper()
	short := func(b string) string {
		if len(b) > 300 {
			return b[:300] + "…"
		}
		return b
	}
	switch {
	case want.batch != nil:
		var replies []rawReply
		if len(got) != 1 || json.Unmarshal([]byte(got[0]), &replies) != nil || len(replies) != len(want.batch) {
			t.Errorf("%s: got %q, want one array of %d replies", name, got, len(want.batch))
			return
		}
		for i := range replies {
			if !replies[i].matches(want.batch[i]) {
				t.Errorf("%s: reply %d of the batch %s, want %+v", name, i, short(got[0]), want.batch[i])
			}
		}
	case want.alternatives == nil:
		if len(got) != 0 {
			t.Errorf("%s: got %q, want no reply", name, got)
		}
	default:
		if len(got) != 1 {
			t.Errorf("%s (%s): got %d replies %q, want one", name, short(string(input)), len(got), got)
			return
		}
		var r rawReply
		if strings.HasPrefix(got[0], "[") || json.Unmarshal([]byte(got[0]), &r) != nil {
			t.Errorf("%s: reply %s is not one JSON-RPC reply", name, short(got[0]))
			return
		}
		for _, w := range want.alternatives {
			if r.matches(w) {
				return
			}
		}
		t.Errorf("%s (%s): reply %s, want one of %+v", name, short(string(input)), short(got[0]), want.alternatives)
	}
}

var plainBuild = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(nexusBin), "nexus-plain")
	build := exec.Command("go", "build", "-o", bin, "./cmd/nexus")
	build.Dir = repoRoot
	out, err := build.CombinedOutput()
	if err != nil {
		return "", &exec.ExitError{Stderr: out}
	}
	return bin, nil
})

// vmStatus reads a field of /proc/<pid>/status, in KiB.
func vmStatus(t *testing.T, pid int, field string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"))
			if err != nil {
				t.Fatalf("%s: %q", field, line)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// A 100 MiB line is refused without being held whole: nexus's peak memory
// stays under twice the 64 MiB cap over what it used before. (The race
// detector multiplies memory, so this runs a plain build.)
func TestHugeLineMemoryIsBounded(t *testing.T) {
	testenv.Long(t)
	bin, err := plainBuild()
	if err != nil {
		t.Fatalf("building a plain nexus: %v", err)
	}
	saved := nexusBin
	nexusBin = bin
	s := startServer(t, unruly())
	nexusBin = saved
	s.handshake()
	if r := s.request(1, "ping", nil); r["result"] == nil {
		t.Fatalf("ping: %v", r)
	}
	pid := s.cmd.Process.Pid
	before := vmStatus(t, pid, "VmRSS")
	if _, err := s.stdin.Write(append(hugeLine(), '\n')); err != nil {
		t.Fatal(err)
	}
	r := s.recv()
	if errCode(r) != -32600 || r["id"] != nil {
		t.Errorf("the 100 MiB line: %v, want -32600 with id null", r)
	}
	if r := s.request(2, "ping", nil); r["result"] == nil {
		t.Fatalf("ping after the huge line: %v", r)
	}
	peak := vmStatus(t, pid, "VmHWM")
	t.Logf("resident before %d KiB, peak %d KiB", before, peak)
	if limit := before + 2*64*1024; peak > limit {
		t.Errorf("peak resident memory %d KiB, want under %d KiB (before + 2x the 64 MiB cap)", peak, limit)
	}
}
