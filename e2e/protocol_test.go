package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Transcripts of the real binary with real pools: each line sent, and the
// exact lines that must come back. "~" before an expected line means the
// reply only has to contain the rest.

// step is one message sent and the replies it must produce, in order.
type step struct {
	send string
	want []string // exact lines; a "~" prefix means "contains"
}

func runTranscript(t *testing.T, s *server, steps []step) {
	t.Helper()
	for i, st := range steps {
		s.send(st.send)
		for _, want := range st.want {
			got := s.recvRaw()
			if sub, ok := strings.CutPrefix(want, "~"); ok {
				if !strings.Contains(got, sub) {
					t.Errorf("step %d (%.60s):\n got %s\nwant it to contain %s", i, st.send, got, sub)
				}
			} else if got != want {
				t.Errorf("step %d (%.60s):\n got %s\nwant %s", i, st.send, got, want)
			}
		}
	}
}

// meta26 is the per-request _meta of 2026-07-28, extra members after a comma.
func meta26(version, extra string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"e2e","version":"0"}` + extra + `}`
}

// annotatedShapes copies testdata/shapes to a temporary directory and gives
// addInt a title and behaviour hints in its manifest metadata.
func annotatedShapes(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := program("shapes")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, c := range m["commands"].([]any) {
		cmd := c.(map[string]any)
		if cmd["name"] == "addInt" {
			cmd["metadata"] = map[string]any{"title": "Add One", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Each handshake version sees what it knows: annotations from 2025-03-26,
// title, outputSchema and structuredContent from 2025-06-18.
func TestHandshakeEras(t *testing.T) {
	prog := annotatedShapes(t)
	const addInt = `{"name":"addInt",%s"description":"Add one to an integer","inputSchema":{"type":"object","properties":{"_1":{"type":"integer","description":"Integer to increment"}},"required":["_1"],"additionalProperties":false}%s}`
	const annotations = `,"annotations":{"title":"Add One","readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}`
	for _, tt := range []struct {
		version, addInt string
		outputSchema    bool
		person          string
	}{
		{"2024-11-05", fmt.Sprintf(addInt, "", ""), false,
			`{"content":[{"type":"text","text":"{\"name\":\"Ada\",\"age\":36}"}],"isError":false}`},
		{"2025-03-26", fmt.Sprintf(addInt, "", annotations), false,
			`{"content":[{"type":"text","text":"{\"name\":\"Ada\",\"age\":36}"}],"isError":false}`},
		{"2025-06-18", fmt.Sprintf(addInt, `"title":"Add One",`, annotations), true,
			`{"content":[{"type":"text","text":"{\"name\":\"Ada\",\"age\":36}"}],"structuredContent":{"name":"Ada","age":36},"isError":false}`},
		{"2025-11-25", fmt.Sprintf(addInt, `"title":"Add One",`, annotations), true,
			`{"content":[{"type":"text","text":"{\"name\":\"Ada\",\"age\":36}"}],"structuredContent":{"name":"Ada","age":36},"isError":false}`},
	} {
		t.Run(tt.version, func(t *testing.T) {
			s := startServer(t, prog)
			runTranscript(t, s, []step{
				{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + tt.version + `","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`,
					[]string{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + tt.version + `","capabilities":` + handshakeCapabilities(tt.version) + `,"serverInfo":{"name":"shapes","version":"` + manifestVersion(t, "shapes") + `"}}}`}},
				{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
				{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"person","arguments":{"_1":"Ada","_2":36}}}`,
					[]string{`{"jsonrpc":"2.0","id":2,"result":` + tt.person + `}`}},
			})
			list := s.request(3, "tools/list", nil)
			b, _ := json.Marshal(list["result"].(map[string]any)["tools"].([]any)[1])
			if got := mustCompact(t, b); got != mustCompact(t, []byte(tt.addInt)) {
				t.Errorf("addInt:\n got %s\nwant %s", got, tt.addInt)
			}
			listText, _ := json.Marshal(list)
			if got := strings.Contains(string(listText), `"outputSchema"`); got != tt.outputSchema {
				t.Errorf("outputSchema present %v, want %v", got, tt.outputSchema)
			}
		})
	}
}

// mustCompact normalises JSON (sorted keys) for comparison.
func mustCompact(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// The 2026-07-28 era on stdio, with no handshake, and every error it adds.
func TestStatelessEraTranscript(t *testing.T) {
	s := startServer(t, program("shapes"))
	v := manifestVersion(t, "shapes")
	serverMeta := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"shapes","version":"` + v + `"}}`
	supported := `["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`
	runTranscript(t, s, []step{
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta26("2026-07-28", "") + `}}`,
			[]string{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":` + supported + `,"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"tools":{}},"ttlMs":3600000,"cacheScope":"public","resultType":"complete",` + serverMeta + `}}`}},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"addInt","arguments":{"_1":1},` + meta26("2026-07-28", "") + `}}`,
			[]string{`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"2"}],"isError":false,"resultType":"complete",` + serverMeta + `}}`}},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta26("2026-07-28", "") + `}}`,
			[]string{`~],"ttlMs":3600000,"cacheScope":"public","resultType":"complete",` + serverMeta + `}}`}},
		// -32022: a version nexus does not serve, with what it does.
		{`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{` + meta26("2030-01-01", "") + `}}`,
			[]string{`{"jsonrpc":"2.0","id":4,"error":{"code":-32022,"message":"unsupported protocol version: 2030-01-01","data":{"supported":` + supported + `,"requested":"2030-01-01"}}}`}},
		// -32602: the required per-request fields.
		{`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{}}`,
			[]string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"invalid params: server/discover requires params._meta[\"io.modelcontextprotocol/protocolVersion\"] (protocol 2026-07-28 has no handshake)"}}`}},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			[]string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"invalid params: tools/list requires params._meta[\"io.modelcontextprotocol/clientCapabilities\"] (an object)"}}`}},
		// -32601: no ping and no logging/setLevel in this era.
		{`{"jsonrpc":"2.0","id":7,"method":"ping","params":{` + meta26("2026-07-28", "") + `}}`,
			[]string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found: ping (protocol 2026-07-28)"}}`}},
		{`{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"info",` + meta26("2026-07-28", "") + `}}`,
			[]string{`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"method not found: logging/setLevel (protocol 2026-07-28)"}}`}},
		// Without _meta a request is a handshake-era one: not initialized.
		{`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`,
			[]string{`~{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"session not initialized: send initialize before tools/list`}},
		// Progress in this era, and a log level in _meta.
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"progressSteps","arguments":{"_1":2},` + meta26("2026-07-28", `,"progressToken":"p","io.modelcontextprotocol/logLevel":"info"`) + `}}`,
			[]string{
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2,"message":"step 1 of 2"}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"progressSteps","data":{"step":1,"of":2}}}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2,"total":2,"message":"step 2 of 2"}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"progressSteps","data":{"step":2,"of":2}}}`,
				`{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"2"}],"isError":false,"resultType":"complete",` + serverMeta + `}}`,
			}},
		// No log level: no log messages.
		{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"progressSteps","arguments":{"_1":1},` + meta26("2026-07-28", "") + `}}`,
			[]string{`{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"1"}],"isError":false,"resultType":"complete",` + serverMeta + `}}`}},
	})
	// A handshake in the same process keeps the legacy rules beside it.
	s.handshake()
	runTranscript(t, s, []step{
		{`{"jsonrpc":"2.0","id":12,"method":"ping"}`, []string{`{"jsonrpc":"2.0","id":12,"result":{}}`}},
		{`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"addInt","arguments":{"_1":2}}}`,
			[]string{`{"jsonrpc":"2.0","id":13,"result":{"content":[{"type":"text","text":"3"}],"isError":false}}`}},
		{`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"addInt","arguments":{"_1":3},` + meta26("2026-07-28", "") + `}}`,
			[]string{`{"jsonrpc":"2.0","id":14,"result":{"content":[{"type":"text","text":"4"}],"isError":false,"resultType":"complete",` + serverMeta + `}}`}},
	})
}

// Every JSON-RPC and MCP error code nexus answers with on stdio.
func TestErrorCodes(t *testing.T) {
	s := startServer(t, program("shapes"), "--page-size", "3")
	runTranscript(t, s, []step{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			[]string{`~{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"session not initialized`}},
		{`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`,
			[]string{`~{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"session not initialized`}},
		{`{"jsonrpc":"2.0","id":3,"method":`, []string{`~{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON`}},
		{`[]`, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch array"}}`}},
		{`{"jsonrpc":"1.0","id":4,"method":"ping"}`, []string{`{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`}},
		{initLine, []string{`~{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"`}},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
		{`{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"x"}}`, []string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"method not found: resources/subscribe"}}`}},
		{`{"jsonrpc":"2.0","id":51,"method":"prompts/list"}`, []string{`{"jsonrpc":"2.0","id":51,"result":{"prompts":[]}}`}},
		{`{"jsonrpc":"2.0","id":52,"method":"resources/read","params":{"uri":"file:///x"}}`, []string{`{"jsonrpc":"2.0","id":52,"error":{"code":-32602,"message":"unknown resource 'file:///x': this server has no resources","data":{"uri":"file:///x"}}}`}},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":"not-a-cursor"}}`,
			[]string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"invalid params: unknown or stale cursor \"not-a-cursor\" (use the nextCursor of a previous tools/list)"}}`}},
		{`{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"chatty"}}`,
			[]string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params: unknown log level \"chatty\" (want one of [debug info notice warning error critical alert emergency])"}}`}},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fireball","arguments":{}}}`,
			[]string{`{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"unknown tool 'fireball'"}}`}},
		{`{"jsonrpc":"2.0","id":9,"method":"server/discover"}`,
			[]string{`~{"jsonrpc":"2.0","id":9,"error":{"code":-32602,`}},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{` + meta26("2024-11-05", "") + `}}`,
			[]string{`~{"jsonrpc":"2.0","id":10,"error":{"code":-32022,"message":"unsupported protocol version: 2024-11-05","data":{"supported":[`}},
	})
}

// tools/list pages: every tool once, in manifest order, across pages, in
// both eras; the same list as --mcp-tools.
func TestPaginationOverStdio(t *testing.T) {
	var all struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(mcpTools(t, program("shapes")), &all); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tl := range all.Tools {
		want = append(want, tl.Name)
	}
	s := startServer(t, program("shapes"), "--page-size", "4")
	s.handshake()
	for _, stateless := range []bool{false, true} {
		var got []string
		cursor := ""
		pages := 0
		for id := 100; ; id++ {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			if stateless {
				params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
			}
			r := s.request(id, "tools/list", params)
			res := r["result"].(map[string]any)
			tools := res["tools"].([]any)
			if len(tools) > 4 {
				t.Fatalf("page of %d tools with --page-size 4", len(tools))
			}
			for _, tl := range tools {
				got = append(got, tl.(map[string]any)["name"].(string))
			}
			pages++
			next, ok := res["nextCursor"].(string)
			if !ok {
				break
			}
			cursor = next
			if pages > 20 {
				t.Fatal("no last page")
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") || pages != (len(want)+3)/4 {
			t.Errorf("stateless %v: %d pages of %v, want %v", stateless, pages, got, want)
		}
	}
}

// A batch mixing eras, notifications, errors and calls: one array of
// replies in request order.
func TestBatchOverStdio(t *testing.T) {
	s := startServer(t, program("shapes"))
	v := manifestVersion(t, "shapes")
	runTranscript(t, s, []step{
		{`[` + initLine + `,{"jsonrpc":"2.0","method":"notifications/initialized"},` +
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleepMs","arguments":{"_1":200}}},` +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"addInt","arguments":{"_1":1}}},` +
			`{"jsonrpc":"2.0","id":3,"method":"nope"},` +
			`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{` + meta26("2026-07-28", "") + `}},` +
			`42]`,
			[]string{`[{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"shapes","version":"` + v + `"}}},` +
				`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"200"}],"isError":false}},` +
				`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"2"}],"isError":false}},` +
				`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: nope"}},` +
				`{"jsonrpc":"2.0","id":4,"result":{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"tools":{}},"ttlMs":3600000,"cacheScope":"public","resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"shapes","version":"` + v + `"}}}},` +
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: expected a JSON-RPC object, got number"}}]`}},
		// Notifications only: nothing at all comes back.
		{`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}]`, nil},
		{`{"jsonrpc":"2.0","id":5,"method":"ping"}`, []string{`{"jsonrpc":"2.0","id":5,"result":{}}`}},
	})
}

