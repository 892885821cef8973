package httpserve

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/mcp"
)

// Every status code of the Streamable HTTP endpoint, one request each.
func TestMCPStatusCodes(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{MaxBody: 4096})
	sid := initialize(t, ts)
	ended := initialize(t, ts)
	if resp := do(t, ts, http.MethodDelete, "/mcp", "", "Mcp-Session-Id", ended); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE a live session: %d, want 204", resp.StatusCode)
	}
	toolsList := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	stateless := func(method, params string) string { return statelessBody(9, method, params) }
	hdr2026 := []string{"MCP-Protocol-Version", "2026-07-28"}
	with := func(extra ...string) []string { return plus(hdr2026, extra...) }
	tests := []struct {
		name    string
		method  string
		body    string
		headers []string
		status  int
		code    int    // JSON-RPC error code expected in the body, 0 for none
		want    string // a substring of the body
	}{
		{"initialize", "POST", initBody, nil, 200, 0, `"protocolVersion":"2025-06-18"`},
		{"request in a session", "POST", toolsList, []string{"Mcp-Session-Id", sid}, 200, 0, `"tools":[`},
		{"version header of the session", "POST", toolsList, []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18"}, 200, 0, `"tools":[`},
		{"notification", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, []string{"Mcp-Session-Id", sid}, 202, 0, ""},
		{"response from the client", "POST", `{"jsonrpc":"2.0","id":5,"result":{}}`, []string{"Mcp-Session-Id", sid}, 202, 0, ""},
		{"missing session id", "POST", toolsList, nil, 400, -32600, "Mcp-Session-Id"},
		{"unknown session id", "POST", toolsList, []string{"Mcp-Session-Id", "no-such-session"}, 404, -32600, "session not found"},
		{"ended session id", "POST", toolsList, []string{"Mcp-Session-Id", ended}, 404, -32600, "session not found"},
		{"unsupported version header", "POST", toolsList, []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "1999-01-01"}, 400, -32600, "MCP-Protocol-Version"},
		{"version header of another version", "POST", toolsList, []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"}, 400, -32600, "negotiated (2025-06-18)"},
		{"GET without a session", "GET", "", []string{"Accept", "text/event-stream"}, 405, -32600, "method not allowed"},
		{"GET, unknown session", "GET", "", []string{"Mcp-Session-Id", "nope", "Accept", "text/event-stream"}, 404, -32600, "session not found"},
		{"GET, JSON only", "GET", "", []string{"Mcp-Session-Id", sid, "Accept", "application/json"}, 406, -32600, "text/event-stream"},
		{"PUT", "PUT", toolsList, nil, 405, -32600, "method not allowed"},
		{"DELETE without id", "DELETE", "", nil, 400, -32600, "Mcp-Session-Id"},
		{"DELETE unknown id", "DELETE", "", []string{"Mcp-Session-Id", "nope"}, 404, -32600, "session not found"},
		{"parse error", "POST", `{"jsonrpc":`, []string{"Mcp-Session-Id", sid}, 400, -32700, "parse error"},
		{"not JSON-RPC", "POST", `{"hello":1}`, []string{"Mcp-Session-Id", sid}, 400, -32600, "invalid request"},
		{"body over the cap", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`, nil, 413, -32600, "too large"},
		{"wrong content type", "POST", toolsList, []string{"Content-Type", "text/plain", "Mcp-Session-Id", sid}, 415, -32600, "application/json"},
		{"unacceptable Accept", "POST", toolsList, []string{"Accept", "image/png", "Mcp-Session-Id", sid}, 406, -32600, "not acceptable"},
		{"JSON-only Accept", "POST", toolsList, []string{"Accept", "application/json", "Mcp-Session-Id", sid}, 200, 0, `"tools":[`},

		// 2026-07-28: stateless, headers checked against the body.
		{"stateless discover", "POST", stateless("server/discover", ""), with("Mcp-Method", "server/discover"), 200, 0, `"supportedVersions"`},
		{"stateless call", "POST", stateless("tools/call", `"name":"addInt","arguments":{"_1":41}`), with("Mcp-Method", "tools/call", "Mcp-Name", "addInt"), 200, 0, `"text":"42"`},
		{"stateless call, base64 name", "POST", stateless("tools/call", `"name":"addInt","arguments":{"_1":1}`), with("Mcp-Method", "tools/call", "Mcp-Name", "=?base64?YWRkSW50?="), 200, 0, `"text":"2"`},
		{"stateless ignores a session id", "POST", stateless("tools/list", ""), with("Mcp-Method", "tools/list", "Mcp-Session-Id", "whatever"), 200, 0, `"tools":[`},
		{"Mcp-Method mismatch", "POST", stateless("tools/list", ""), with("Mcp-Method", "tools/call"), 400, -32020, "Mcp-Method"},
		{"Mcp-Method missing", "POST", stateless("tools/list", ""), hdr2026, 400, -32020, "Mcp-Method"},
		{"Mcp-Name mismatch", "POST", stateless("tools/call", `"name":"addInt","arguments":{"_1":1}`), with("Mcp-Method", "tools/call", "Mcp-Name", "shout"), 400, -32020, "Mcp-Name"},
		{"Mcp-Name missing", "POST", stateless("tools/call", `"name":"addInt","arguments":{"_1":1}`), with("Mcp-Method", "tools/call"), 400, -32020, "Mcp-Name"},
		{"version header mismatch", "POST", stateless("tools/list", ""), []string{"MCP-Protocol-Version", "2025-11-25", "Mcp-Method", "tools/list"}, 400, -32020, "MCP-Protocol-Version"},
		{"version header missing", "POST", stateless("tools/list", ""), []string{"Mcp-Method", "tools/list"}, 400, -32020, "MCP-Protocol-Version"},
		{"unsupported version", "POST", strings.ReplaceAll(stateless("server/discover", ""), "2026-07-28", "v999"), []string{"MCP-Protocol-Version", "v999", "Mcp-Method", "server/discover"}, 400, -32022, "v999"},
		{"missing _meta", "POST", `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{}}`, with("Mcp-Method", "server/discover"), 400, -32602, "_meta"},
		{"unknown method", "POST", stateless("no/such", ""), with("Mcp-Method", "no/such"), 404, -32601, "no/such"},
		{"initialize is not in 2026-07-28", "POST", stateless("initialize", ""), with("Mcp-Method", "initialize"), 404, -32601, "initialize"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(t, ts, tc.method, "/mcp", tc.body, tc.headers...)
			body := readBody(t, resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == 202 {
				if body != "" {
					t.Errorf("202 with a body: %q", body)
				}
				return
			}
			if tc.status == 405 && resp.Header.Get("Allow") == "" {
				t.Error("405 without an Allow header")
			}
			if !strings.Contains(body, tc.want) {
				t.Errorf("body %s lacks %q", body, tc.want)
			}
			r := decodeReply(t, body)
			switch {
			case tc.code == 0 && r.Error != nil:
				t.Errorf("unexpected error %d %s", r.Error.Code, r.Error.Message)
			case tc.code != 0 && (r.Error == nil || r.Error.Code != tc.code):
				t.Errorf("want error %d, got %s", tc.code, body)
			}
			if tc.code != 0 && strings.Contains(tc.body, `"id":9`) && string(r.ID) != "9" {
				t.Errorf("error reply id %s, want the request's 9", r.ID)
			}
		})
	}
}

// initialize mints a fresh, unguessable, visible-ASCII id each time, and
// only when initialize succeeds.
func TestSessionIDs(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{})
	seen := map[string]bool{}
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for range 20 {
		id := initialize(t, ts)
		if !hex64.MatchString(id) {
			t.Fatalf("session id %q is not 256 bits of hex", id)
		}
		if seen[id] {
			t.Fatalf("session id %s minted twice", id)
		}
		seen[id] = true
	}
	resp := post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":[1]}`)
	readBody(t, resp)
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("a failed initialize minted session %s", id)
	}
}

// The session cap refuses a new session; an idle session expires.
func TestSessionCapAndExpiry(t *testing.T) {
	s, ts, _ := newTestServer(t, Config{MaxSessions: 2, SessionIdle: time.Minute})
	clock := time.Now()
	s.sessions.now = func() time.Time { return clock }
	a := initialize(t, ts)
	initialize(t, ts)
	resp := post(t, ts, "/mcp", initBody)
	if body := readBody(t, resp); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third session: %d %s, want 503 with Retry-After", resp.StatusCode, body)
	}
	clock = clock.Add(2 * time.Minute)
	// Both sessions have expired: they make room for two new ones.
	initialize(t, ts)
	initialize(t, ts)
	if n := s.sessions.count(); n != 2 {
		t.Errorf("%d live sessions, want 2", n)
	}
	resp = post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", a)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("expired session: %d, want 404", resp.StatusCode)
	}
}

