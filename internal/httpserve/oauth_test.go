package httpserve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/auth"
	"github.com/nexus-mcp/nexus/internal/auth/authtest"
	"github.com/nexus-mcp/nexus/internal/metrics"
)

const oauthAudience = "http://127.0.0.1:9000/mcp"

// newOAuthServer serves shapes behind an issuer; every request needs
// scope mcp, and shout also lab:shout.
func newOAuthServer(t *testing.T, cfg Config) (*authtest.Issuer, *httptest.Server, *fakeCaller) {
	t.Helper()
	is := authtest.NewIssuer(t)
	rs, err := auth.New(context.Background(), auth.Config{Issuer: is.URL, Audience: oauthAudience, Scopes: []string{"mcp"},
		ToolScopes: map[string][]string{"shout": {"lab:shout"}}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.OAuth = rs
	_, ts, fc := newTestServer(t, cfg)
	return is, ts, fc
}

// callCount is how many calls reached the pool.
func (f *fakeCaller) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

// routed adds the routing headers of a 2026-07-28 request (name: its
// Mcp-Name, "" for none) to headers.
func routed(method, name string, headers []string) []string {
	h := []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	return append(h, headers...)
}

// With an issuer, /mcp answers 401 with resource_metadata; the metadata
// names the issuer; a good token reaches the tools; each bad one is
// refused with its status and reaches no pool.
func TestOAuthGuard(t *testing.T) {
	m := metrics.New()
	is, ts, fc := newOAuthServer(t, Config{Metrics: m})

	resp := post(t, ts, "/mcp", initBody)
	body := readBody(t, resp)
	want := `Bearer resource_metadata="http://127.0.0.1:9000/.well-known/oauth-protected-resource/mcp", scope="mcp"`
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
		t.Fatalf("no token: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	if r := decodeReply(t, body); r.Error == nil {
		t.Errorf("a 401 without a JSON-RPC error: %s", body)
	}

	resp = do(t, ts, http.MethodGet, "/.well-known/oauth-protected-resource/mcp", "")
	var doc map[string]any
	if err := json.Unmarshal([]byte(readBody(t, resp)), &doc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("metadata: %d %v", resp.StatusCode, err)
	}
	if doc["resource"] != oauthAudience || !strings.Contains(compactJSON(doc["authorization_servers"]), is.URL) ||
		compactJSON(doc["scopes_supported"]) != `["mcp","lab:shout"]` {
		t.Errorf("metadata: %v", doc)
	}

	good := is.Mint(t, is.Claims("alice", oauthAudience, "mcp"))
	resp = post(t, ts, "/mcp", statelessBody(1, "tools/call", `"name":"addInt","arguments":{"_1":41}`), routed("tools/call", "addInt", bearer(good))...)
	if body := readBody(t, resp); resp.StatusCode != 200 || !strings.Contains(body, `"text":"42"`) {
		t.Fatalf("a good token: %d %s", resp.StatusCode, body)
	}

	claims := func(k string, v any) map[string]any {
		c := is.Claims("alice", oauthAudience, "mcp")
		c[k] = v
		return c
	}
	calls := fc.callCount()
	cases := []struct {
		name   string
		header []string
		path   string
		status int
		code   string
	}{
		{"wrong audience", bearer(is.Mint(t, claims("aud", "http://127.0.0.1:9001/mcp"))), "/mcp", 401, "invalid_token"},
		{"expired", bearer(is.Mint(t, claims("exp", time.Now().Add(-time.Hour).Unix()))), "/mcp", 401, "invalid_token"},
		{"another issuer", bearer(is.Mint(t, claims("iss", "http://127.0.0.1:1"))), "/mcp", 401, "invalid_token"},
		{"unknown kid", bearer(authtest.Sign(t, authtest.NewKey(t), is.Claims("alice", oauthAudience, "mcp"))), "/mcp", 401, "invalid_token"},
		{"alg none", bearer(is.Unsigned(t, is.Claims("alice", oauthAudience, "mcp"))), "/mcp", 401, "invalid_token"},
		{"HS256 with the public key", bearer(is.HMACWithPublicKey(t, is.Claims("alice", oauthAudience, "mcp"))), "/mcp", 401, "invalid_token"},
		{"missing scope", bearer(is.Mint(t, is.Claims("alice", oauthAudience))), "/mcp", 403, "insufficient_scope"},
		{"token in the query", nil, "/mcp?access_token=" + good, 400, "invalid_request"},
		{"the plain API too", bearer(is.Mint(t, claims("exp", time.Now().Add(-time.Hour).Unix()))), "/call/shapes/addInt", 401, "invalid_token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := statelessBody(2, "tools/call", `"name":"addInt","arguments":{"_1":1}`)
			if strings.HasPrefix(c.path, "/call/") {
				body = `[1]`
			}
			resp := post(t, ts, c.path, body, routed("tools/call", "addInt", c.header)...)
			got := readBody(t, resp)
			ch := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != c.status || !strings.Contains(ch, `error="`+c.code+`"`) || !strings.Contains(ch, "resource_metadata=") {
				t.Errorf("%d %q %s, want %d %s", resp.StatusCode, ch, got, c.status, c.code)
			}
		})
	}
	if n := fc.callCount() - calls; n != 0 {
		t.Errorf("%d refused requests reached the pool", n)
	}
	resp = do(t, ts, http.MethodGet, "/metrics", "", bearer(good)...)
	text := readBody(t, resp)
	for _, want := range []string{`nexus_auth_refusals_total{reason="expired"} 2`, `nexus_auth_refusals_total{reason="scope"} 1`, `nexus_auth_requests_total{subject="alice"}`} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(text, good[:40]) {
		t.Error("/metrics shows a token")
	}
}

// A tool the token's scopes do not cover is hidden from tools/list and
// /discover and refused with 403 naming its scopes, over MCP and /call;
// with the scope it runs.
func TestOAuthToolScopes(t *testing.T) {
	is, ts, fc := newOAuthServer(t, Config{})
	plain := bearer(is.Mint(t, is.Claims("alice", oauthAudience, "mcp")))
	full := bearer(is.Mint(t, is.Claims("alice", oauthAudience, "mcp", "lab:shout")))
	sid := initialize(t, ts, plain...)

	list := readBody(t, post(t, ts, "/mcp", statelessBody(1, "tools/list", ""), routed("tools/list", "", plain)...))
	inSession := readBody(t, post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, append([]string{"Mcp-Session-Id", sid}, plain...)...))
	for _, l := range []string{list, inSession} {
		if strings.Contains(l, `"name":"shout"`) || !strings.Contains(l, `"name":"addInt"`) {
			t.Errorf("tools/list without lab:shout: %s", l)
		}
	}
	if l := readBody(t, post(t, ts, "/mcp", statelessBody(1, "tools/list", ""), routed("tools/list", "", full)...)); !strings.Contains(l, `"name":"shout"`) {
		t.Errorf("tools/list with lab:shout lacks shout")
	}
	if d := readBody(t, do(t, ts, http.MethodGet, "/discover", "", plain...)); strings.Contains(d, `"name":"shout"`) || !strings.Contains(d, `"name":"addInt"`) {
		t.Errorf("/discover without lab:shout: %s", d)
	}

	calls := fc.callCount()
	wantChallenge := `error="insufficient_scope", error_description="insufficient scope: tool 'shout' needs scope 'mcp lab:shout'", scope="mcp lab:shout"`
	for name, resp := range map[string]*http.Response{
		"stateless":  post(t, ts, "/mcp", statelessBody(3, "tools/call", `"name":"shout","arguments":{"_1":"hi"}`), routed("tools/call", "shout", plain)...),
		"in session": post(t, ts, "/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shout","arguments":{"_1":"hi"}}}`, append([]string{"Mcp-Session-Id", sid}, plain...)...),
	} {
		body := readBody(t, resp)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), wantChallenge) {
			t.Errorf("%s: %d %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		if r := decodeReply(t, body); r.Error == nil || r.Error.Code != -32003 {
			t.Errorf("%s: %s", name, body)
		}
	}
	resp := post(t, ts, "/call/shapes/shout", `["hi"]`, plain...)
	if body := readBody(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="mcp lab:shout"`) {
		t.Errorf("/call: %d %s", resp.StatusCode, body)
	}
	if n := fc.callCount() - calls; n != 0 {
		t.Errorf("%d refused calls reached the pool", n)
	}
	resp = post(t, ts, "/mcp", statelessBody(4, "tools/call", `"name":"shout","arguments":{"_1":"hi"}`), routed("tools/call", "shout", full)...)
	if body := readBody(t, resp); resp.StatusCode != 200 || !strings.Contains(body, `HI!`) {
		t.Errorf("shout with lab:shout: %d %s", resp.StatusCode, body)
	}
}

