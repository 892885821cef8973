package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

func manifestVersion(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(program(name), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Build struct {
			MorlocVersion string `json:"morloc_version"`
		} `json:"build"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.Build.MorlocVersion
}

// mcpTools runs `nexus run TARGET --mcp-tools` and returns its stdout.
func mcpTools(t *testing.T, target string) []byte {
	t.Helper()
	out, err := exec.Command(nexusBin, "run", target, "--mcp-tools").Output()
	if err != nil {
		t.Fatalf("--mcp-tools: %v", err)
	}
	return out
}

// The transcripts of morloc's manual (§7.5 "Model Context Protocol": 7.5.1,
// 7.5.4, 7.5.6) for testdata/combat, byte for byte.
func TestManualTranscripts(t *testing.T) {
	s := startServer(t, program("combat"))
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"0"}}}`)
	want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"combat","version":"` + manifestVersion(t, "combat") + `"}}}`
	if got := s.recvRaw(); got != want {
		t.Errorf("initialize:\n got %s\nwant %s", got, want)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// tools/list returns exactly the --mcp-tools payload.
	var compact bytes.Buffer
	if err := json.Compact(&compact, mcpTools(t, program("combat"))); err != nil {
		t.Fatal(err)
	}
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	want = `{"jsonrpc":"2.0","id":5,"result":` + compact.String() + `}`
	if got := s.recvRaw(); got != want {
		t.Errorf("tools/list:\n got %s\nwant %s", got, want)
	}
	for _, name := range []string{"rollAdv", "fighterDamage", "intro"} {
		if !strings.Contains(compact.String(), `"name":"`+name+`"`) {
			t.Errorf("tools/list lacks %s", name)
		}
	}

	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fighterDamage","arguments":{"_1":15}}}`)
	want = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"12"}],"isError":false}}`
	if got := s.recvRaw(); got != want {
		t.Errorf("fighterDamage:\n got %s\nwant %s", got, want)
	}
	// intro runs in the R pool.
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"intro","arguments":{"_1":"Goblin"}}}`)
	want = `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"A wild Goblin appears!\""}],"isError":false}}`
	if got := s.recvRaw(); got != want {
		t.Errorf("intro:\n got %s\nwant %s", got, want)
	}
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fireball","arguments":{}}}`)
	want = `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"unknown tool 'fireball'"}}`
	if got := s.recvRaw(); got != want {
		t.Errorf("fireball:\n got %s\nwant %s", got, want)
	}
	// rollAdv keeps the larger of two d20 rolls.
	for i := 0; i < 5; i++ {
		text, isErr := toolText(t, s.request(10+i, "tools/call", map[string]any{"name": "rollAdv", "arguments": map[string]any{}}))
		var n int
		if isErr || json.Unmarshal([]byte(text), &n) != nil || n < 1 || n > 20 {
			t.Errorf("rollAdv gave %q (isError %v), want an integer in 1..20", text, isErr)
		}
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit after EOF: %v, want status 0", err)
	}
}

// docs/spec.md §4.2: ping before the handshake; tools/* gated until
// initialize.
func TestLifecycleGating(t *testing.T) {
	s := startServer(t, program("shapes"))
	if r := s.request(1, "ping", nil); r["result"] == nil || len(r["result"].(map[string]any)) != 0 {
		t.Errorf("ping before initialize: got %v, want result {}", r)
	}
	for i, method := range []string{"tools/list", "tools/call"} {
		r := s.request(2+i, method, map[string]any{"name": "addInt", "arguments": map[string]any{"_1": 1}})
		if errCode(r) != -32600 || !strings.Contains(errMessage(r), "not initialized") {
			t.Errorf("%s before initialize: got %v, want -32600 not initialized", method, r)
		}
	}
	s.handshake()
	if r := s.request(9, "ping", nil); r["result"] == nil {
		t.Errorf("ping after initialize: %v", r)
	}
	// Version negotiation: an unknown version is answered with the latest.
	s2 := startServer(t, program("shapes"))
	r := s2.request(1, "initialize", map[string]any{"protocolVersion": "1999-01-01", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "0"}})
	if v := r["result"].(map[string]any)["protocolVersion"]; v != "2025-11-25" {
		t.Errorf("unsupported version answered %v, want the latest 2025-11-25", v)
	}
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		s3 := startServer(t, program("shapes"))
		r := s3.request(1, "initialize", map[string]any{"protocolVersion": v, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "0"}})
		if got := r["result"].(map[string]any)["protocolVersion"]; got != v {
			t.Errorf("initialize %s answered %v, want it echoed", v, got)
		}
	}
}

