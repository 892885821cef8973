package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// serverRequests collects the server's requests to the client and answers
// them with answer (by method), as a client would.
type fakeClient struct {
	mu       sync.Mutex
	requests []string
	cancels  []string
	ss       *Session
	answer   func(method string, params json.RawMessage) *Answer
}

func (c *fakeClient) notify(n *Notification) {
	b, _ := json.Marshal(n)
	c.mu.Lock()
	if n.ID == nil {
		if n.Method == "notifications/cancelled" {
			c.cancels = append(c.cancels, string(b))
		}
		c.mu.Unlock()
		return
	}
	c.requests = append(c.requests, string(b))
	c.mu.Unlock()
	if c.answer == nil {
		return
	}
	params, _ := json.Marshal(n.Params)
	a := c.answer(n.Method, params)
	a.ID = n.ID
	// The answer comes back as the transport reads it, on another goroutine.
	go c.ss.Deliver(a)
}

func initializedWith(t *testing.T, srv *Server, version, caps string, c *fakeClient) *Session {
	t.Helper()
	ss := srv.NewSession(c.notify)
	c.ss = ss
	t.Cleanup(ss.Close)
	got := reply(t, ss, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":`+caps+`,"clientInfo":{"name":"c","version":"0"}}}`)
	if !strings.Contains(got, `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize %s: %s", version, got)
	}
	return ss
}

func acceptName(name string) func(string, json.RawMessage) *Answer {
	return func(method string, _ json.RawMessage) *Answer {
		switch method {
		case "elicitation/create":
			return &Answer{Result: json.RawMessage(`{"action":"accept","content":{"name":"` + name + `"}}`)}
		case "sampling/createMessage":
			return &Answer{Result: json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`)}
		}
		return &Answer{Result: json.RawMessage(`{"roots":[{"uri":"file:///r","name":"R"}]}`)}
	}
}

// TestAskHandshakeEra: in the handshake era a function's question goes to
// the client as a server request on the call's stream, and the client's
// response comes back to the function (docs/spec.md §6.3).
func TestAskHandshakeEra(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet","arguments":{"_1":"Who are you?"}}}`
	tests := []struct {
		name, version, caps string
		answer              func(string, json.RawMessage) *Answer
		want                []string // in the reply
		requests            int      // server requests sent
	}{
		{"answered", "2025-06-18", `{"elicitation":{}}`, acceptName("Ada"), []string{`"text":"\"Hello, Ada!\""`}, 1},
		{"form mode declared", "2025-11-25", `{"elicitation":{"form":{}}}`, acceptName("Bo"), []string{`Hello, Bo!`}, 1},
		{"declined", "2025-11-25", `{"elicitation":{}}`, func(string, json.RawMessage) *Answer {
			return &Answer{Result: json.RawMessage(`{"action":"decline"}`)}
		}, []string{`Hello, decline!`}, 1},
		{"client error", "2025-06-18", `{"elicitation":{}}`, func(string, json.RawMessage) *Answer {
			return &Answer{Error: &Error{Code: -1, Message: "user closed the dialog"}}
		}, []string{`"isError":true`, `the client answered elicitation/create with an error: user closed the dialog (code -1)`}, 1},
		{"not declared", "2025-06-18", `{"sampling":{}}`, nil, []string{`"isError":true`, `the client did not declare the elicitation capability`}, 0},
		{"urls only", "2025-11-25", `{"elicitation":{"url":{}}}`, nil, []string{`"isError":true`, `elicitation for URLs only`}, 0},
		{"too old", "2025-03-26", `{"elicitation":{}}`, nil, []string{`"isError":true`, `MCP 2025-03-26, which has no elicitation/create`}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newAskServer(t, Options{})
			c := &fakeClient{answer: tt.answer}
			ss := initializedWith(t, srv, tt.version, tt.caps, c)
			got := reply(t, ss, call)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("reply lacks %s:\n%s", w, got)
				}
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if len(c.requests) != tt.requests {
				t.Fatalf("server requests: %q, want %d", c.requests, tt.requests)
			}
			if tt.requests > 0 && !strings.HasPrefix(c.requests[0], `{"jsonrpc":"2.0","id":"nexus-1","method":"elicitation/create","params":{"message":"Who are you?","requestedSchema":`) {
				t.Errorf("server request: %s", c.requests[0])
			}
		})
	}
}