// A cancelled call gets no reply; the function stops; the pool answers the next call.
func TestCancelOverStdio(t *testing.T) {
	s := startServer(t, program("everything"))
	s.handshake()
	marker := filepath.Join(t.TempDir(), "cancelled")
	b, _ := json.Marshal(marker)
	s.send(`{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"cancel_probe","arguments":{"_1":` + string(b) + `},"_meta":{"progressToken":"p"}}}`)
	// The first progress report says the function is running.
	if line := s.recvRaw(); !strings.HasPrefix(line, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1`) {
		t.Fatalf("want the first progress report, got %s", line)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long","reason":"changed my mind"}}`)
	waitForMarker(t, marker, 30*time.Second)
	// Progress sent before the cancellation took effect may still come; no reply may.
	for {
		select {
		case line := <-s.lines:
			if !strings.HasPrefix(string(line), `{"jsonrpc":"2.0","method":"notifications/progress"`) {
				t.Fatalf("after the cancellation: %s", line)
			}
			continue
		case <-time.After(500 * time.Millisecond):
		}
		break
	}
	runTranscript(t, s, []step{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_count","arguments":{"_1":1,"_2":10}}}`,
			[]string{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"1"}],"isError":false}}`}},
	})
}

// Progress per version: "message" only from 2025-03-26; no token, none.
func TestProgressOverStdio(t *testing.T) {
	for _, tt := range []struct{ version, msg1, msg2 string }{
		{"2024-11-05", ``, ``},
		{"2025-03-26", `,"message":"step 1 of 2"`, `,"message":"step 2 of 2"`},
	} {
		s := startServer(t, program("shapes"))
		runTranscript(t, s, []step{
			{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + tt.version + `","capabilities":{}}}`, []string{`~"protocolVersion":"` + tt.version + `"`}},
			{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progressSteps","arguments":{"_1":2},"_meta":{"progressToken":7}}}`, []string{
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":2` + tt.msg1 + `}}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2,"total":2` + tt.msg2 + `}}`,
				`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"2"}],"isError":false}}`,
			}},
			{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progressSteps","arguments":{"_1":2}}}`, []string{
				`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"2"}],"isError":false}}`,
			}},
		})
	}
}

