package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpServer is a running `nexus serve` (or `nexus mcp --http-port`).
type httpServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	url    string // base + /mcp
	stderr *syncBuffer
	done   chan struct{}
	exit   error
}

var listeningRE = regexp.MustCompile(`listening on (https?://\S+)/mcp`)

// startHTTP runs nexus with args (which should pick port 0) and waits for
// its "listening on" line. env is added to nexus's environment.
func startHTTP(t *testing.T, env []string, args ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(nexusBin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &httpServer{t: t, cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.Write([]byte(line + "\n"))
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	go func() { s.exit = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("nexus stderr:\n%s", s.stderr.String())
		}
	})
	select {
	case base := <-found:
		s.base, s.url = base, base+"/mcp"
	case <-s.done:
		t.Fatalf("nexus exited before listening (%v):\n%s", s.exit, s.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("nexus did not start listening:\n%s", s.stderr.String())
	}
	return s
}

// stop sends SIGTERM and waits for a clean exit.
func (s *httpServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		s.t.Errorf("nexus serve did not stop within 30s of SIGTERM")
	}
}

// mcpAccept is the Accept header of a Streamable HTTP client's POST.
const mcpAccept = "application/json, text/event-stream"

// jsonRequest is a request with a JSON body, headers (name, value, ...) set
// after its Content-Type; "Host" sets the host the request names.
func jsonRequest(ctx context.Context, method, url, body string, headers ...string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	return req, nil
}