// A session belongs to the subject that opened it: the same user's next
// token uses it, another user's finds no such session, nor can end it.
func TestOAuthSessionOwner(t *testing.T) {
	is, ts, _ := newOAuthServer(t, Config{})
	alice := bearer(is.Mint(t, is.Claims("alice", oauthAudience, "mcp")))
	sid := initialize(t, ts, alice...)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	time.Sleep(1100 * time.Millisecond) // a new iat: another token
	alice2 := bearer(is.Mint(t, is.Claims("alice", oauthAudience, "mcp")))
	if alice2[1] == alice[1] {
		t.Fatal("the same token twice")
	}
	if resp := post(t, ts, "/mcp", list, append([]string{"Mcp-Session-Id", sid}, alice2...)...); resp.StatusCode != 200 {
		t.Errorf("alice's next token: %d %s", resp.StatusCode, readBody(t, resp))
	}
	bob := bearer(is.Mint(t, is.Claims("bob", oauthAudience, "mcp")))
	if resp := post(t, ts, "/mcp", list, append([]string{"Mcp-Session-Id", sid}, bob...)...); resp.StatusCode != 404 {
		t.Errorf("bob in alice's session: %d %s", resp.StatusCode, readBody(t, resp))
	}
	if resp := do(t, ts, http.MethodDelete, "/mcp", "", append([]string{"Mcp-Session-Id", sid}, bob...)...); resp.StatusCode != 404 {
		t.Errorf("bob ends alice's session: %d", resp.StatusCode)
	}
	if resp := post(t, ts, "/mcp", list, append([]string{"Mcp-Session-Id", sid}, alice...)...); resp.StatusCode != 200 {
		t.Errorf("alice's session after bob's attempts: %d", resp.StatusCode)
	}
}