// logging/setLevel: the function's own records at or above the level, and
// nexus's warnings (a pool that died) to the session that asked.
func TestLoggingOverStdio(t *testing.T) {
	s := startServer(t, program("shapes"))
	s.handshake()
	runTranscript(t, s, []step{
		// No level chosen: no log messages.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progressSteps","arguments":{"_1":1}}}`,
			[]string{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"1"}],"isError":false}}`}},
		{`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`, []string{`{"jsonrpc":"2.0","id":2,"result":{}}`}},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progressSteps","arguments":{"_1":1}}}`, []string{
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"progressSteps","data":{"step":1,"of":1}}}`,
			`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"1"}],"isError":false}}`,
		}},
		{`{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"warning"}}`, []string{`{"jsonrpc":"2.0","id":4,"result":{}}`}},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"progressSteps","arguments":{"_1":1}}}`,
			[]string{`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"1"}],"isError":false}}`}},
	})
	// Kill the Python pool: nexus warns the session, and the next call gets a new pool.
	pools := descendants(s.cmd.Process.Pid)
	killed := 0
	for pid, cmdline := range pools {
		if strings.Contains(cmdline, "pool.py") {
			if err := syscallKill(pid); err != nil {
				t.Fatal(err)
			}
			killed++
		}
	}
	if killed == 0 {
		t.Fatalf("no Python pool among %v", pools)
	}
	line := s.recvRaw()
	if !strings.HasPrefix(line, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"nexus","data":{`) ||
		!strings.Contains(line, `"message":"pool process ended"`) || !strings.Contains(line, `"pool":"py"`) {
		t.Errorf("after killing the pool: %s, want a warning that it ended", line)
	}
	deadline := time.Now().Add(20 * time.Second)
	for id := 10; ; id++ {
		text, isErr := toolText(t, s.request(id, "tools/call", map[string]any{"name": "addInt", "arguments": map[string]any{"_1": 1}}))
		if !isErr && text == "2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool never came back: %q", text)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// handshakeCapabilities is the initialize result's capabilities for a
// version: docs/spec.md §4.2's tools alone up to 2025-06-18 (the transcript
// of morloc's manual), and from 2025-11-25 also logging, and tasks (shapes'
// sleepMs may run as one). shapes has no prompts or resources: they are not
// declared.
func handshakeCapabilities(version string) string {
	if version >= "2025-11-25" {
		return `{"logging":{},"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}},"tools":{"listChanged":false}}`
	}
	return `{"tools":{"listChanged":false}}`
}
