package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// recorder collects notifications.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) notify(n *Notification) {
	b, err := json.Marshal(n)
	if err != nil {
		panic(err)
	}
	r.mu.Lock()
	r.msgs = append(r.msgs, string(b))
	r.mu.Unlock()
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// req builds a request from its JSON text.
func req(t testing.TB, line string) *Request {
	t.Helper()
	items, batch := ParseMessages([]byte(line))
	if batch || len(items) != 1 || items[0].Request == nil {
		t.Fatalf("not one request: %s", line)
	}
	return items[0].Request
}

// reply handles one request line and returns the reply as JSON ("" for none).
func reply(t testing.TB, ss *Session, line string) string {
	t.Helper()
	return marshal(t, ss.Handle(context.Background(), req(t, line), nil))
}

func marshal(t testing.TB, v any) string {
	t.Helper()
	if r, ok := v.(*Response); ok && r == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// meta is a params._meta member for a 2026-07-28 request; extra members
// start with a comma.
func meta(version, extra string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}` + extra + `}`
}

func initialized(t testing.TB, srv *Server, version string, notify func(*Notification)) *Session {
	t.Helper()
	ss := srv.NewSession(notify)
	t.Cleanup(ss.Close)
	got := reply(t, ss, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`)
	if !strings.Contains(got, `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize %s: %s", version, got)
	}
	return ss
}
