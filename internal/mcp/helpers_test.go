package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// testManifest has one command per behaviour the fake pool below knows.
const testManifest = `{"name":"t","build":{"morloc_version":"1.2.3"},
 "pools":[{"lang":"py","exec":["python3","pool.py"],"metadata":{"runtime":"nexus"}}],
 "commands":[
  {"name":"add","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":["Add one"],
   "args":[{"kind":"pos","schema":"j","type":"Int","name":null,"desc":["n"]}],
   "return":{"schema":"j","type":"Int","desc":[]},
   "metadata":{"title":"Add One","readOnlyHint":true,"idempotentHint":true}},
  {"name":"rec","type":"remote","mid":2,"pool":0,"needed_pools":[0],"desc":["A record"],
   "args":[],"return":{"schema":"m24names3agej","type":"Person","desc":[]}},
  {"name":"slow","type":"remote","mid":3,"pool":0,"needed_pools":[0],"desc":["Wait until cancelled"],
   "args":[],"return":{"schema":"j","type":"Int","desc":[]}},
  {"name":"steps","type":"remote","mid":4,"pool":0,"needed_pools":[0],"desc":["Report progress"],
   "args":[{"kind":"pos","schema":"aj","type":"[Int]","name":null,"desc":["progress values"]}],
   "return":{"schema":"j","type":"Int","desc":[]}},
  {"name":"boom","type":"remote","mid":5,"pool":0,"needed_pools":[0],"desc":["Fail"],
   "args":[],"return":{"schema":"j","type":"Int","desc":[]}},
  {"name":"pic","type":"remote","mid":6,"pool":0,"needed_pools":[0],"desc":["Content blocks"],
   "args":[],"return":{"schema":"j","type":"Int","desc":[]}},
  {"name":"late","type":"remote","mid":7,"pool":0,"needed_pools":[0],"desc":["Time out"],
   "args":[],"return":{"schema":"j","type":"Int","desc":[]}}
 ]}`

// picBlocks are the content blocks pic answers with.
const picBlocks = `[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},{"type":"text","text":"a plot"}]`

type timeoutError struct{}

func (timeoutError) Error() string { return "call to 'late' timed out after 1s" }
func (timeoutError) Timeout() bool { return true }

// fakePool plays the pools: add adds one, rec returns a record, slow waits
// for cancellation, steps reports each value of its list as progress and
// logs at "info" and "error", boom fails.
type fakePool struct {
	mu        sync.Mutex
	cancelled int
	started   chan string // receives a command name as each call starts (if set)
}

func (p *fakePool) Call(ctx context.Context, c argmap.Call, h CallHooks) (ndarray.Value, error) {
	args, err := c.JSONArgs()
	if err != nil {
		return ndarray.Value{}, err
	}
	v, err := p.call(ctx, c.Command, args, h)
	return ndarray.Value{JSON: v}, err
}

func (p *fakePool) call(ctx context.Context, cmd *manifest.Command, args []json.RawMessage, h CallHooks) (json.RawMessage, error) {
	if p.started != nil {
		p.started <- cmd.Name
	}
	switch cmd.Name {
	case "add":
		var n int
		if err := json.Unmarshal(args[0], &n); err != nil {
			return nil, err
		}
		return json.RawMessage(fmt.Sprint(n + 1)), nil
	case "rec":
		return json.RawMessage(`{"name":"Ada","age":36}`), nil
	case "slow":
		<-ctx.Done()
		p.mu.Lock()
		p.cancelled++
		p.mu.Unlock()
		return nil, ctx.Err()
	case "steps":
		var steps []float64
		if err := json.Unmarshal(args[0], &steps); err != nil {
			return nil, err
		}
		total := 10.0
		for _, s := range steps {
			if h.Progress != nil {
				h.Progress(s, &total, fmt.Sprintf("at %g", s))
			}
		}
		if h.Log != nil {
			h.Log("info", json.RawMessage(`{"note":"quiet"}`))
			h.Log("error", json.RawMessage(`"loud"`))
		}
		return json.RawMessage(fmt.Sprint(len(steps))), nil
	case "boom":
		return nil, errors.New("ValueError: boom")
	case "pic":
		h.Content(json.RawMessage(picBlocks))
		return json.RawMessage(`null`), nil
	case "late":
		return nil, fmt.Errorf("pool py: %w", timeoutError{})
	}
	return nil, fmt.Errorf("no function %s", cmd.Name)
}

func testTools(t testing.TB) []*argmap.Tool { return toolsOf(t, testManifest) }

func toolsOf(t testing.TB, manifestJSON string) []*argmap.Tool {
	t.Helper()
	m, err := manifest.Parse("/test/manifest.json", []byte(manifestJSON))
	if err != nil {
		t.Fatal(err)
	}
	tools, excl := argmap.Tools(m)
	if len(excl) != 0 {
		t.Fatalf("exclusions: %v", excl)
	}
	return tools
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestServer(t testing.TB, pool Caller, opts Options) *Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	return NewServer(Implementation{Name: "t", Version: "1.2.3"}, testTools(t), pool, opts)
}

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
