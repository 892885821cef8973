package httpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// fakeCaller stands in for a program's pools: it runs a few of the shapes
// program's commands in Go, so these tests need no Python.
type fakeCaller struct {
	label string // told apart in multi-program tests

	// began, when set, hears each sleepMs as it begins: a test that must
	// act while a call runs waits for it instead of sleeping (a loaded
	// machine may take longer than any sleep to start the call).
	began chan string

	mu        sync.Mutex
	calls     int
	cancelled []string // commands whose context ended before they finished
	last      string   // the positional call of the last command zeroOf answered
}

func (f *fakeCaller) Call(ctx context.Context, c argmap.Call, h mcp.CallHooks) (ndarray.Value, error) {
	args, err := c.JSONArgs()
	if err != nil {
		return ndarray.Value{}, err
	}
	v, err := f.call(ctx, c.Command, args, h)
	return ndarray.Value{JSON: v}, err
}

func (f *fakeCaller) call(ctx context.Context, cmd *manifest.Command, args []json.RawMessage, h mcp.CallHooks) (json.RawMessage, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	switch cmd.Name {
	case "addInt", "fighterDamage":
		var n int
		if err := json.Unmarshal(args[0], &n); err != nil {
			return nil, err
		}
		if cmd.Name == "fighterDamage" {
			return json.RawMessage(strconv.Itoa(max(0, 27-n))), nil
		}
		return json.RawMessage(strconv.Itoa(n + 1)), nil
	case "rollAdv":
		return json.RawMessage(`20`), nil
	case "shout":
		var s string
		json.Unmarshal(args[0], &s)
		if f.label == "ask" {
			// The function asks the client for the word to shout.
			res, err := h.Ask(ctx, mcp.Question{Kind: "elicit", Params: json.RawMessage(`{"message":"` + s + `","requestedSchema":{"type":"object","properties":{"word":{"type":"string"}}}}`)})
			if err != nil {
				return nil, err
			}
			var a struct{ Content struct{ Word string } }
			json.Unmarshal(res, &a)
			s = a.Content.Word
		}
		return json.Marshal(strings.ToUpper(s) + "!" + f.label)
	case "fail":
		return nil, raised{"ValueError: boom"}
	case "sleepMs":
		// Ten steps of progress, then the value; ends early when cancelled.
		var ms int
		json.Unmarshal(args[0], &ms)
		if f.began != nil {
			select {
			case f.began <- cmd.Name:
			default: // a test waits for the first only
			}
		}
		total := 10.0
		for i := 1; i <= 10; i++ {
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond / 10):
			case <-ctx.Done():
				f.mu.Lock()
				f.cancelled = append(f.cancelled, cmd.Name)
				f.mu.Unlock()
				return nil, ctx.Err()
			}
			if h.Progress != nil {
				h.Progress(float64(i), &total, fmt.Sprintf("step %d", i))
			}
		}
		return json.RawMessage(strconv.Itoa(ms)), nil
	}
	// Any other command records the positional call it got (lastCall) and
	// answers the zero value of its return type.
	call, _ := json.Marshal(args)
	f.mu.Lock()
	f.last = string(call)
	f.mu.Unlock()
	return zeroOf(cmd.Return.T), nil
}

// raised is a function's own failure, as a pool's or the evaluator's error
// reports it (mcp.FunctionFailure), so these tests need neither package.
type raised struct{ msg string }

func (e raised) Error() string        { return e.msg }
func (e raised) FunctionFailed() bool { return true }

// waitBegan waits until a sleepMs call has begun (began must be set).
func (f *fakeCaller) waitBegan(t *testing.T) {
	t.Helper()
	select {
	case <-f.began:
	case <-time.After(time.Minute):
		t.Fatal("no sleepMs call began within a minute")
	}
}

// lastCall is the positional call of the last command answered by zeroOf.
func (f *fakeCaller) lastCall() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// zeroOf is a JSON value of type t: a result that passes nexus's check.
func zeroOf(t *manifest.Type) json.RawMessage {
	switch t.Unwrap().Kind {
	case manifest.Int, manifest.Float:
		return json.RawMessage("0")
	case manifest.Str:
		return json.RawMessage(`""`)
	case manifest.Bool:
		return json.RawMessage("false")
	case manifest.List:
		return json.RawMessage("[]")
	}
	return json.RawMessage("null")
}

