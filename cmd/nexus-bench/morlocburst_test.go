package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nexus-mcp/nexus/internal/morlocload"
)

// A tools/call reply is wrong unless it is a success whose text is the
// call's value.
func TestMCPWrong(t *testing.T) {
	c := morlocload.Sleep(0.3)
	reply := func(result string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":4,"result":` + result + `}`)
	}
	tests := []struct {
		name string
		line []byte
		want string // in the reason; "" for a right answer
	}{
		{"right", reply(`{"content":[{"type":"text","text":"0.3"}],"isError":false}`), ""},
		{"another value", reply(`{"content":[{"type":"text","text":"0.4"}],"isError":false}`), "0.4, want 0.3"},
		{"the right text as an error", reply(`{"content":[{"type":"text","text":"0.3"}],"isError":true}`), "isError"},
		{"no content", reply(`{"content":[],"isError":false}`), "no content"},
		{"a JSON-RPC error", []byte(`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"pool died"}}`), "error: pool died"},
		{"not JSON", []byte(`{"jsonrpc":`), "not JSON"},
	}
	for _, tt := range tests {
		got := mcpWrong(c, tt.line)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Every call of a burst to morloc's daemon is posted at once, and each
// answer that is not {"status":"ok","result":<its value>} is counted wrong.
func TestDaemonBurst(t *testing.T) {
	calls := morlocload.Mixed(8, "py")
	for i := range calls {
		if calls[i].Tool != "echoPy" {
			calls[i] = morlocload.Sleep(float64(i) / 10)
		}
	}
	var posted atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posted.Add(1)
		body, _ := io.ReadAll(r.Body)
		var args []json.RawMessage
		json.Unmarshal(body, &args)
		tool := strings.TrimPrefix(r.URL.Path, "/call/")
		switch {
		case tool == "sleepPy" && string(args[0]) == "0.1":
			http.Error(w, "busy", http.StatusServiceUnavailable) // wrong: not ok
		case tool == "sleepPy" && string(args[0]) == "0.3":
			io.WriteString(w, `{"status":"error","error":"Failed to allocate"}`) // wrong
		case tool == "echoPy" && strings.HasPrefix(string(args[0]), "[400000.5,"):
			io.WriteString(w, `{"status":"ok","result":[]}`) // wrong: silently empty
		default:
			io.WriteString(w, `{"status":"ok","result":`+string(args[0])+`}`)
		}
	}))
	defer srv.Close()
	b := daemonBurst(srv.Client(), srv.URL, calls)
	if int(posted.Load()) != len(calls) {
		t.Errorf("%d requests for %d calls", posted.Load(), len(calls))
	}
	if len(b.wrong) != 3 || b.wall <= 0 {
		t.Fatalf("%d wrong, want 3 (wall %v): %q", len(b.wrong), b.wall, b.wrong)
	}
	for _, want := range []string{"call 1 (sleepPy)", "call 3 (sleepPy)", "call 4 (echoPy): echoPy: 0 elements"} {
		if !strings.Contains(strings.Join(b.wrong, "\n"), want) {
			t.Errorf("no %q among %q", want, b.wrong)
		}
	}
}