// exchange sends a jsonRequest through c and returns the response with its
// body read; the response is nil only when none came.
func exchange(ctx context.Context, c *http.Client, method, url, body string, headers ...string) (*http.Response, string, error) {
	req, err := jsonRequest(ctx, method, url, body, headers...)
	if err != nil {
		return nil, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// mustExchange is exchange through http.DefaultClient, failing t on an
// error.
func mustExchange(t testing.TB, method, url, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	resp, b, err := exchange(context.Background(), http.DefaultClient, method, url, body, headers...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp, b
}

// rpc posts one JSON-RPC message and returns the response, body read.
func (s *httpServer) rpc(body string, headers ...string) (*http.Response, string) {
	s.t.Helper()
	return mustExchange(s.t, http.MethodPost, s.url, body, append([]string{"Accept", mcpAccept}, headers...)...)
}

// statelessCallBody is a tools/call of protocol 2026-07-28, which names its
// version and the client's capabilities in _meta (meta adds members, each
// followed by a comma) and needs no session.
func statelessCallBody(id int, tool, args, meta string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,`+
		`"_meta":{%s"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id, tool, args, meta)
}

// statelessHeaders are the routing headers of a 2026-07-28 tools/call of
// tool, then extra.
func statelessHeaders(tool string, extra ...string) []string {
	return append([]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", tool}, extra...)
}

const httpInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`

// session opens a handshake-era session and returns its id.
func (s *httpServer) session() string {
	s.t.Helper()
	resp, body := s.rpc(httpInit)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		s.t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if resp, _ := s.rpc(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid); resp.StatusCode != 202 {
		s.t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	return sid
}

// The official go-sdk client over Streamable HTTP, in both eras: its
// default negotiates 2026-07-28 (stateless), a pinned version uses the
// initialize handshake and a session.
func TestHTTPGoSDKClient(t *testing.T) {
	srv := startHTTP(t, nil, "serve", "--port", "0", program("shapes"))
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		name := version
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			client := sdk.NewClient(&sdk.Implementation{Name: "e2e-go-sdk-http", Version: "0"}, nil)
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			want := version
			if want == "" {
				want = "2026-07-28"
			}
			if got := cs.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("negotiated %q, want %q", got, want)
			}
			if stateless := cs.ID() == ""; stateless != (want == "2026-07-28") {
				t.Errorf("session id %q in protocol %s", cs.ID(), want)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if len(tools.Tools) < 10 || tools.Tools[0].Name != "noArgs" {
				t.Errorf("tools/list: %d tools, first %q", len(tools.Tools), tools.Tools[0].Name)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "addInt", Arguments: map[string]any{"_1": 41}})
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			if res.IsError || len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "42" {
				t.Errorf("addInt(41) = %+v", res)
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "fail", Arguments: map[string]any{"_1": "x"}})
			if err != nil || !res.IsError {
				t.Errorf("fail: %v %+v, want an isError result", err, res)
			}
		})
	}
}

// Progress reaches the go-sdk client over the request's SSE stream, in
// both eras.
func TestHTTPGoSDKProgress(t *testing.T) {
	srv := startHTTP(t, nil, "serve", "--port", "0", program("everything"))
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("v"+version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var mu sync.Mutex
			var got []float64
			client := sdk.NewClient(&sdk.Implementation{Name: "e2e-progress", Version: "0"}, &sdk.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
					mu.Lock()
					got = append(got, req.Params.Progress)
					mu.Unlock()
				},
			})
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			params := &sdk.CallToolParams{Name: "slow_count", Arguments: map[string]any{"_1": 4, "_2": 20}}
			params.SetProgressToken("tok-" + version)
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("slow_count: %v %+v", err, res)
			}
			// The SDK runs notification handlers on their own goroutines, so
			// the last one may land just after CallTool returns.
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				seen := fmt.Sprint(got)
				mu.Unlock()
				if seen == "[1 2 3 4]" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("progress %s, want [1 2 3 4]", seen)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// Two programs on one port: tools named <module>__<command>, each call
// answered by its own program's pool, and the plain API per module.
func TestHTTPTwoPrograms(t *testing.T) {
	srv := startHTTP(t, nil, "serve", "--port", "0", program("combat"), program("shapes"))
	sid := srv.session()
	_, body := srv.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", sid)
	for _, name := range []string{"combat__fighterDamage", "combat__rollAdv", "shapes__addInt", "shapes__person"} {
		if !strings.Contains(body, `"name":"`+name+`"`) {
			t.Errorf("tools/list lacks %s", name)
		}
	}
	for _, tc := range []struct{ call, want string }{
		{`{"name":"combat__fighterDamage","arguments":{"_1":15}}`, `"text":"12"`},
		{`{"name":"shapes__addInt","arguments":{"_1":1}}`, `"text":"2"`},
		{`{"name":"shapes__shout","arguments":{"_1":"hey"}}`, `"text":"\"HEY!\""`},
		{`{"name":"fighterDamage","arguments":{"_1":15}}`, `unknown tool 'fighterDamage'`},
	} {
		_, body := srv.rpc(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+tc.call+`}`, "Mcp-Session-Id", sid)
		if !strings.Contains(body, tc.want) {
			t.Errorf("%s: %s, want %s", tc.call, body, tc.want)
		}
	}
	for path, want := range map[string]string{
		"/call/combat/fighterDamage": `{"status":"ok","result":7}`,
		"/call/shapes/addInt":        `{"status":"ok","result":21}`,
	} {
		resp, err := http.Post(srv.base+path, "application/json", strings.NewReader(`[20]`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.TrimSpace(string(b)) != want {
			t.Errorf("POST %s: %s, want %s", path, b, want)
		}
	}
	resp, err := http.Get(srv.base + "/discover")
	if err != nil {
		t.Fatal(err)
	}
	var disc struct {
		Modules []struct{ Name string } `json:"modules"`
	}
	json.NewDecoder(resp.Body).Decode(&disc)
	resp.Body.Close()
	if len(disc.Modules) != 2 || disc.Modules[0].Name != "combat" || disc.Modules[1].Name != "shapes" {
		t.Errorf("/discover modules %+v", disc.Modules)
	}
}

// 200 calls at once from 20 sessions: each answered exactly once, with its
// own id and its own result.
func TestHTTPConcurrentSessions(t *testing.T) {
	srv := startHTTP(t, nil, "serve", "--port", "0", program("shapes"))
	const sessions, perSession = 20, 10
	sids := make([]string, sessions)
	for i := range sids {
		sids[i] = srv.session()
	}
	type answer struct {
		session, call int
		body          string
		status        int
		err           error
	}
	answers := make(chan answer, sessions*perSession)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for s := range sessions {
		for c := range perSession {
			wg.Go(func() {
				<-start
				n := s*1000 + c
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d-c%d","method":"tools/call","params":{"name":"sleepMs","arguments":{"_1":%d}}}`, s, c, 50+n%7)
				resp, b, err := exchange(context.Background(), http.DefaultClient, http.MethodPost, srv.url, body, "Mcp-Session-Id", sids[s])
				if resp == nil {
					answers <- answer{s, c, "", 0, err}
					return
				}
				answers <- answer{s, c, b, resp.StatusCode, err}
			})
		}
	}
	close(start)
	wg.Wait()
	close(answers)
	seen := map[string]int{}
	for a := range answers {
		if a.err != nil || a.status != 200 {
			t.Errorf("s%d-c%d: status %d, %v: %s", a.session, a.call, a.status, a.err, a.body)
			continue
		}
		var r struct {
			ID     string `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(a.body), &r); err != nil {
			t.Errorf("s%d-c%d: %v: %s", a.session, a.call, err, a.body)
			continue
		}
		wantID := fmt.Sprintf("s%d-c%d", a.session, a.call)
		wantText := fmt.Sprint(50 + (a.session*1000+a.call)%7)
		if r.ID != wantID || len(r.Result.Content) != 1 || r.Result.Content[0].Text != wantText {
			t.Errorf("%s answered %s", wantID, a.body)
		}
		seen[r.ID]++
	}
	if len(seen) != sessions*perSession {
		t.Errorf("%d distinct answers, want %d", len(seen), sessions*perSession)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s answered %d times", id, n)
		}
	}
}

// A call with a progress token is answered as an event stream, the
// progress first; closing that stream cancels the function in its pool.
func TestHTTPProgressAndCancelByClosing(t *testing.T) {
	srv := startHTTP(t, nil, "serve", "--port", "0", program("everything"))
	sid := srv.session()
	resp, body := srv.rpc(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow_count","arguments":{"_1":3,"_2":10},"_meta":{"progressToken":"p"}}}`, "Mcp-Session-Id", sid)
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("headers %v, want an SSE stream with X-Accel-Buffering: no", resp.Header)
	}
	var events []string
	for line := range strings.SplitSeq(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, data)
		}
	}
	if len(events) != 4 || !strings.Contains(events[0], `"progress":1`) || !strings.Contains(events[2], `"progress":3`) || !strings.Contains(events[3], `"id":5`) {
		t.Errorf("events %q, want three progress notifications then the result", events)
	}

	// Stateless (2026-07-28) too: the stream carries progress, closing it cancels.
	for _, era := range []string{"session", "stateless"} {
		t.Run(era, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "cancelled")
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"cancel_probe","arguments":{"_1":%q},"_meta":{"progressToken":"c"}}}`, marker)
			headers := []string{"Accept", mcpAccept, "Mcp-Session-Id", sid}
			if era == "stateless" {
				body = statelessCallBody(6, "cancel_probe", fmt.Sprintf(`{"_1":%q}`, marker), `"progressToken":"c",`)
				headers = statelessHeaders("cancel_probe")
			}
			req, err := jsonRequest(context.Background(), http.MethodPost, srv.url, body, headers...)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("first line %q, %v (%s)", line, err, resp.Header.Get("Content-Type"))
			}
			resp.Body.Close()                        // the client hangs up
			waitForMarker(t, marker, 10*time.Second) // cancelled when the client closed its stream
		})
	}
}

// Status codes against the real binary: auth from NEXUS_AUTH_TOKEN,
// DNS-rebinding protection, the body cap.
func TestHTTPSafety(t *testing.T) {
	srv := startHTTP(t, []string{"NEXUS_AUTH_TOKEN=e2e-secret-token"}, "serve", "--port", "0", "--max-body", "2048", program("combat"))
	if strings.Contains(srv.stderr.String(), "e2e-secret-token") {
		t.Errorf("the token appears on stderr:\n%s", srv.stderr.String())
	}
	bearer := "Bearer e2e-secret-token"
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		headers []string
		status  int
	}{
		{"no token", "POST", "/mcp", httpInit, nil, 401},
		{"wrong token", "POST", "/mcp", httpInit, []string{"Authorization", "Bearer nope"}, 401},
		{"token", "POST", "/mcp", httpInit, []string{"Authorization", bearer}, 200},
		{"foreign origin", "POST", "/mcp", httpInit, []string{"Authorization", bearer, "Origin", "http://evil.example.com"}, 403},
		{"foreign host", "POST", "/mcp", httpInit, []string{"Authorization", bearer, "Host", "evil.example.com"}, 403},
		{"body cap", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("y", 3000) + `"}}`, []string{"Authorization", bearer}, 413},
		{"health without token", "GET", "/health", "", nil, 200},
		{"preflight without token", "OPTIONS", "/mcp", "", []string{"Origin", "http://localhost:3000", "Access-Control-Request-Method", "POST"}, 204},
		{"API without token", "POST", "/call/combat/fighterDamage", "[1]", nil, 401},
		{"API with token", "POST", "/call/combat/fighterDamage", "[1]", []string{"Authorization", bearer}, 200},
	}
	for _, tc := range tests {
		resp, _ := mustExchange(t, tc.method, srv.base+tc.path, tc.body, tc.headers...)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
		if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
		}
	}
}

