package mcp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// labelCaller answers every call with its label, a number; when gate is set, a call
// first says it started and waits for gate to close.
type labelCaller struct {
	label   int
	started chan struct{}
	gate    chan struct{}
}

func (c *labelCaller) Call(ctx context.Context, call argmap.Call, h CallHooks) (ndarray.Value, error) {
	if c.gate != nil {
		c.started <- struct{}{}
		<-c.gate
	}
	return ndarray.Value{JSON: json.RawMessage(strconv.Itoa(c.label))}, nil
}

// newManifest is testManifest with one more tool, as a rebuild would add.
var newManifest = strings.Replace(testManifest, `"commands":[`, `"commands":[
  {"name":"added","type":"remote","mid":9,"pool":0,"needed_pools":[0],"desc":["New"],
   "args":[],"return":{"schema":"j","type":"Int","desc":[]}},`, 1)

// A reload: new calls and tools/list see the new surface at once, a call
// in flight finishes on the old caller, and the old surface drains only
// when it has.
func TestSetToolsLetsCallsInFlightFinish(t *testing.T) {
	old := &labelCaller{label: 1, started: make(chan struct{}), gate: make(chan struct{})}
	srv := NewServer(Implementation{Name: "t", Version: "1"}, testTools(t), old, Options{Logger: quietLogger()})
	ss := initialized(t, srv, "2025-11-25", nil)

	inFlight := make(chan string, 1)
	go func() {
		inFlight <- reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"boom","arguments":{}}}`)
	}()
	<-old.started

	drained := srv.SetTools(Implementation{Name: "t", Version: "2"}, toolsOf(t, newManifest), &labelCaller{label: 2})
	tests := []struct {
		name, line, want string
	}{
		{"a new tool is called on the new caller", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"added","arguments":{}}}`, `"text":"2"`},
		{"an old tool too", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"boom","arguments":{}}}`, `"text":"2"`},
		{"tools/list shows the new tool", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, `"name":"added"`},
		{"initialize names the new version", `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`, `"serverInfo":{"name":"t","version":"2"}`},
	}
	for _, tt := range tests {
		if got := reply(t, ss, tt.line); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %s lacks %s", tt.name, got, tt.want)
		}
	}
	select {
	case <-drained:
		t.Fatal("the old surface drained while a call still ran on it")
	case <-time.After(50 * time.Millisecond):
	}
	close(old.gate)
	if got := <-inFlight; !strings.Contains(got, `"text":"1"`) {
		t.Errorf("the call in flight: %s, want the old caller's answer", got)
	}
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("the old surface did not drain once its call ended")
	}
}

// A cursor of the old surface is stale after a reload, not misread.
func TestCursorStaleAfterSetTools(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{PageSize: 2})
	ss := initialized(t, srv, "2025-11-25", nil)
	cursor := srv.current().encodeListCursor("tools/list", 2)
	srv.SetTools(Implementation{Name: "t", Version: "1.2.3"}, toolsOf(t, newManifest), &fakePool{})
	got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"`+cursor+`"}}`)
	if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "stale cursor") {
		t.Errorf("old cursor after reload: %s", got)
	}
}

// notifications/tools/list_changed goes to initialized sessions only, and
// not to a closed one.
func TestNotifyToolsChanged(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	var ready, fresh, closed recorder
	initialized(t, srv, "2025-06-18", ready.notify)
	srv.NewSession(fresh.notify)
	initialized(t, srv, "2024-11-05", closed.notify).Close()
	srv.NotifyToolsChanged()
	tests := []struct {
		name string
		rec  *recorder
		want []string
	}{
		{"initialized", &ready, []string{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`}},
		{"not initialized", &fresh, nil},
		{"closed", &closed, nil},
	}
	for _, tt := range tests {
		if got := tt.rec.all(); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s session got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// With ListChanged (nexus --watch) initialize declares tools.listChanged
// and 2026-07-28 results do not let clients cache the surface; without it
// both are as docs/spec.md §4.2 and §4.3 fix them.
func TestListChangedOption(t *testing.T) {
	tests := []struct {
		name       string
		opts       Options
		caps, ttl  string
		statelessC string
	}{
		{"fixed surface", Options{}, `"tools":{"listChanged":false}`, `"ttlMs":3600000`, `"tools":{}`},
		{"watched", Options{ListChanged: true}, `"tools":{"listChanged":true}`, `"ttlMs":0`, `"tools":{}`},
		{"watched, ttl given", Options{ListChanged: true, CacheTTL: 2 * time.Second}, `"tools":{"listChanged":true}`, `"ttlMs":2000`, `"tools":{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, &fakePool{}, tt.opts)
			ss := srv.NewSession(nil)
			defer ss.Close()
			got := reply(t, ss, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`)
			if !strings.Contains(got, tt.caps) {
				t.Errorf("initialize: %s lacks %s", got, tt.caps)
			}
			for _, method := range []string{"server/discover", "tools/list"} {
				got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+meta(StatelessVersion, "")+`}}`)
				if !strings.Contains(got, tt.ttl) {
					t.Errorf("%s: %s lacks %s", method, got, tt.ttl)
				}
				if method == "server/discover" && !strings.Contains(got, tt.statelessC) {
					t.Errorf("%s: %s lacks %s", method, got, tt.statelessC)
				}
			}
		})
	}
}