// A call that reports progress is answered as an event stream: the
// notifications, then the result; one that does not, as JSON.
func TestProgressStreamsAsSSE(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{})
	sid := initialize(t, ts)
	call := `{"jsonrpc":"2.0","id":"p1","method":"tools/call","params":{"name":"sleepMs","arguments":{"_1":50},"_meta":{"progressToken":"tok"}}}`
	resp := post(t, ts, "/mcp", call, "Mcp-Session-Id", sid, "Accept", mcpAccept)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	if resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Error("SSE response without X-Accel-Buffering: no")
	}
	events := sseEvents(t, resp.Body)
	if len(events) != 11 {
		t.Fatalf("%d events, want 10 progress notifications and the result: %v", len(events), events)
	}
	for i, e := range events[:10] {
		p, _ := e["params"].(map[string]any)
		if e["method"] != "notifications/progress" || p["progressToken"] != "tok" || p["progress"] != float64(i+1) {
			t.Errorf("event %d = %v, want progress %d for tok", i, e, i+1)
		}
	}
	if last := events[10]; last["id"] != "p1" || last["result"] == nil {
		t.Errorf("last event %v, want the result of p1", last)
	}

	// Without a progress token nothing streams: plain JSON.
	resp = post(t, ts, "/mcp", strings.Replace(call, `,"_meta":{"progressToken":"tok"}`, "", 1), "Mcp-Session-Id", sid)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("no progress: Content-Type %q, want application/json", ct)
	}
	// A JSON-only client gets JSON even when the call reports progress.
	resp = post(t, ts, "/mcp", call, "Mcp-Session-Id", sid, "Accept", "application/json")
	if body := readBody(t, resp); resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"text":"50"`) {
		t.Errorf("JSON-only client: %s %s", resp.Header.Get("Content-Type"), body)
	}
	// An SSE-only client gets a stream even when nothing streams.
	resp = post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "Mcp-Session-Id", sid, "Accept", "text/event-stream")
	if events := sseEvents(t, resp.Body); resp.Header.Get("Content-Type") != "text/event-stream" || len(events) != 1 || events[0]["result"] == nil {
		t.Errorf("SSE-only client: %s %v", resp.Header.Get("Content-Type"), events)
	}
}

// Closing the response stream cancels the call.
func TestClosingTheStreamCancels(t *testing.T) {
	_, ts, fc := newTestServer(t, Config{})
	sid := initialize(t, ts)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleepMs","arguments":{"_1":3000},"_meta":{"progressToken":1}}}`
	resp := post(t, ts, "/mcp", call, "Mcp-Session-Id", sid)
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil { // the first progress event has come
		t.Fatal(err)
	}
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for len(fc.cancelledCalls()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call was not cancelled after the client closed its stream")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A batch in a session gets one array of replies.
func TestBatch(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{})
	sid := initialize(t, ts)
	resp := post(t, ts, "/mcp", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"addInt","arguments":{"_1":1}}}]`, "Mcp-Session-Id", sid)
	var replies []rpcReply
	if err := json.Unmarshal([]byte(readBody(t, resp)), &replies); err != nil || len(replies) != 2 {
		t.Fatalf("batch: %v %+v, want two replies", err, replies)
	}
	if string(replies[0].ID) != "1" || string(replies[1].ID) != "2" || !strings.Contains(string(replies[1].Result), `"text":"2"`) {
		t.Errorf("batch replies %+v", replies)
	}
	resp = post(t, ts, "/mcp", `[{"jsonrpc":"2.0","method":"notifications/x"}]`, "Mcp-Session-Id", sid)
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("batch of notifications: %d, want 202", resp.StatusCode)
	}
}

// GET opens the session's own stream: nexus's log records reach a client
// that chose a level, one stream per session, ended by DELETE.
func TestSessionStream(t *testing.T) {
	hub := mcp.NewLogHub(slog.NewTextHandler(io.Discard, nil))
	_, ts, _ := newTestServer(t, Config{MCP: mcp.Options{Logs: hub}})
	sid := initialize(t, ts)
	if body := readBody(t, post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`, "Mcp-Session-Id", sid)); !strings.Contains(body, `"result":{}`) {
		t.Fatalf("logging/setLevel: %s", body)
	}
	resp := do(t, ts, "GET", "/mcp", "", "Mcp-Session-Id", sid, "Accept", "text/event-stream")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if again := do(t, ts, "GET", "/mcp", "", "Mcp-Session-Id", sid, "Accept", "text/event-stream"); again.StatusCode != http.StatusConflict {
		t.Errorf("second GET stream: %d, want 409", again.StatusCode)
	}
	logger := slog.New(hub)
	logger.Info("below the level") // not sent: the client asked for warning
	logger.Warn("pool restarted", "pool", "py")
	events := make(chan map[string]any, 4)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e map[string]any
				json.Unmarshal([]byte(data), &e)
				events <- e
			}
		}
	}()
	select {
	case e := <-events:
		p, _ := e["params"].(map[string]any)
		data, _ := p["data"].(map[string]any)
		if e["method"] != "notifications/message" || p["level"] != "warning" || data["message"] != "pool restarted" {
			t.Errorf("event %v, want the warning", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no log message on the GET stream")
	}
	if resp := do(t, ts, "DELETE", "/mcp", "", "Mcp-Session-Id", sid); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	select {
	case e, open := <-events:
		if open {
			t.Errorf("unexpected event %v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the GET stream outlived its session")
	}
}