// A non-loopback bind without a token is refused before any pool starts.
func TestHTTPRefusesOpenNonLoopback(t *testing.T) {
	out, err := exec.Command(nexusBin, "serve", "--host", "0.0.0.0", "--port", "0", program("combat")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--allow-no-auth") {
		t.Errorf("serve on 0.0.0.0 without a token: %v\n%s", err, out)
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() != 2 {
		t.Errorf("exit status %d, want 2 (usage)", ee.ExitCode())
	}
}

// --mcp-config prints the URL form on stdout and the claude line on stderr.
func TestHTTPMCPConfig(t *testing.T) {
	cmd := exec.Command(nexusBin, "serve", "--port", "9123", "--auth-token", "tok", "--mcp-config", program("combat"))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nowhere"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	want := `{"mcpServers":{"combat":{"url":"http://127.0.0.1:9123/mcp","headers":{"Authorization":"Bearer tok"},"env":{"PATH":"/usr/bin:/bin"}}}}`
	var got bytes.Buffer
	if err := json.Compact(&got, out); err != nil {
		t.Fatalf("stdout is not JSON: %v: %s", err, out)
	}
	if got.String() != want {
		t.Errorf("stdout %s, want %s", got.String(), want)
	}
	if !strings.Contains(stderr.String(), "claude mcp add --transport http combat http://127.0.0.1:9123/mcp --header 'Authorization: Bearer tok'") {
		t.Errorf("stderr lacks the claude line:\n%s", stderr.String())
	}
}

// `nexus mcp TARGET --http-port N` is the single-program shorthand; SIGTERM
// lets a call in flight finish, then nexus exits 0 and its pools are gone.
func TestHTTPMCPShorthandAndSIGTERM(t *testing.T) {
	srv := startHTTP(t, nil, "mcp", program("shapes"), "--http-port", "0")
	sid := srv.session()
	got := make(chan string, 1)
	go func() {
		_, body := srv.rpc(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"sleepMs","arguments":{"_1":700}}}`, "Mcp-Session-Id", sid)
		got <- body
	}()
	// SIGTERM once the call is in flight (a call that has not come yet
	// would be refused, rightly) and its pool is up.
	waitForSample(t, srv, `nexus_calls_in_flight{program="shapes"}`, 1)
	pools := waitForPythonPools(t, srv.cmd.Process.Pid, 1)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case body := <-got:
		if !strings.Contains(body, `"text":"700"`) {
			t.Errorf("the call in flight was not answered: %s", body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no answer to the call in flight")
	}
	select {
	case <-srv.done:
	case <-time.After(20 * time.Second):
		t.Fatal("nexus did not exit after SIGTERM")
	}
	if srv.exit != nil {
		t.Errorf("exit: %v, want 0", srv.exit)
	}
	waitGone(t, pools)
}
