package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// Walking tools/list page by page gives every tool once, in order, in
// both eras.
func TestPagination(t *testing.T) {
	for _, size := range []int{1, 2, 6, 7, 100} {
		for _, stateless := range []bool{false, true} {
			srv := newTestServer(t, &fakePool{}, Options{PageSize: size})
			ss := initialized(t, srv, "2025-06-18", nil)
			var names []string
			cursor := ""
			for page := 0; ; page++ {
				if page > 10 {
					t.Fatalf("page size %d: no end", size)
				}
				params := `{}`
				if cursor != "" {
					params = `{"cursor":"` + cursor + `"}`
				}
				if stateless {
					params = strings.TrimSuffix(params, "}")
					if params != "{" {
						params += ","
					}
					params += meta("2026-07-28", "") + "}"
				}
				got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+params+`}`)
				var res struct {
					Result struct {
						Tools      []struct{ Name string } `json:"tools"`
						NextCursor *string                 `json:"nextCursor"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(got), &res); err != nil {
					t.Fatal(err)
				}
				if len(res.Result.Tools) > size {
					t.Errorf("page of %d tools, size %d", len(res.Result.Tools), size)
				}
				for _, tl := range res.Result.Tools {
					names = append(names, tl.Name)
				}
				if res.Result.NextCursor == nil {
					break
				}
				cursor = *res.Result.NextCursor
			}
			if got := strings.Join(names, ","); got != "add,rec,slow,steps,boom,pic,late" {
				t.Errorf("size %d stateless %v: tools %s", size, stateless, got)
			}
		}
	}
}

func TestBadCursor(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{PageSize: 2})
	other := NewServer(Implementation{Name: "other", Version: "1"}, testTools(t), &fakePool{}, Options{PageSize: 2, Logger: quietLogger()})
	otherCursor := other.current().encodeListCursor("tools/list", 2)
	if _, ok := srv.current().decodeListCursor("tools/list", srv.current().encodeListCursor("tools/list", 2), 7); !ok {
		t.Fatal("own cursor refused")
	}
	ss := initialized(t, srv, "2025-11-25", nil)
	for _, c := range []string{"", "zz", "nx1.", "nx1.!!", srv.current().encodeListCursor("tools/list", 0), srv.current().encodeListCursor("tools/list", 7), srv.current().encodeListCursor("tools/list", -1), otherCursor} {
		got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"`+c+`"}}`)
		if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: unknown or stale cursor`) {
			t.Errorf("cursor %q: %s", c, got)
		}
	}
	got := reply(t, ss, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":7}}`)
	if !strings.Contains(got, `"code":-32602`) {
		t.Errorf("numeric cursor: %s", got)
	}
}

// A request cancelled by notifications/cancelled gets no reply; the pool's
// context ends; the session goes on serving.
func TestCancellation(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		pool := &fakePool{started: make(chan string, 1)}
		srv := newTestServer(t, pool, Options{})
		ss := initialized(t, srv, "2025-06-18", nil)
		params := `{"name":"slow"}`
		if stateless {
			params = `{"name":"slow",` + meta("2026-07-28", "") + `}`
		}
		done := make(chan *Response, 1)
		go func() {
			done <- ss.Handle(context.Background(), req(t, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":`+params+`}`), nil)
		}()
		<-pool.started
		// Another id does not cancel it.
		ss.Handle(context.Background(), req(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c2"}}`), nil)
		select {
		case r := <-done:
			t.Fatalf("call ended by a cancel for another id: %s", marshal(t, r))
		case <-time.After(50 * time.Millisecond):
		}
		ss.Handle(context.Background(), req(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId": "c1","reason":"user"}}`), nil)
		select {
		case r := <-done:
			if r != nil {
				t.Errorf("cancelled request answered: %s", marshal(t, r))
			}
		case <-time.After(5 * time.Second):
			t.Fatal("cancelled call still running")
		}
		if n := pool.cancels(); n != 1 {
			t.Errorf("pool saw %d cancellations", n)
		}
		pool.started = nil
		if got := reply(t, ss, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"_1":1}}}`); !strings.Contains(got, `"text":"2"`) {
			t.Errorf("after cancel: %s", got)
		}
	}
}

// Closing a session cancels what it still runs.
func TestSessionClose(t *testing.T) {
	pool := &fakePool{started: make(chan string, 1)}
	srv := newTestServer(t, pool, Options{})
	ss := initialized(t, srv, "2025-06-18", nil)
	done := make(chan *Response, 1)
	go func() {
		done <- ss.Handle(context.Background(), req(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`), nil)
	}()
	<-pool.started
	ss.Close()
	select {
	case r := <-done:
		if !strings.Contains(marshal(t, r), "was cancelled") {
			t.Errorf("reply %s", marshal(t, r))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not cancel the call")
	}
}

// Progress goes to the notify of the request that carried the token,
// only increasing values; no token, no progress.
func TestProgress(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	session := &recorder{}
	ss := initialized(t, srv, "2025-06-18", session.notify)

	perRequest := &recorder{}
	ss.Handle(context.Background(), req(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","arguments":{"_1":[1,2,2,1,7]},"_meta":{"progressToken":"tok"}}}`), perRequest.notify)
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":10,"message":"at 1"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2,"total":10,"message":"at 2"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":7,"total":10,"message":"at 7"}}`,
	}
	if got := perRequest.all(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("progress:\n got %v\nwant %v", got, want)
	}
	if got := session.all(); len(got) != 0 {
		t.Errorf("session notify got %v", got)
	}
	// Integer token, session notify.
	reply(t, ss, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{"_1":[3]},"_meta":{"progressToken":42}}}`)
	if got := session.all(); len(got) != 1 || !strings.Contains(got[0], `"progressToken":42,"progress":3`) {
		t.Errorf("int token: %v", got)
	}
	// No token: nothing.
	reply(t, ss, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps","arguments":{"_1":[3]}}}`)
	reply(t, ss, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"steps","arguments":{"_1":[3]},"_meta":{"progressToken":null}}}`)
	if got := session.all(); len(got) != 1 {
		t.Errorf("progress without a token: %v", got)
	}
}

func TestSetLevel(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	fresh := srv.NewSession(nil)
	defer fresh.Close()
	if got := reply(t, fresh, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`); !strings.Contains(got, `"code":-32600`) {
		t.Errorf("setLevel before initialize: %s", got)
	}
	ss := initialized(t, srv, "2025-03-26", nil)
	for _, tt := range []struct{ params, want string }{
		{`{"level":"warning"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{`{"level":"loud"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: unknown log level \"loud\" (want one of [debug info notice warning error critical alert emergency])"}}`},
		{`{}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: logging/setLevel needs params.level, one of [debug info notice warning error critical alert emergency]"}}`},
	} {
		if got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":`+tt.params+`}`); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.params, got, tt.want)
		}
	}
	if ss.LogLevel() != "warning" {
		t.Errorf("level %q", ss.LogLevel())
	}
}

// A function's log records reach the client only at or above the chosen
// level: logging/setLevel in the handshake era, _meta's logLevel in 2026-07-28.
func TestFunctionLogs(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	const info = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"steps","data":{"note":"quiet"}}}`
	const errMsg = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"steps","data":"loud"}}`
	tests := []struct {
		name, setLevel, params string
		want                   []string
	}{
		{"no level chosen", "", `{"name":"steps","arguments":{"_1":[]}}`, nil},
		{"debug", "debug", `{"name":"steps","arguments":{"_1":[]}}`, []string{info, errMsg}},
		{"warning", "warning", `{"name":"steps","arguments":{"_1":[]}}`, []string{errMsg}},
		{"stateless without logLevel", "debug", `{"name":"steps","arguments":{"_1":[]},` + meta("2026-07-28", "") + `}`, nil},
		{"stateless at notice", "", `{"name":"steps","arguments":{"_1":[]},` + meta("2026-07-28", `,"io.modelcontextprotocol/logLevel":"notice"`) + `}`, []string{errMsg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			ss := initialized(t, srv, "2025-06-18", rec.notify)
			if tt.setLevel != "" {
				reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"`+tt.setLevel+`"}}`)
			}
			reply(t, ss, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+tt.params+`}`)
			if got := rec.all(); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

// nexus's own records reach the sessions whose level admits them, and
// still reach the next handler.
func TestLogHub(t *testing.T) {
	next := &recordingHandler{}
	hub := NewLogHub(next)
	srv := newTestServer(t, &fakePool{}, Options{Logs: hub})
	warnings, errorsOnly, silent := &recorder{}, &recorder{}, &recorder{}
	for _, s := range []struct {
		rec   *recorder
		level string
	}{{warnings, "warning"}, {errorsOnly, "error"}, {silent, ""}} {
		ss := initialized(t, srv, "2025-06-18", s.rec.notify)
		if s.level != "" {
			reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"`+s.level+`"}}`)
		}
	}
	closed := &recorder{}
	gone := initialized(t, srv, "2025-06-18", closed.notify)
	reply(t, gone, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`)
	gone.Close()

	log := slog.New(hub).With("pool", "py").WithGroup("g")
	log.Warn("pool process ended", "pid", 42, "err", context.Canceled)
	log.Info("chatter")

	const want = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"nexus","data":{"g.err":"context canceled","g.pid":42,"message":"pool process ended","pool":"py"}}}`
	if got := warnings.all(); len(got) != 1 || got[0] != want {
		t.Errorf("warning session:\n got %v\nwant %s", got, want)
	}
	for name, r := range map[string]*recorder{"error": errorsOnly, "no level": silent, "closed": closed} {
		if got := r.all(); len(got) != 0 {
			t.Errorf("%s session got %v", name, got)
		}
	}
	if next.n != 2 {
		t.Errorf("next handler got %d records, want 2", next.n)
	}
}