func (f *fakeCaller) cancelledCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cancelled...)
}

// loadProgram reads one of the repository's example programs.
func loadProgram(t *testing.T, name string, caller mcp.Caller) Program {
	return loadProgramB(t, name, caller)
}

func loadProgramB(t testing.TB, name string, caller mcp.Caller) Program {
	t.Helper()
	m, err := manifest.Load(filepath.Join("..", "..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	tools, excluded := argmap.Tools(m)
	return Program{Manifest: m, Tools: tools, Excluded: excluded, Caller: caller}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newTestServer serves the shapes program through a fakeCaller.
func newTestServer(t *testing.T, cfg Config) (*Server, *httptest.Server, *fakeCaller) {
	t.Helper()
	fc := &fakeCaller{}
	cfg.Logger = quietLogger()
	s, err := New(cfg, []Program{loadProgram(t, "shapes", fc)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts, fc
}

// reqCase is one request of a table test (headers are name, value, ...)
// and what its answer must be: the status, and want in the body.
type reqCase struct {
	name, method, path, body string
	headers                  []string
	status                   int
	want                     string
}

// run sends c to ts and checks the status: the answer and its body.
func (c reqCase) run(t *testing.T, ts *httptest.Server) (*http.Response, string) {
	t.Helper()
	resp := do(t, ts, c.method, c.path, c.body, c.headers...)
	body := readBody(t, resp)
	if resp.StatusCode != c.status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
	}
	return resp, body
}

// plus is headers with more after them, headers itself left as it is.
func plus(headers []string, more ...string) []string {
	return append(headers[:len(headers):len(headers)], more...)
}

// mcpAccept is what an MCP client accepts: JSON, or an event stream.
const mcpAccept = "application/json, text/event-stream"

// request is a request of method to url with body and header pairs (name,
// value, ...), a later pair overriding an earlier one; "Host" sets the
// request's host.
func request(t *testing.T, method, url, body string, headers ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// post sends body to path with the given headers (name, value, ...).
func post(t *testing.T, ts *httptest.Server, path, body string, headers ...string) *http.Response {
	t.Helper()
	return do(t, ts, http.MethodPost, path, body, headers...)
}

// do sends a request to ts (request); a body is JSON unless the headers
// say otherwise.
func do(t *testing.T, ts *httptest.Server, method, path, body string, headers ...string) *http.Response {
	t.Helper()
	if body != "" {
		headers = plus([]string{"Content-Type", "application/json"}, headers...)
	}
	resp, err := ts.Client().Do(request(t, method, ts.URL+path, body, headers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rpcReply is a JSON-RPC response as a test reads it.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decodeReply(t *testing.T, body string) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("reply is not JSON-RPC: %v: %s", err, body)
	}
	return r
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`

// initialize opens a session and returns its id.
func initialize(t *testing.T, ts *httptest.Server, headers ...string) string {
	t.Helper()
	resp := post(t, ts, "/mcp", initBody, headers...)
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("initialize answered without Mcp-Session-Id: %s", body)
	}
	resp = post(t, ts, "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, append([]string{"Mcp-Session-Id", id}, headers...)...)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	return id
}

// statelessBody builds a 2026-07-28 request with the _meta it needs.
func statelessBody(id int, method, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = "{" + params + "," + meta + "}"
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

// sseEvents reads every data line of an event stream, as JSON objects.
func sseEvents(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("event data is not JSON: %q", data)
			}
			out = append(out, m)
		}
	}
	return out
}

func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// waitServed waits up to within for Serve to return, failing the test
// with late if it does not; Serve's error fails it too, and is returned.
func waitServed(t *testing.T, served <-chan error, within time.Duration, late string) error {
	t.Helper()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		return err
	case <-time.After(within):
		t.Fatal(late)
		return nil
	}
}

// serveLoopback runs s on a port of its own on the loopback interface
// (through wrap, when given) until stop is called: the port's address,
// stop, and what Serve returns then.
func serveLoopback(t *testing.T, s *Server, wrap func(net.Listener) net.Listener) (addr string, stop context.CancelFunc, served <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	return addr, stop, done
}
