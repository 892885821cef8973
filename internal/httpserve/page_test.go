package httpserve

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/views"
)

// GET / is the browser page, as package views makes it, with a CSP that
// lets it reach this server alone; nothing else moves.
func TestPage(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{})
	resp := do(t, ts, "GET", "/", "")
	body := readBody(t, resp)
	if resp.StatusCode != 200 || body != string(views.Page()) {
		t.Fatalf("GET /: %d, %d bytes (want the page, %d bytes)", resp.StatusCode, len(body), len(views.Page()))
	}
	h := resp.Header
	if h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", h)
	}
	for _, want := range []string{"default-src 'none'", "connect-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
		if !strings.Contains(h.Get("Content-Security-Policy"), want) {
			t.Errorf("CSP %q lacks %q", h.Get("Content-Security-Policy"), want)
		}
	}
	head := do(t, ts, "HEAD", "/", "")
	if b := readBody(t, head); head.StatusCode != 200 || b != "" || head.Header.Get("Content-Length") != h.Get("Content-Length") {
		t.Errorf("HEAD /: %d %q, length %s", head.StatusCode, b, head.Header.Get("Content-Length"))
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{{"POST", "/", 405}, {"GET", "/index.html", 404}, {"GET", "/nope", 404}} {
		resp := do(t, ts, c.method, c.path, "")
		if b := readBody(t, resp); resp.StatusCode != c.status || !strings.Contains(b, `"error"`) {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, resp.StatusCode, b, c.status)
		}
	}
}

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// The page is behind the same token as /mcp. A browser cannot navigate
// with a bearer token, so the page's 401 asks for Basic credentials whose
// password is the token; the browser then sends them to /mcp as well.
func TestPageAuth(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{AuthToken: "s3cret-token"})
	for _, c := range []struct {
		name, method, path, body, auth string
		status                         int
		challenge                      string
	}{
		{"page without the token", "GET", "/", "", "", 401, "Basic realm=\"nexus\""},
		{"page with the token as Basic password", "GET", "/", "", basic("me", "s3cret-token"), 200, ""},
		{"page with no user name", "GET", "/", "", basic("", "s3cret-token"), 200, ""},
		{"page with a wrong password", "GET", "/", "", basic("s3cret-token", "nope"), 401, "Basic"},
		{"page with Basic and no colon", "GET", "/", "", "Basic " + base64.StdEncoding.EncodeToString([]byte("s3cret-token")), 401, "Basic"},
		{"page with the bearer token", "GET", "/", "", "Bearer s3cret-token", 200, ""},
		{"the page's calls", "POST", "/mcp", initBody, basic("me", "s3cret-token"), 200, ""},
		{"the page's calls, wrong password", "POST", "/mcp", initBody, basic("me", "s3cret"), 401, "Bearer"},
		{"mcp without the token", "POST", "/mcp", initBody, "", 401, "Bearer realm=\"nexus\""},
		{"Basic with garbage", "POST", "/mcp", initBody, "Basic !!!", 401, "Bearer"},
	} {
		var headers []string
		if c.auth != "" {
			headers = []string{"Authorization", c.auth}
		}
		resp := do(t, ts, c.method, c.path, c.body, headers...)
		body := readBody(t, resp)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.status)
			continue
		}
		if c.challenge != "" && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), c.challenge) {
			t.Errorf("%s: WWW-Authenticate %q, want %q...", c.name, resp.Header.Get("WWW-Authenticate"), c.challenge)
		}
		if strings.Contains(body, "s3cret") {
			t.Errorf("%s: the reply shows the token", c.name)
		}
	}
}

// The page's requests carry its own origin. A server reached by another
// name than loopback takes that origin when the name is one it was told
// (--allowed-host) or a token guards it; never otherwise, where a DNS
// rebinding page would have the same origin as its Host.
func TestPageOrigin(t *testing.T) {
	auth := []string{"Authorization", "Bearer tok"}
	for _, c := range []struct {
		name    string
		cfg     Config
		headers []string
		status  int
	}{
		{"token, own origin", Config{Host: "0.0.0.0", AuthToken: "tok"}, append([]string{"Host", "lab.example:9000", "Origin", "http://lab.example:9000"}, auth...), 200},
		{"token, own origin by https", Config{Host: "0.0.0.0", AuthToken: "tok"}, append([]string{"Host", "lab.example", "Origin", "https://lab.example"}, auth...), 200},
		{"token, another origin", Config{Host: "0.0.0.0", AuthToken: "tok"}, append([]string{"Host", "lab.example:9000", "Origin", "http://evil.example:9000"}, auth...), 403},
		{"token, another port", Config{Host: "0.0.0.0", AuthToken: "tok"}, append([]string{"Host", "lab.example:9000", "Origin", "http://lab.example:9001"}, auth...), 403},
		{"no token, any Host", Config{Host: "0.0.0.0", AllowNoAuth: true}, []string{"Host", "lab.example:9000", "Origin", "http://lab.example:9000"}, 403},
		{"no token, allowed Host", Config{Host: "0.0.0.0", AllowNoAuth: true, AllowedHosts: []string{"lab.example"}}, []string{"Host", "lab.example:9000", "Origin", "http://lab.example:9000"}, 200},
		{"no token, loopback Host", Config{Host: "0.0.0.0", AllowNoAuth: true}, []string{"Host", "127.0.0.1:9000", "Origin", "http://127.0.0.1:9000"}, 200},
		{"null origin", Config{Host: "0.0.0.0", AuthToken: "tok"}, append([]string{"Host", "lab.example:9000", "Origin", "null"}, auth...), 403},
	} {
		_, ts, _ := newTestServer(t, c.cfg)
		resp := do(t, ts, "POST", "/mcp", initBody, c.headers...)
		if body := readBody(t, resp); resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.status)
		}
	}
}

// A fetch from the page (same origin) is answered like any MCP request.
func TestPageCallsAreMCP(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{})
	resp := do(t, ts, "POST", "/mcp", initBody, "Origin", ts.URL, "Accept", mcpAccept)
	if body := readBody(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"serverInfo"`) {
		t.Errorf("initialize from the page: %d %s", resp.StatusCode, body)
	}
}