// A stateless task belongs to the subject: alice's next token fetches it,
// bob's does not find it.
func TestOAuthTaskOwner(t *testing.T) {
	is, ts, _ := newOAuthServer(t, Config{})
	caps := `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	body := func(id int, method, params string) string {
		return strings.Replace(statelessBody(id, method, params), `"io.modelcontextprotocol/clientCapabilities":{}`, caps, 1)
	}
	alice := bearer(is.Mint(t, is.Claims("alice", oauthAudience, "mcp")))
	resp := post(t, ts, "/mcp", body(1, "tools/call", `"name":"sleepMs","arguments":{"_1":5000}`), routed("tools/call", "sleepMs", alice)...)
	created := decodeReply(t, readBody(t, resp))
	var task struct {
		TaskID string `json:"taskId"`
	}
	if created.Error != nil || json.Unmarshal(created.Result, &task) != nil || task.TaskID == "" {
		t.Fatalf("no task: %d %s", resp.StatusCode, created.Result)
	}
	get := body(2, "tasks/get", `"taskId":"`+task.TaskID+`"`)
	time.Sleep(1100 * time.Millisecond)
	alice2 := bearer(is.Mint(t, is.Claims("alice", oauthAudience, "mcp")))
	if r := decodeReply(t, readBody(t, post(t, ts, "/mcp", get, routed("tasks/get", task.TaskID, alice2)...))); r.Error != nil || !strings.Contains(string(r.Result), task.TaskID) {
		t.Errorf("alice's next token: %+v %s", r.Error, r.Result)
	}
	bob := bearer(is.Mint(t, is.Claims("bob", oauthAudience, "mcp")))
	if r := decodeReply(t, readBody(t, post(t, ts, "/mcp", get, routed("tasks/get", task.TaskID, bob)...))); r.Error == nil {
		t.Errorf("bob fetched alice's task: %s", r.Result)
	}
	post(t, ts, "/mcp", body(3, "tasks/cancel", `"taskId":"`+task.TaskID+`"`), routed("tasks/cancel", task.TaskID, alice)...)
}

// An issuer and a static token exclude each other; an issuer is auth
// enough for a non-loopback bind.
func TestOAuthConfig(t *testing.T) {
	is := authtest.NewIssuer(t)
	rs, err := auth.New(context.Background(), auth.Config{Issuer: is.URL, Audience: oauthAudience})
	if err != nil {
		t.Fatal(err)
	}
	prog := loadProgram(t, "shapes", &fakeCaller{})
	if _, err := New(Config{OAuth: rs, AuthToken: "x", Logger: quietLogger()}, []Program{prog}); !errors.Is(err, ErrTokenAndIssuer) {
		t.Errorf("token and issuer: %v", err)
	}
	if _, err := New(Config{OAuth: rs, Host: "0.0.0.0", Logger: quietLogger()}, []Program{loadProgram(t, "shapes", &fakeCaller{})}); err != nil {
		t.Errorf("0.0.0.0 with an issuer: %v", err)
	}
	bad, err := auth.New(context.Background(), auth.Config{Issuer: is.URL, Audience: oauthAudience, ToolScopes: map[string][]string{"nosuch": {"x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{OAuth: bad, Logger: quietLogger()}, []Program{loadProgram(t, "shapes", &fakeCaller{})}); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("a tool scope for no tool: %v", err)
	}
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