type recordingHandler struct{ n int }

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(context.Context, slog.Record) error {
	h.n++
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

// Content blocks a function answers with replace the value's text; audio
// before 2025-03-26 becomes an embedded resource.
func TestContentBlocks(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	const image = `{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`
	const audio = `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`
	const text = `{"type":"text","text":"a plot"}`
	for _, tt := range []struct{ version, want string }{
		{"2024-11-05", `{"jsonrpc":"2.0","id":1,"result":{"content":[` + image + `,{"type":"resource","resource":{"uri":"nexus://t/pic/result","mimeType":"audio/wav","blob":"UklGRg=="}},` + text + `],"isError":false}}`},
		{"2025-03-26", `{"jsonrpc":"2.0","id":1,"result":{"content":[` + image + `,` + audio + `,` + text + `],"isError":false}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"result":{"content":[` + image + `,` + audio + `,` + text + `],"isError":false}}`},
	} {
		ss := initialized(t, srv, tt.version, nil)
		if got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pic"}}`); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.version, got, tt.want)
		}
	}
}

// A failed call is an isError result, and a warning for a client that
// asked for log messages.
func TestCallFailureWarning(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	rec := &recorder{}
	ss := initialized(t, srv, "2025-06-18", rec.notify)
	got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"late"}}`)
	if got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"pool py: call to 'late' timed out after 1s"}],"isError":true}}` {
		t.Errorf("reply %s", got)
	}
	if n := rec.all(); len(n) != 0 {
		t.Errorf("warning without a level: %v", n)
	}
	reply(t, ss, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`)
	reply(t, ss, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"late"}}`)
	reply(t, ss, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"boom"}}`)
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"nexus","data":{"error":"pool py: call to 'late' timed out after 1s","message":"call to 'late' failed","timeout":true,"tool":"late"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"nexus","data":{"error":"ValueError: boom","message":"call to 'boom' failed","tool":"boom"}}}`,
	}
	if got := rec.all(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n got %v\nwant %v", got, want)
	}
}