// Every row of docs/spec.md §4.4.
func TestErrorTable(t *testing.T) {
	s := startServer(t, program("shapes"))
	s.handshake()
	type row struct {
		name    string
		line    string
		code    int    // 0: a result is expected
		isError bool   // for results
		substr  string // in the error message or the result text
	}
	rows := []row{
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"fireball/cast"}`, -32601, false, "fireball/cast"},
		{"unknown tool", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fireball","arguments":{}}}`, -32602, false, "unknown tool 'fireball'"},
		{"missing argument", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"addInt","arguments":{}}}`, -32602, false, "'_1'"},
		{"unexpected argument", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"addInt","arguments":{"_1":1,"bogus":2}}}`, -32602, false, "'bogus'"},
		{"wrong-typed argument", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"addInt","arguments":{"_1":"one"}}}`, -32602, false, "argument '_1' of 'addInt': expected integer, got string"},
		{"arguments not an object", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"addInt","arguments":[1]}}`, -32602, false, "must be an object"},
		{"missing tool name", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}`, -32602, false, "name"},
		{"function raises", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fail","arguments":{"_1":"x"}}}`, 0, true, "boom"},
	}
	for _, r := range rows {
		s.send(r.line)
		m := s.recv()
		if r.code != 0 {
			if errCode(m) != r.code || !strings.Contains(errMessage(m), r.substr) {
				t.Errorf("%s: got %v, want error %d containing %q", r.name, m, r.code, r.substr)
			}
			continue
		}
		text, isErr := toolText(t, m)
		if isErr != r.isError || !strings.Contains(text, r.substr) {
			t.Errorf("%s: got text %q isError %v, want isError %v containing %q", r.name, text, isErr, r.isError, r.substr)
		}
	}
	// Unknown notifications are ignored: nothing comes back, and the server still answers.
	s.send(`{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`)
	s.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"addInt","arguments":{"_1":1}}}`)
	s.expectSilence(500 * time.Millisecond)
	if r := s.request(20, "ping", nil); r["result"] == nil {
		t.Errorf("ping after notifications: %v", r)
	}
}

// A pool that cannot start makes its calls return isError with the reason.
func TestPoolStartFailure(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(program("combat"), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(data, &m)
	m["pools"].([]any)[0].(map[string]any)["exec"] = []any{"python-that-does-not-exist-9", "pools/py/pool.py"}
	out, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, "manifest.json"), out, 0o644)
	s := startServer(t, dir)
	s.handshake()
	text, isErr := toolText(t, s.request(1, "tools/call", map[string]any{"name": "fighterDamage", "arguments": map[string]any{"_1": 15}}))
	if !isErr || !strings.Contains(text, "python-that-does-not-exist-9") {
		t.Errorf("got %q isError %v, want isError naming the missing interpreter", text, isErr)
	}
	// The server keeps serving.
	if r := s.request(2, "ping", nil); r["result"] == nil {
		t.Errorf("ping after a failed pool: %v", r)
	}
}

// docs/spec.md §4.1 framing: blank lines, \r, a pretty-printed object, bad
// JSON, oversized lines.
func TestFraming(t *testing.T) {
	s := startServer(t, program("shapes"), "--max-line", "4096")
	s.send("")
	s.send("   ")
	s.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r")
	if r := s.recv(); idOf(r) != "1" || r["result"] == nil {
		t.Errorf("ping with trailing \\r: %v", r)
	}
	pretty := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 2,\n  \"method\": \"ping\"\n}"
	s.send(pretty)
	for i, line := range strings.Split(pretty, "\n") {
		r := s.recv()
		if errCode(r) != -32700 || r["id"] != nil {
			t.Errorf("fragment %d %q: got %v, want -32700 with id null", i, line, r)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":3,"method":`)
	if r := s.recv(); errCode(r) != -32700 || r["id"] != nil {
		t.Errorf("truncated JSON: got %v, want -32700 id null", r)
	}
	s.send(`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"pad":"` + strings.Repeat("x", 8000) + `"}}`)
	if r := s.recv(); errCode(r) != -32600 || !strings.Contains(errMessage(r), "4096") {
		t.Errorf("oversized line: got %v, want -32600 naming the limit", r)
	}
	if r := s.request(5, "ping", nil); idOf(r) != "5" || r["result"] == nil {
		t.Errorf("ping after an oversized line: %v", r)
	}
}

