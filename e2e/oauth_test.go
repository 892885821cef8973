package e2e

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/auth/authtest"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// oidcIssuer is a running oidc-provider (e2e/oidc/provider.mjs) on loopback.
type oidcIssuer struct {
	url      string
	keysFile string
	keys     []*authtest.Key // the first signs
}

// startIssuer runs e2e/oidc/provider.mjs with a fresh signing key, which
// the test keeps so that it can sign tokens of its own with it.
func startIssuer(t *testing.T) *oidcIssuer {
	t.Helper()
	dir := filepath.Join(repoRoot, "e2e", "oidc")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider", "package.json")); err != nil {
		testenv.MissingTool(t, "oidc-provider is not installed in e2e/oidc: run scripts/install-deps.sh")
	}
	is := &oidcIssuer{keysFile: filepath.Join(t.TempDir(), "jwks.json"), keys: []*authtest.Key{authtest.NewKey(t)}}
	is.writeKeys(t)
	cmd := exec.Command("node", "provider.mjs", is.keysFile)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		io.Copy(io.Discard, stdout) // its notices, until it exits
	}()
	select {
	case line := <-first:
		var hello struct{ Issuer string }
		if err := json.Unmarshal([]byte(line), &hello); err != nil || hello.Issuer == "" {
			t.Fatalf("provider.mjs said %q", line)
		}
		is.url = hello.Issuer
	case <-done:
		t.Fatalf("provider.mjs exited:\n%s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("provider.mjs did not start:\n%s", stderr.String())
	}
	return is
}

func (is *oidcIssuer) writeKeys(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(is.keysFile, authtest.PrivateJWKS(t, is.keys...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// rotate makes a new key the signing one, the old one still published (as
// an issuer rotates), without restarting the issuer.
func (is *oidcIssuer) rotate(t *testing.T) *authtest.Key {
	t.Helper()
	k := authtest.NewKey(t)
	is.keys = append([]*authtest.Key{k}, is.keys...)
	is.writeKeys(t)
	resp, err := http.Post(is.url+"/__test/rotate", "", nil)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("rotate: %v %v", err, resp)
	}
	resp.Body.Close()
	return k
}

// clientToken gets an access token with client_credentials (RFC 6749 §4.4)
// for resource (RFC 8707).
func (is *oidcIssuer) clientToken(t *testing.T, client, scope, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}, "resource": {resource}}
	req, _ := http.NewRequest(http.MethodPost, is.url+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, client+"-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("client_credentials for %s: %d %v %s", client, resp.StatusCode, err, tok.Error)
	}
	return tok.AccessToken
}

// claims are a good token's claims, as the issuer would sign them.
func (is *oidcIssuer) claims(audience string, scopes ...string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.url, "sub": "robot", "aud": audience, "client_id": "robot",
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "scope": strings.Join(scopes, " ")}
}

// markerLines reads which functions reached the lab program's pool.
func markerLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// callAdd sends a stateless tools/call of addInt with headers; it returns
// the status, the WWW-Authenticate challenge and the body.
func callAdd(t *testing.T, srv *httpServer, path string, headers ...string) (int, string, string) {
	t.Helper()
	resp, b := mustExchange(t, http.MethodPost, srv.base+path, statelessCallBody(1, "addInt", `{"_1":41}`, ""),
		statelessHeaders("addInt", append([]string{"Accept", mcpAccept}, headers...)...)...)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), b
}