// mimeManifest has one command per kind of `mime` return.
const mimeManifest = `{"name":"m","pools":[{"lang":"py","exec":["python3","pool.py"],"metadata":{"runtime":"nexus"}}],"commands":[
 {"name":"png","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":[],"args":[],"return":{"schema":"s","type":"Str","desc":[],"mime":"image/png"}},
 {"name":"wav","type":"remote","mid":2,"pool":0,"needed_pools":[0],"desc":[],"args":[],"return":{"schema":"s","type":"Str","desc":[],"mime":"audio/wav"}},
 {"name":"txt","type":"remote","mid":3,"pool":0,"needed_pools":[0],"desc":[],"args":[],"return":{"schema":"s","type":"Str","desc":[],"mime":"text/csv"}},
 {"name":"latin1","type":"remote","mid":4,"pool":0,"needed_pools":[0],"desc":[],"args":[],"return":{"schema":"s","type":"Str","desc":[],"mime":"text/plain"}},
 {"name":"zip","type":"remote","mid":5,"pool":0,"needed_pools":[0],"desc":[],"args":[],"return":{"schema":"s","type":"Str","desc":[],"mime":"application/zip"}},
 {"name":"notb64","type":"remote","mid":6,"pool":0,"needed_pools":[0],"desc":[],"args":[],"return":{"schema":"s","type":"Str","desc":[],"mime":"image/png"}}]}`

// mimePool answers each mime command with bytes, base64 in a JSON string.
type mimePool struct{}

func (mimePool) Call(_ context.Context, c argmap.Call, _ CallHooks) (ndarray.Value, error) {
	b64 := map[string]string{"png": "iVBORw0KGgo=", "wav": "UklGRg==", "txt": "YSxiCjEsMgo=", "latin1": "/w==", "zip": "UEsDBA==", "notb64": "**"}[c.Command.Name]
	v, err := json.Marshal(b64)
	return ndarray.Value{JSON: v}, err
}