// Lines of tens of MiB pass (no bufio.Scanner limit); values come back whole.
func TestLargeArgument(t *testing.T) {
	testenv.Long(t)
	s := startServer(t, program("shapes"))
	s.handshake()
	big := strings.Repeat("abcdefghij", 2<<20) // 20 MiB
	text, isErr := toolText(t, s.request(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"_1": big}}))
	if isErr {
		t.Fatalf("echo of 20 MiB: isError: %.200s", text)
	}
	var back string
	if err := json.Unmarshal([]byte(text), &back); err != nil || back != big {
		t.Errorf("echo of 20 MiB came back with %d bytes (err %v), want %d", len(back), err, len(big))
	}
}

// 50 concurrent calls: a fast call sent after a slow one is answered first,
// and every request gets exactly one reply with its own id.
func TestConcurrentCalls(t *testing.T) {
	testenv.Long(t)
	s := startServer(t, program("shapes"))
	s.handshake()
	s.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleepMs","arguments":{"_1":3000}}}`)
	for i := 0; i < 49; i++ {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sleepMs","arguments":{"_1":%d}}}`, i, 50+i))
	}
	seen := map[string]int{}
	var order []string
	for len(order) < 50 {
		r := s.recv()
		id := idOf(r)
		seen[id]++
		order = append(order, id)
		text, isErr := toolText(t, r)
		if isErr {
			t.Errorf("call %s failed: %s", id, text)
		}
	}
	if order[len(order)-1] != `"slow"` {
		t.Errorf("the slow call was not answered last: order %v", order)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("id %s answered %d times", id, n)
		}
	}
	if len(seen) != 50 {
		t.Errorf("%d distinct replies, want 50", len(seen))
	}
}

// While a pool prints (print, os.system), every byte on stdout is still a
// JSON-RPC reply (docs/spec.md §4.1).
func TestStdoutPurity(t *testing.T) {
	s := startServer(t, program("shapes"))
	s.handshake()
	for i := 0; i < 5; i++ {
		text, isErr := toolText(t, s.request(i+1, "tools/call", map[string]any{"name": "chatty", "arguments": map[string]any{}}))
		if isErr {
			t.Fatalf("chatty failed: %s", text)
		}
	}
	s.closeExpectingNoMore()
	if !strings.Contains(s.stderr.String(), "from-child") {
		t.Errorf("the pool's child output did not reach stderr:\n%s", s.stderr.String())
	}
}

// stdin EOF: every pool stops and nexus exits 0, leaving no process behind.
func TestShutdownOnEOF(t *testing.T) {
	s := startServer(t, program("shapes"))
	s.handshake()
	if _, isErr := toolText(t, s.request(1, "tools/call", map[string]any{"name": "addInt", "arguments": map[string]any{"_1": 1}})); isErr {
		t.Fatal("addInt failed")
	}
	kids := descendants(s.cmd.Process.Pid)
	pools := 0
	for _, c := range kids {
		if strings.Contains(c, "pool.py") {
			pools++
		}
	}
	if pools == 0 {
		t.Fatalf("found no pool process under nexus: %v", kids)
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("exit status after EOF: %v, want 0", err)
	}
	waitGone(t, kids)
}