// nexus serve --auth-issuer against a real authorization server
// (oidc-provider): the TypeScript SDK's OAuth client signs in from the
// 401 alone; client_credentials tokens work; every bad token is refused
// with its status before anything reaches the pool; per-tool scopes hide
// and refuse; a task belongs to its subject; a key rotation needs no
// restart.
func TestOAuthResourceServer(t *testing.T) {
	is := startIssuer(t)
	other := startIssuer(t)
	marker := filepath.Join(t.TempDir(), "calls")
	srv := startHTTP(t, []string{"LAB_MARKER=" + marker, "NEXUS_AUTH_INTROSPECTION_SECRET=nexus-secret"},
		"serve", "--port", "0", "--auth-issuer", is.url, "--auth-scopes", "mcp",
		"--auth-introspection", is.url+"/token/introspection", "--auth-introspection-client", "nexus", program("lab"))
	resource := srv.url

	t.Run("metadata names the issuer", func(t *testing.T) {
		resp, err := http.Get(srv.base + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc struct {
			Resource               string   `json:"resource"`
			AuthorizationServers   []string `json:"authorization_servers"`
			ScopesSupported        []string `json:"scopes_supported"`
			BearerMethodsSupported []string `json:"bearer_methods_supported"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d %v", resp.StatusCode, err)
		}
		if doc.Resource != resource || !slices.Equal(doc.AuthorizationServers, []string{is.url}) ||
			!slices.Equal(doc.ScopesSupported, []string{"mcp", "lab:admin"}) || !slices.Equal(doc.BearerMethodsSupported, []string{"header"}) {
			t.Errorf("metadata %+v", doc)
		}
	})

	t.Run("TypeScript SDK signs in", func(t *testing.T) {
		dir := filepath.Join(repoRoot, "e2e", "tsclient")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
			testenv.MissingTool(t, "the TypeScript SDK is not installed in e2e/tsclient: run scripts/install-deps.sh")
		}
		cmd := exec.Command("node", "oauth.mjs", srv.url, "alice")
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("oauth.mjs: %v\n%s", err, stderr.String())
		}
		var got struct {
			Trace []struct {
				Method, URL     string
				Status          int
				WWWAuthenticate *string
			}
			RegisteredClient, AuthorizationURL string
			FirstScope, StepUpScope            string
			SecondScope, PurgeWithoutScope     string
			Tools, ToolsAfter                  []string
			AddInt, Purge                      []struct{ Type, Text string }
			SameSession                        bool
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("oauth.mjs printed %s: %v", out, err)
		}
		prm := srv.base + "/.well-known/oauth-protected-resource/mcp"
		if len(got.Trace) == 0 || got.Trace[0].Status != 401 || got.Trace[0].WWWAuthenticate == nil ||
			*got.Trace[0].WWWAuthenticate != `Bearer resource_metadata="`+prm+`", scope="mcp"` {
			t.Fatalf("the first exchange: %+v", got.Trace[:min(1, len(got.Trace))])
		}
		// Discovery went from the challenge to nexus's metadata to the issuer's.
		seen := func(prefix string, status int) bool {
			return slices.ContainsFunc(got.Trace, func(e struct {
				Method, URL     string
				Status          int
				WWWAuthenticate *string
			}) bool {
				return strings.HasPrefix(e.URL, prefix) && e.Status == status
			})
		}
		if !seen(prm, 200) || !seen(is.url+"/.well-known/", 200) || !seen(is.url+"/reg", 201) || !seen(is.url+"/token", 200) {
			t.Errorf("discovery, registration and token exchanges missing from %+v", got.Trace)
		}
		au, err := url.Parse(got.AuthorizationURL)
		if err != nil || got.RegisteredClient == "" || au.Query().Get("client_id") != got.RegisteredClient ||
			au.Query().Get("resource") != resource || au.Query().Get("code_challenge_method") != "S256" || au.Query().Get("scope") != "mcp" {
			t.Errorf("authorization request %s (client %q)", got.AuthorizationURL, got.RegisteredClient)
		}
		if got.FirstScope != "mcp" || !slices.Equal(got.Tools, []string{"addInt", "square"}) {
			t.Errorf("signed in with %q, tools %v: want mcp, [addInt square] (purge needs lab:admin)", got.FirstScope, got.Tools)
		}
		if len(got.AddInt) != 1 || got.AddInt[0].Text != "42" {
			t.Errorf("addInt(41): %+v", got.AddInt)
		}
		if got.PurgeWithoutScope != "step-up" || got.StepUpScope != "mcp lab:admin" || got.SecondScope != "mcp lab:admin" {
			t.Errorf("purge without lab:admin: %q, asked for %q, got %q", got.PurgeWithoutScope, got.StepUpScope, got.SecondScope)
		}
		if len(got.Purge) != 1 || got.Purge[0].Text != `"purged"` || !slices.Contains(got.ToolsAfter, "purge") || !got.SameSession {
			t.Errorf("purge with lab:admin: %+v, tools %v, same session %v", got.Purge, got.ToolsAfter, got.SameSession)
		}
		if m := markerLines(t, marker); !slices.Equal(m, []string{"addInt", "purge"}) {
			t.Errorf("calls that reached the pool: %v, want [addInt purge] (purge only once its scope was granted)", m)
		}
	})

	t.Run("bad tokens reach no pool", func(t *testing.T) {
		good := is.clientToken(t, "robot", "mcp", resource)
		if status, _, body := callAdd(t, srv, "/mcp", "Authorization", "Bearer "+good); status != 200 || !strings.Contains(body, `"text":"42"`) {
			t.Fatalf("a client_credentials token: %d %s", status, body)
		}
		if status, _, body := callAdd(t, srv, "/mcp", "Authorization", "Bearer "+is.clientToken(t, "opaque", "mcp", resource)); status != 200 || !strings.Contains(body, `"text":"42"`) {
			t.Fatalf("an opaque token, introspected: %d %s", status, body)
		}
		before := markerLines(t, marker)
		expired := is.claims(resource, "mcp")
		expired["iat"], expired["exp"] = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
		cases := []struct {
			name, token, path string
			status            int
			code              string
		}{
			{"wrong audience", is.clientToken(t, "robot", "mcp", "http://127.0.0.1:1/mcp"), "/mcp", 401, "invalid_token"},
			{"expired", authtest.Sign(t, is.keys[0], expired), "/mcp", 401, "invalid_token"},
			{"another issuer", other.clientToken(t, "robot", "mcp", resource), "/mcp", 401, "invalid_token"},
			{"unknown kid", authtest.Sign(t, authtest.NewKey(t), is.claims(resource, "mcp")), "/mcp", 401, "invalid_token"},
			{"alg none", authtest.Unsigned(t, is.keys[0].ID, is.claims(resource, "mcp")), "/mcp", 401, "invalid_token"},
			{"HS256 with the public key", authtest.HMACWithPublicKey(t, is.keys[0], is.claims(resource, "mcp")), "/mcp", 401, "invalid_token"},
			{"missing scope", is.clientToken(t, "robot", "lab:admin", resource), "/mcp", 403, "insufficient_scope"},
			{"opaque, wrong audience", is.clientToken(t, "opaque", "mcp", "http://127.0.0.1:1/mcp"), "/mcp", 401, "invalid_token"},
			{"token in the query string", "", "/mcp?access_token=" + url.QueryEscape(good), 400, "invalid_request"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var h []string
				if c.token != "" {
					h = []string{"Authorization", "Bearer " + c.token}
				}
				status, challenge, body := callAdd(t, srv, c.path, h...)
				if status != c.status || !strings.Contains(challenge, `error="`+c.code+`"`) || !strings.Contains(challenge, `resource_metadata="`) {
					t.Errorf("%d %q %s, want %d with error=%q", status, challenge, body, c.status, c.code)
				}
				if c.token != "" && strings.Contains(srv.stderr.String(), c.token) {
					t.Error("nexus logged the token")
				}
			})
		}
		if after := markerLines(t, marker); !slices.Equal(after, before) {
			t.Errorf("refused tokens reached the pool: %v, then %v", before, after)
		}
	})

	t.Run("a task belongs to its subject", func(t *testing.T) {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
		send := func(token, method, name, params string) map[string]any {
			t.Helper()
			resp, body := srv.rpc(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+params+`,`+meta+`}}`,
				"Authorization", "Bearer "+token, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name)
			var m map[string]any
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				t.Fatalf("%s: %d %s", method, resp.StatusCode, body)
			}
			return m
		}
		created := send(is.clientToken(t, "robot", "mcp", resource), "tools/call", "square", `"name":"square","arguments":{"_1":7}`)
		res, _ := created["result"].(map[string]any)
		id, _ := res["taskId"].(string)
		if id == "" {
			t.Fatalf("no task: %v", created)
		}
		get := `"taskId":"` + id + `"`
		if m := send(is.clientToken(t, "robot2", "mcp", resource), "tasks/get", id, get); m["error"] == nil {
			t.Errorf("another subject fetched the task: %v", m)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			// The same subject's next token.
			m := send(is.clientToken(t, "robot", "mcp", resource), "tasks/get", id, get)
			r, _ := m["result"].(map[string]any)
			if r == nil {
				t.Fatalf("the same subject's next token: %v", m)
			}
			if r["status"] == "completed" {
				if b, _ := json.Marshal(r["result"]); !strings.Contains(string(b), `"text":"49"`) {
					t.Errorf("square(7): %s", b)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the task never completed: %v", r)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	// Last: it changes the issuer's keys.
	t.Run("key rotation needs no restart", func(t *testing.T) {
		k := is.rotate(t)
		tok := is.clientToken(t, "robot", "mcp", resource)
		if kid := tokenKID(t, tok); kid != k.ID {
			t.Fatalf("the issuer signed with %q, not its new key %q", kid, k.ID)
		}
		// nexus fetches the key set again on the unknown kid, at most once
		// per 10s: within that the token may be refused, never after.
		deadline := time.Now().Add(25 * time.Second)
		for {
			status, _, body := callAdd(t, srv, "/mcp", "Authorization", "Bearer "+tok)
			if status == 200 && strings.Contains(body, `"text":"42"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a token signed with the new key is still refused: %d %s", status, body)
			}
			time.Sleep(500 * time.Millisecond)
		}
		select {
		case <-srv.done:
			t.Fatal("nexus exited")
		default:
		}
	})
}

// tokenKID reads a JWT's kid.
func tokenKID(t *testing.T, tok string) string {
	head, _, _ := strings.Cut(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Kid string }
	json.Unmarshal(b, &h)
	return h.Kid
}

// A static token and an issuer exclude each other; the static token alone
// still works (TestHTTPSafety checks it in full).
func TestOAuthAndStaticToken(t *testing.T) {
	cmd := exec.Command(nexusBin, "serve", "--port", "0", "--auth-issuer", "https://issuer.invalid", program("lab"))
	cmd.Env = append(os.Environ(), "NEXUS_AUTH_TOKEN=s3cret")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "exclude each other") {
		t.Errorf("--auth-issuer with NEXUS_AUTH_TOKEN: %v\n%s", err, out)
	}
	srv := startHTTP(t, []string{"NEXUS_AUTH_TOKEN=s3cret"}, "serve", "--port", "0", program("lab"))
	if status, _, body := callAdd(t, srv, "/mcp", "Authorization", "Bearer s3cret"); status != 200 || !strings.Contains(body, `"text":"42"`) {
		t.Errorf("the static token: %d %s", status, body)
	}
	if status, challenge, _ := callAdd(t, srv, "/mcp", "Authorization", "Bearer wrong"); status != 401 || challenge != `Bearer realm="nexus"` {
		t.Errorf("a wrong static token: %d %q", status, challenge)
	}
}