func TestMimeReturns(t *testing.T) {
	srv := NewServer(Implementation{Name: "m", Version: "1"}, toolsOf(t, mimeManifest), mimePool{}, Options{Logger: quietLogger()})
	tests := []struct{ version, tool, want string }{
		{"2025-06-18", "png", `[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"isError":false`},
		{"2024-11-05", "png", `[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"isError":false`},
		{"2025-03-26", "wav", `[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}],"isError":false`},
		{"2024-11-05", "wav", `[{"type":"resource","resource":{"uri":"nexus://m/wav/result","mimeType":"audio/wav","blob":"UklGRg=="}}],"isError":false`},
		{"2025-06-18", "txt", `[{"type":"text","text":"a,b\n1,2\n"}],"isError":false`},
		{"2025-06-18", "latin1", `[{"type":"resource","resource":{"uri":"nexus://m/latin1/result","mimeType":"text/plain","blob":"/w=="}}],"isError":false`},
		{"2025-06-18", "zip", `[{"type":"resource","resource":{"uri":"nexus://m/zip/result","mimeType":"application/zip","blob":"UEsDBA=="}}],"isError":false`},
		{"2025-06-18", "notb64", `[{"type":"text","text":"tool 'notb64' returned image/png that nexus cannot read: not base64: illegal base64 data at input byte 0"}],"isError":true`},
	}
	for _, tt := range tests {
		ss := initialized(t, srv, tt.version, nil)
		want := `{"jsonrpc":"2.0","id":1,"result":{"content":` + tt.want + `}}`
		if got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tt.tool+`"}}`); got != want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.version, tt.tool, got, want)
		}
	}
}

// A command whose metadata.requiredClientCapabilities the client did not
// declare is refused with -32021 naming what is missing, in both eras.
func TestRequiredClientCapabilities(t *testing.T) {
	const m = `{"name":"c","pools":[{"lang":"py","exec":["python3","pool.py"],"metadata":{"runtime":"nexus"}}],"commands":[
 {"name":"add","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":[],"args":[{"kind":"pos","schema":"j","type":"Int","name":null,"desc":[]}],"return":{"schema":"j","type":"Int","desc":[]},
  "metadata":{"requiredClientCapabilities":{"sampling":{},"elicitation":{"form":{}}}}}]}`
	srv := NewServer(Implementation{Name: "c", Version: "1"}, toolsOf(t, m), &fakePool{}, Options{Logger: quietLogger()})
	const both = `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"tool 'add' needs client capabilities the client did not declare: elicitation, sampling","data":{"requiredCapabilities":{"elicitation":{"form":{}},"sampling":{}}}}}`
	const ok = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"2"}],"isError":false}}`
	for _, tt := range []struct{ caps, want string }{
		{`{}`, both},
		{`{"sampling":{},"elicitation":{}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"tool 'add' needs client capabilities the client did not declare: elicitation","data":{"requiredCapabilities":{"elicitation":{"form":{}}}}}}`},
		{`{"sampling":null,"elicitation":{"form":{}}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"tool 'add' needs client capabilities the client did not declare: sampling","data":{"requiredCapabilities":{"sampling":{}}}}}`},
		{`{"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}}}`, ok},
	} {
		ss := srv.NewSession(nil)
		reply(t, ss, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+tt.caps+`}}`)
		if got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"_1":1}}}`); got != tt.want {
			t.Errorf("handshake, capabilities %s:\n got %s\nwant %s", tt.caps, got, tt.want)
		}
		ss.Close()
		stateless := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"_1":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + tt.caps + `}}}`
		got := marshal(t, srv.HandleStateless(context.Background(), req(t, stateless), nil))
		want := tt.want
		if want == ok {
			want = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"2"}],"isError":false,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"c","version":"1"}}}}`
		}
		if got != want {
			t.Errorf("stateless, capabilities %s:\n got %s\nwant %s", tt.caps, got, want)
		}
	}
}

// --once: a handshake-era method runs in an initialized session; a
// 2026-07-28 one gets default per-request _meta.
func TestOnce(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	for _, tt := range []struct{ method, params, want string }{
		{"server/discover", ``, `"supportedVersions":["2026-07-28",`},
		{"tools/list", ``, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add","title":"Add One",`},
		{"tools/call", `{"name":"add","arguments":{"_1":1}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"2"}],"isError":false}}`},
		{"ping", ``, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"initialize", `{"protocolVersion":"2024-11-05"}`, `"protocolVersion":"2024-11-05"`},
	} {
		var params json.RawMessage
		if tt.params != "" {
			params = json.RawMessage(tt.params)
		}
		if got := marshal(t, srv.Once(context.Background(), tt.method, params)); !strings.Contains(got, tt.want) {
			t.Errorf("--once %s: %s, want it to contain %s", tt.method, got, tt.want)
		}
	}
}
