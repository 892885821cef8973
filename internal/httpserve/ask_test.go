package httpserve

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A function's question in a handshake-era session goes to the client on
// the calling POST's SSE stream; the client POSTs its response, answered
// 202, and the call's result follows on the same stream (MCP Streamable
// HTTP; docs/spec.md §6.3).
func TestServerRequestOnCallStream(t *testing.T) {
	fc := &fakeCaller{label: "ask"}
	s, err := New(Config{Logger: quietLogger(), AllowNoAuth: true}, []Program{loadProgram(t, "shapes", fc)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	resp := post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"test","version":"0"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	readBody(t, resp)
	post(t, ts, "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid)

	call := post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shout","arguments":{"_1":"which word?"}}}`,
		"Mcp-Session-Id", sid, "Accept", mcpAccept)
	if ct := call.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the call answered %s, not an event stream", ct)
	}
	events := bufio.NewScanner(call.Body)
	next := func() map[string]any {
		t.Helper()
		for events.Scan() {
			if data, ok := strings.CutPrefix(events.Text(), "data: "); ok {
				var m map[string]any
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					t.Fatalf("event %q: %v", data, err)
				}
				return m
			}
		}
		t.Fatalf("stream ended: %v", events.Err())
		return nil
	}
	ask := next()
	if ask["method"] != "elicitation/create" || ask["id"] == nil || ask["params"].(map[string]any)["message"] != "which word?" {
		t.Fatalf("first event: %v", ask)
	}
	id, _ := json.Marshal(ask["id"])
	answer := post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"action":"accept","content":{"word":"hey"}}}`, "Mcp-Session-Id", sid)
	if answer.StatusCode != http.StatusAccepted {
		t.Fatalf("the client's response got %d, want 202", answer.StatusCode)
	}
	final := next()
	text, _ := json.Marshal(final["result"])
	if final["id"].(float64) != 2 || !strings.Contains(string(text), `HEY!ask`) {
		t.Errorf("final event: %v", final)
	}
	// A response without a session has nowhere to go.
	if r := post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":"nexus-9","result":{}}`); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a response without Mcp-Session-Id got %d, want 400", r.StatusCode)
	}
}