// TestAskCancelled: a call cancelled while its function waits for the
// client ends, and the client is told its request is no longer wanted.
func TestAskCancelled(t *testing.T) {
	srv, _ := newAskServer(t, Options{})
	c := &fakeClient{} // never answers
	ss := initializedWith(t, srv, "2025-06-18", `{"elicitation":{}}`, c)
	done := make(chan string, 1)
	go func() {
		done <- reply(t, ss, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet","arguments":{"_1":"?"}}}`)
	}()
	waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.requests) == 1 })
	reply(t, ss, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	select {
	case got := <-done:
		if got != "" {
			t.Errorf("a cancelled request got a reply: %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.cancels) == 1 })
	if !strings.Contains(c.cancels[0], `"requestId":"nexus-1"`) {
		t.Errorf("cancellation sent: %s", c.cancels[0])
	}
	// A late answer to the abandoned request is dropped, not delivered.
	ss.Deliver(&Answer{ID: json.RawMessage(`"nexus-1"`), Result: json.RawMessage(`{}`)})
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stateless runs one 2026-07-28 request and returns the reply decoded.
func mrtrCall(t *testing.T, srv *Server, caps, params string) map[string]any {
	t.Helper()
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + params + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	resp := srv.HandleStateless(context.Background(), req(t, line), nil)
	var out map[string]any
	if err := json.Unmarshal([]byte(marshal(t, resp)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mrtrResult(t *testing.T, reply map[string]any) map[string]any {
	t.Helper()
	r, ok := reply["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", reply)
	}
	return r
}

func completeText(t *testing.T, reply map[string]any) string {
	t.Helper()
	r := mrtrResult(t, reply)
	if r["resultType"] != "complete" {
		t.Fatalf("not complete: %v", r)
	}
	text := r["content"].([]any)[0].(map[string]any)["text"].(string)
	var s string
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatalf("text %q: %v", text, err)
	}
	return s
}

func responses(m map[string]string) string {
	b, _ := json.Marshal(m)
	return strings.NewReplacer(`\"`, `"`, `"{`, `{`, `}"`, `}`).Replace(string(b))
}

const allCaps = `{"elicitation":{},"sampling":{},"roots":{}}`

// TestInputRequired: a 2026-07-28 call whose function asks ends with
// input_required; the retry with the answers and the state completes it
// (SEP-2322; docs/spec.md §6.3).
func TestInputRequired(t *testing.T) {
	srv, pool := newAskServer(t, Options{})
	first := mrtrResult(t, mrtrCall(t, srv, allCaps, `"name":"greet","arguments":{"_1":"Name?"}`))
	if first["resultType"] != "input_required" {
		t.Fatalf("round 1: %v", first)
	}
	reqs := first["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("inputRequests: %v", reqs)
	}
	var key string
	for k, v := range reqs {
		key = k
		if m := v.(map[string]any); m["method"] != "elicitation/create" || m["params"].(map[string]any)["message"] != "Name?" {
			t.Errorf("request %s: %v", k, v)
		}
	}
	if !strings.HasPrefix(key, "elicit_") {
		t.Errorf("derived key %q", key)
	}
	state := first["requestState"].(string)
	ans := responses(map[string]string{key: `{"action":"accept","content":{"name":"Ada"}}`})
	second := mrtrCall(t, srv, allCaps, `"name":"greet","arguments":{"_1":"Name?"},"inputResponses":`+ans+`,"requestState":"`+state+`"`)
	if got := completeText(t, second); got != "Hello, Ada!" {
		t.Errorf("round 2: %q", got)
	}
	// Without the state the answers still count: they are the client's own.
	third := mrtrCall(t, srv, allCaps, `"name":"greet","arguments":{"_1":"Name?"},"inputResponses":`+ans)
	if got := completeText(t, third); got != "Hello, Ada!" {
		t.Errorf("no state: %q", got)
	}
	// A response to the wrong key asks again (SEP-2322 re-request), not an error.
	again := mrtrResult(t, mrtrCall(t, srv, allCaps, `"name":"greet","arguments":{"_1":"Name?"},"inputResponses":{"wrong_key":{"action":"accept"}}`))
	if again["resultType"] != "input_required" {
		t.Errorf("wrong key: %v", again)
	}
	if pool.total() != 4 {
		t.Errorf("the function ran %d times, want 4 (once per round)", pool.total())
	}
}

// TestInputRequiredRefusals: what a retry must not get away with.
func TestInputRequiredRefusals(t *testing.T) {
	srv, _ := newAskServer(t, Options{})
	first := mrtrResult(t, mrtrCall(t, srv, allCaps, `"name":"greet","arguments":{"_1":"Name?"}`))
	state := first["requestState"].(string)
	var key string
	for k := range first["inputRequests"].(map[string]any) {
		key = k
	}
	ans := responses(map[string]string{key: `{"action":"accept","content":{"name":"Ada"}}`})
	body, mac, _ := strings.Cut(state, ".")
	expired, _ := newAskServer(t, Options{StateTTL: time.Nanosecond})
	old := mrtrResult(t, mrtrCall(t, expired, allCaps, `"name":"greet","arguments":{"_1":"Name?"}`))["requestState"].(string)
	tests := []struct {
		name, params, want string
	}{
		{"tampered", `"name":"greet","arguments":{"_1":"Name?"},"inputResponses":` + ans + `,"requestState":"` + state + `-TAMPERED"`, "integrity check"},
		{"body altered", `"name":"greet","arguments":{"_1":"Name?"},"inputResponses":` + ans + `,"requestState":"` + body + `x.` + mac + `"`, "integrity check"},
		{"other arguments", `"name":"greet","arguments":{"_1":"Other?"},"inputResponses":` + ans + `,"requestState":"` + state + `"`, "other arguments"},
		{"other tool", `"name":"rounds","arguments":{},"inputResponses":` + ans + `,"requestState":"` + state + `"`, "made for tool 'greet'"},
		{"not a string", `"name":"greet","arguments":{"_1":"Name?"},"requestState":5`, "requestState must be the string"},
		{"null responses", `"name":"greet","arguments":{"_1":"Name?"},"inputResponses":null`, "inputResponses must be an object"},
		{"number response", `"name":"greet","arguments":{"_1":"Name?"},"inputResponses":{"` + key + `":12345}`, "must be the result object"},
		{"another key", `"name":"greet","arguments":{"_1":"Name?"},"inputResponses":` + ans + `,"requestState":"` + old + `"`, "integrity check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mrtrCall(t, srv, allCaps, tt.params)
			e, ok := got["error"].(map[string]any)
			if !ok {
				t.Fatalf("not an error: %v", got)
			}
			if e["code"].(float64) != CodeInvalidParams || !strings.Contains(e["message"].(string), tt.want) {
				t.Errorf("error %v, want -32602 with %q", e, tt.want)
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		time.Sleep(2 * time.Millisecond)
		got := mrtrCall(t, expired, allCaps, `"name":"greet","arguments":{"_1":"Name?"},"requestState":"`+old+`"`)
		if e, ok := got["error"].(map[string]any); !ok || !strings.Contains(e["message"].(string), "expired") {
			t.Errorf("expired state: %v", got)
		}
	})
}

// TestInputRequiredSharedKey: nodes that share NEXUS_STATE_KEY accept each
// other's requestState, so a retry may land on any of them.
func TestInputRequiredSharedKey(t *testing.T) {
	key := []byte("a key every node of the deployment shares")
	a, _ := newAskServer(t, Options{StateKey: key})
	b, _ := newAskServer(t, Options{StateKey: key})
	first := mrtrResult(t, mrtrCall(t, a, allCaps, `"name":"rounds","arguments":{}`))
	ans := responses(map[string]string{"step1": `{"action":"accept","content":{"name":"Ada"}}`})
	second := mrtrResult(t, mrtrCall(t, b, allCaps, `"name":"rounds","arguments":{},"inputResponses":`+ans+`,"requestState":"`+first["requestState"].(string)+`"`))
	if second["resultType"] != "input_required" || second["inputRequests"].(map[string]any)["step2"] == nil {
		t.Fatalf("round 2 on node b: %v", second)
	}
	if second["requestState"] == first["requestState"] {
		t.Error("each round must carry a state of its own")
	}
	// Round 3 on node a: the answer of round 1 travelled in the state.
	ans2 := responses(map[string]string{"step2": `{"action":"accept","content":{"name":"blue"}}`})
	third := mrtrCall(t, a, allCaps, `"name":"rounds","arguments":{},"inputResponses":`+ans2+`,"requestState":"`+second["requestState"].(string)+`"`)
	if got := completeText(t, third); got != "Ada+blue" {
		t.Errorf("round 3: %q", got)
	}
}

// TestInputRequiredSeveral: questions asked at once go out in one round.
func TestInputRequiredSeveral(t *testing.T) {
	srv, _ := newAskServer(t, Options{})
	first := mrtrResult(t, mrtrCall(t, srv, allCaps, `"name":"all3","arguments":{}`))
	reqs, _ := first["inputRequests"].(map[string]any)
	for key, method := range map[string]string{"user_name": "elicitation/create", "greeting": "sampling/createMessage", "client_roots": "roots/list"} {
		if r, ok := reqs[key].(map[string]any); !ok || r["method"] != method {
			t.Errorf("inputRequests[%s] = %v, want %s", key, reqs[key], method)
		}
	}
	ans := responses(map[string]string{
		"user_name":    `{"action":"accept","content":{"name":"Ada"}}`,
		"greeting":     `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`,
		"client_roots": `{"roots":[]}`,
	})
	got := completeText(t, mrtrCall(t, srv, allCaps, `"name":"all3","arguments":{},"inputResponses":`+ans+`,"requestState":"`+first["requestState"].(string)+`"`))
	if !strings.HasPrefix(got, "Ada|") || !strings.HasSuffix(got, `|{"roots":[]}`) {
		t.Errorf("round 2: %q", got)
	}
}

// TestInputRequiredCapabilities: only what the client declared in _meta
// is asked; the rest fails in the function, which may carry on.
func TestInputRequiredCapabilities(t *testing.T) {
	srv, _ := newAskServer(t, Options{})
	first := mrtrResult(t, mrtrCall(t, srv, `{"sampling":{}}`, `"name":"polite","arguments":{}`))
	reqs := first["inputRequests"].(map[string]any)
	if len(reqs) != 1 || reqs["poem"] == nil {
		t.Fatalf("inputRequests: %v", reqs)
	}
	ans := responses(map[string]string{"poem": `{"role":"assistant","content":{"type":"text","text":"roses"},"model":"m"}`})
	got := completeText(t, mrtrCall(t, srv, `{"sampling":{}}`, `"name":"polite","arguments":{},"inputResponses":`+ans+`,"requestState":"`+first["requestState"].(string)+`"`))
	if !strings.Contains(got, "did not declare the elicitation capability") || !strings.Contains(got, "roses") {
		t.Errorf("round 2: %q", got)
	}
}
