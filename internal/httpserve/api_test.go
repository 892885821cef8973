package httpserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// The plain JSON API: every status code and both body forms.
func TestCallAPI(t *testing.T) {
	_, ts, fc := newTestServer(t, Config{MaxBody: 1024})
	// want is part of the reply, or "pool got X": the positional call the
	// fake pool got (it answers a value of the command's return type).
	tests := []reqCase{
		{"array", "POST", "/call/shapes/addInt", `[41]`, nil, 200, `{"status":"ok","result":42}`},
		{"args object", "POST", "/call/shapes/addInt", `{"args":[1]}`, nil, 200, `{"status":"ok","result":2}`},
		{"string result", "POST", "/call/shapes/shout", `["hi"]`, nil, 200, `{"status":"ok","result":"HI!"}`},
		{"function raised", "POST", "/call/shapes/fail", `["x"]`, nil, 500, `{"status":"error","error":"ValueError: boom"}`},
		{"missing argument", "POST", "/call/shapes/addInt", `[]`, nil, 400, `missing required argument '_1' of 'addInt'`},
		{"wrong type", "POST", "/call/shapes/addInt", `["x"]`, nil, 400, `argument '_1' of 'addInt'`},
		{"default filled", "POST", "/call/shapes/scale", `[3]`, nil, 200, `pool got [3.0,2.5]`},
		{"null takes the default", "POST", "/call/shapes/scale", `[3,null]`, nil, 200, `pool got [3.0,2.5]`},
		{"option given", "POST", "/call/shapes/scale", `[3,4]`, nil, 200, `pool got [3.0,4.0]`},
		{"map as pairs reaches the pool as an object", "POST", "/call/shapes/mapSize", `[[["a",1],["b",2]]]`, nil, 200, `pool got [{"a":1,"b":2}]`},
		{"unrolled group as a record", "POST", "/call/shapes/configure", `[{"numThreads":4}]`, nil, 200, `pool got [{"tmpDir":"/tmp","numThreads":4,"removeCaches":false}]`},
		{"unrolled group, not a record", "POST", "/call/shapes/configure", `[7]`, nil, 400, `must be a record object`},
		{"flag", "POST", "/call/shapes/verbose", `[true]`, nil, 200, `pool got [true]`},
		{"too many arguments", "POST", "/call/shapes/addInt", `[1,2]`, nil, 400, `takes 1 positional argument(s) (_1: Int), got 2`},
		{"not JSON", "POST", "/call/shapes/addInt", `[1`, nil, 400, `not valid JSON`},
		{"not an array", "POST", "/call/shapes/addInt", `7`, nil, 400, `expected an array`},
		{"other object", "POST", "/call/shapes/addInt", `{"argz":[1]}`, nil, 400, `{\"args\":[...]}`},
		{"body over the cap", "POST", "/call/shapes/shout", `["` + strings.Repeat("a", 2000) + `"]`, nil, 413, `too large`},
		{"unknown module", "POST", "/call/nope/addInt", `[1]`, nil, 404, `unknown module 'nope' (served: shapes)`},
		{"unknown command", "POST", "/call/shapes/nope", `[1]`, nil, 404, `unknown command 'nope'`},
		{"excluded command", "POST", "/call/shapes/readStdin", `[""]`, nil, 404, `is not served (reads from @stdin)`},
		{"no command", "POST", "/call/shapes", `[]`, nil, 404, `/call/<module>/<command>`},
		{"GET a call", "GET", "/call/shapes/addInt", ``, nil, 405, `use POST`},
		{"discover all", "GET", "/discover", ``, nil, 200, `"modules":[{"name":"shapes"`},
		{"discover a module", "GET", "/discover/shapes", ``, nil, 200, `{"name":"addInt","tool":"addInt","description":`},
		{"discover an unknown module", "GET", "/discover/nope", ``, nil, 404, `unknown module 'nope'`},
		{"POST discover", "POST", "/discover", `[]`, nil, 405, `use GET`},
		{"health", "GET", "/health", ``, nil, 200, `{"status":"ok"}`},
		{"unknown path", "GET", "/nope", ``, nil, 404, `not found: /nope`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := tc.run(t, ts)
			if got, ok := strings.CutPrefix(tc.want, "pool got "); ok {
				if last := fc.lastCall(); last != got {
					t.Errorf("the pool got %s, want %s", last, got)
				}
			} else if !strings.Contains(body, tc.want) {
				t.Errorf("body %s lacks %s", body, tc.want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// The discovery document describes arguments as a client must send them.
func TestDiscoverArguments(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{})
	var mod discoverModule
	if err := json.Unmarshal([]byte(readBody(t, do(t, ts, "GET", "/discover/shapes", ""))), &mod); err != nil {
		t.Fatal(err)
	}
	byName := map[string]discoverCommand{}
	for _, c := range mod.Commands {
		byName[c.Name] = c
	}
	scale := byName["scale"]
	if len(scale.Arguments) != 2 || scale.Arguments[1].Name != "factor" || scale.Arguments[1].Default == nil || *scale.Arguments[1].Default != "2.5" {
		t.Errorf("scale's arguments %+v", scale.Arguments)
	}
	if scale.Call != "/call/shapes/scale" {
		t.Errorf("scale's call path %q", scale.Call)
	}
	found := false
	for _, e := range mod.Excluded {
		found = found || (e.Name == "readStdin" && e.Reason != "")
	}
	if !found {
		t.Errorf("readStdin is not listed as excluded: %+v", mod.Excluded)
	}
}

// Two programs on one server: tools named <module>__<command>, each call
// reaching its own program's caller.
func TestTwoPrograms(t *testing.T) {
	shapes, combat := &fakeCaller{label: "@shapes"}, &fakeCaller{label: "@combat"}
	s, err := New(Config{Logger: quietLogger()}, []Program{loadProgram(t, "shapes", shapes), loadProgram(t, "combat", combat)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	sid := initialize(t, ts)
	body := readBody(t, post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", sid))
	for _, name := range []string{`"shapes__addInt"`, `"combat__fighterDamage"`, `"combat__rollAdv"`} {
		if !strings.Contains(body, name) {
			t.Errorf("tools/list lacks %s", name)
		}
	}
	if strings.Contains(body, `"name":"addInt"`) {
		t.Error("a tool kept its bare name beside another program")
	}
	body = readBody(t, post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"combat__fighterDamage","arguments":{"_1":20}}}`, "Mcp-Session-Id", sid))
	if !strings.Contains(body, `"text":"7"`) {
		t.Errorf("combat__fighterDamage: %s", body)
	}
	body = readBody(t, post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shapes__shout","arguments":{"_1":"a"}}}`, "Mcp-Session-Id", sid))
	if !strings.Contains(body, `A!@shapes`) {
		t.Errorf("shapes__shout went elsewhere: %s", body)
	}
	if shapes.calls != 1 || combat.calls != 1 {
		t.Errorf("calls: shapes %d, combat %d; want 1 each", shapes.calls, combat.calls)
	}
	body = readBody(t, post(t, ts, "/call/combat/fighterDamage", `[15]`))
	if body != `{"status":"ok","result":12}`+"\n" {
		t.Errorf("plain API on the second program: %s", body)
	}

	// Two programs with one name cannot share a server.
	if _, err := New(Config{Logger: quietLogger()}, []Program{loadProgram(t, "shapes", shapes), loadProgram(t, "shapes", combat)}); err == nil {
		t.Error("two programs named shapes were accepted")
	}
}

// SIGTERM's path: a call in flight finishes within the grace period and is
// answered; a call that outlives it is cancelled.
func TestGracefulShutdown(t *testing.T) {
	for _, tc := range []struct {
		name      string
		grace     time.Duration
		answered  bool
		cancelled bool
	}{
		{"finishes within grace", 5 * time.Second, true, false},
		{"cancelled after grace", 100 * time.Millisecond, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &fakeCaller{began: make(chan string, 1)}
			s, err := New(Config{Port: 0, Grace: tc.grace, Logger: quietLogger()}, []Program{loadProgram(t, "shapes", fc)})
			if err != nil {
				t.Fatal(err)
			}
			addr, stop, served := serveLoopback(t, s, nil)
			url := "http://" + addr

			type result struct {
				status int
				body   string
				err    error
			}
			got := make(chan result, 1)
			go func() {
				resp, err := http.Post(url+"/call/shapes/sleepMs", "application/json", strings.NewReader(`[1000]`))
				if err != nil {
					got <- result{err: err}
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				got <- result{resp.StatusCode, string(b), err}
			}()
			fc.waitBegan(t) // the call is running
			stop()
			// New connections are refused once the listener closes, which
			// Serve does as soon as it runs after stop.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				resp, err := http.Get(url + "/health")
				if err != nil {
					break
				}
				resp.Body.Close()
				if time.Now().After(deadline) {
					t.Error("new requests are still accepted 10s after shutdown began")
					break
				}
			}
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
			r := <-got
			if answered := r.err == nil && r.status == 200 && strings.Contains(r.body, `"result":1000`); answered != tc.answered {
				t.Errorf("answered = %v (%+v), want %v", answered, r, tc.answered)
			}
			if cancelled := len(fc.cancelledCalls()) > 0; cancelled != tc.cancelled {
				t.Errorf("cancelled = %v, want %v", cancelled, tc.cancelled)
			}
		})
	}
}

// An open GET stream does not hold shutdown for the whole grace period.
func TestShutdownEndsSessionStreams(t *testing.T) {
	s, err := New(Config{Grace: 20 * time.Second, Logger: quietLogger()}, []Program{loadProgram(t, "shapes", &fakeCaller{})})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, served := serveLoopback(t, s, nil)
	url := "http://" + addr + "/mcp"
	resp, err := http.Post(url, "application/json", strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	stream, err := http.DefaultClient.Do(request(t, http.MethodGet, url, "", "Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"), "Accept", "text/event-stream"))
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, stream)
	}
	defer stream.Body.Close()
	stop()
	// Held by the stream, shutdown would take the whole 20s grace.
	waitServed(t, served, 10*time.Second, "shutdown waited on the open GET stream")
	if _, err := io.ReadAll(stream.Body); err != nil {
		t.Errorf("the stream did not end cleanly: %v", err)
	}
}

// MaxCalls bounds the calls running at once; the rest wait their turn and
// are all answered.
func TestMaxCalls(t *testing.T) {
	gate := &gatedCaller{release: make(chan struct{})}
	s, err := New(Config{MaxCalls: 2, Logger: quietLogger()}, []Program{loadProgram(t, "shapes", gate)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	done := make(chan int, 5)
	for range 5 {
		go func() {
			resp, err := http.Post(ts.URL+"/call/shapes/addInt", "application/json", strings.NewReader(`[1]`))
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
	}
	// Two calls run; the others wait (gate.most, below, says none ran beside them).
	for deadline := time.Now().Add(time.Minute); gate.running.Load() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls running after a minute, want 2", gate.running.Load())
		}
	}
	if n := gate.running.Load(); n != 2 {
		t.Errorf("%d calls running with MaxCalls 2", n)
	}
	close(gate.release)
	for range 5 {
		if status := <-done; status != 200 {
			t.Errorf("status %d", status)
		}
	}
	if gate.most.Load() != 2 {
		t.Errorf("at most %d calls ran at once, want 2", gate.most.Load())
	}
}

// gatedCaller holds every call until release is closed.
type gatedCaller struct {
	release       chan struct{}
	running, most atomic.Int32
}

func (g *gatedCaller) Call(ctx context.Context, c argmap.Call, h mcp.CallHooks) (ndarray.Value, error) {
	v, err := g.call(ctx, h)
	return ndarray.Value{JSON: v}, err
}

func (g *gatedCaller) call(ctx context.Context, h mcp.CallHooks) (json.RawMessage, error) {
	n := g.running.Add(1)
	defer g.running.Add(-1)
	for {
		m := g.most.Load()
		if n <= m || g.most.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return json.RawMessage(`2`), nil
}
