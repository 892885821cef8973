package httpserve

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/mcp"
)

// sseLines sends every data line of an event stream to a channel.
func sseLines(resp *http.Response) <-chan string {
	out := make(chan string, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- data
			}
		}
	}()
	return out
}

// A reload over HTTP: new requests reach the new programs at once over
// MCP and /call, requests in flight finish on the old ones, which drain
// only then, and each session hears notifications/tools/list_changed on
// exactly one stream: its GET stream, else a call's SSE stream.
func TestReload(t *testing.T) {
	old := &fakeCaller{label: "1"}
	s, err := New(Config{Logger: quietLogger()}, []Program{loadProgram(t, "shapes", old)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)

	listening := initialize(t, ts)
	get := do(t, ts, "GET", "/mcp", "", "Mcp-Session-Id", listening, "Accept", "text/event-stream")
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", get.StatusCode)
	}
	getEvents := sseLines(get)

	// A session without a GET stream, with a call in flight whose client takes SSE.
	calling := initialize(t, ts)
	callEvents := make(chan []string, 1)
	go func() {
		resp := post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sleepMs","arguments":{"_1":1000}}}`,
			"Mcp-Session-Id", calling, "Accept", mcpAccept)
		var got []string
		for e := range sseLines(resp) {
			got = append(got, e)
		}
		callEvents <- got
	}()
	apiResult := make(chan string, 1)
	go func() { apiResult <- readBody(t, post(t, ts, "/call/shapes/sleepMs", `[1000]`)) }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		old.mu.Lock()
		n := old.calls
		old.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the calls did not start")
		}
	}

	if _, err := s.Reload(mcp.Implementation{}, []Program{loadProgram(t, "shapes", &fakeCaller{}), loadProgram(t, "shapes", &fakeCaller{})}); err == nil {
		t.Fatal("a reload to two programs named alike was accepted")
	}
	drained, err := s.Reload(mcp.Implementation{}, []Program{loadProgram(t, "shapes", &fakeCaller{label: "2"})})
	if err != nil {
		t.Fatal(err)
	}

	const changed = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	select {
	case e := <-getEvents:
		if e != changed {
			t.Errorf("GET stream: %s, want %s", e, changed)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no list_changed on the GET stream")
	}
	tests := []struct {
		name, path, body string
		headers          []string
		want             string
	}{
		{"tools/call in a session", "/mcp", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"shout","arguments":{"_1":"hi"}}}`, []string{"Mcp-Session-Id", listening}, `"text":"\"HI!2\""`},
		{"stateless tools/call", "/mcp", statelessBody(9, "tools/call", `"name":"shout","arguments":{"_1":"hi"}`), []string{"Mcp-Method", "tools/call", "Mcp-Name", "shout", "MCP-Protocol-Version", "2026-07-28"}, `"text":"\"HI!2\""`},
		{"/call", "/call/shapes/shout", `["hi"]`, nil, `"result":"HI!2"`},
	}
	for _, tt := range tests {
		if got := readBody(t, post(t, ts, tt.path, tt.body, tt.headers...)); !strings.Contains(got, tt.want) {
			t.Errorf("%s after the reload: %s lacks %s", tt.name, got, tt.want)
		}
	}
	select {
	case <-drained:
		t.Fatal("the old programs drained while calls still ran on them")
	default:
	}

	got := <-callEvents
	if len(got) != 2 || got[0] != changed || !strings.Contains(got[1], `"text":"1000"`) {
		t.Errorf("the call's stream: %q, want list_changed then its result", got)
	}
	if body := <-apiResult; !strings.Contains(body, `"result":1000`) {
		t.Errorf("/call in flight: %s", body)
	}
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("the old programs did not drain once their calls ended")
	}
	select {
	case e := <-getEvents:
		t.Errorf("a second message on the GET stream: %s", e)
	case <-time.After(100 * time.Millisecond):
	}
}
