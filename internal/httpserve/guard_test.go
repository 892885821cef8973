package httpserve

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// Host and Origin checks (DNS rebinding), the bearer token, and what is
// open without it.
func TestGuard(t *testing.T) {
	_, ts, _ := newTestServer(t, Config{AuthToken: "s3cret-token", AllowedOrigins: []string{"https://app.example.com"}, AllowedHosts: []string{"nexus.internal"}})
	auth := []string{"Authorization", "Bearer s3cret-token"}
	with := func(extra ...string) []string { return plus(auth, extra...) }
	tests := []reqCase{
		{"token", "POST", "/mcp", initBody, auth, 200, ""},
		{"token, scheme in lower case", "POST", "/mcp", initBody, []string{"Authorization", "bearer s3cret-token"}, 200, ""},
		{"no token", "POST", "/mcp", initBody, nil, 401, ""},
		{"wrong token", "POST", "/mcp", initBody, []string{"Authorization", "Bearer s3cret-tokem"}, 401, ""},
		{"token prefix", "POST", "/mcp", initBody, []string{"Authorization", "Bearer s3cret"}, 401, ""},
		{"basic auth", "POST", "/mcp", initBody, []string{"Authorization", "Basic czNjcmV0LXRva2Vu"}, 401, ""},
		{"API needs the token too", "GET", "/discover", "", nil, 401, ""},
		{"API with the token", "GET", "/discover", "", auth, 200, ""},
		{"health is open", "GET", "/health", "", nil, 200, ""},
		{"health from a foreign Host", "GET", "/health", "", []string{"Host", "evil.example.com"}, 200, ""},
		{"preflight is open", "OPTIONS", "/mcp", "", []string{"Origin", "http://localhost:5173", "Access-Control-Request-Method", "POST"}, 204, ""},
		{"preflight from a foreign origin", "OPTIONS", "/mcp", "", []string{"Origin", "http://evil.example.com", "Access-Control-Request-Method", "POST"}, 403, ""},
		{"loopback origin", "POST", "/mcp", initBody, with("Origin", "http://127.0.0.1:3000"), 200, ""},
		{"allowed origin", "POST", "/mcp", initBody, with("Origin", "https://app.example.com"), 200, ""},
		{"foreign origin", "POST", "/mcp", initBody, with("Origin", "http://evil.example.com"), 403, ""},
		{"null origin", "POST", "/mcp", initBody, with("Origin", "null"), 403, ""},
		{"foreign Host", "POST", "/mcp", initBody, with("Host", "evil.example.com"), 403, ""},
		{"foreign Host with port", "POST", "/mcp", initBody, with("Host", "evil.example.com:9000"), 403, ""},
		{"localhost Host", "POST", "/mcp", initBody, with("Host", "localhost:9000"), 200, ""},
		{"IPv6 loopback Host", "POST", "/mcp", initBody, with("Host", "[::1]:9000"), 200, ""},
		{"allowed Host", "POST", "/mcp", initBody, with("Host", "nexus.internal:9000"), 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := tc.run(t, ts)
			switch tc.status {
			case 401:
				if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("401 without WWW-Authenticate: Bearer (got %q)", resp.Header.Get("WWW-Authenticate"))
				}
				if strings.Contains(body, "s3cret") {
					t.Errorf("the reply shows the token: %s", body)
				}
			case 204:
				if resp.Header.Get("Access-Control-Allow-Origin") == "" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Mcp-Session-Id") {
					t.Errorf("preflight headers %v", resp.Header)
				}
			}
		})
	}
}

// A non-loopback bind accepts any Host (the token guards it), unless an
// allow-list is given.
func TestGuardNonLoopbackHosts(t *testing.T) {
	g := &guard{loopbackBind: false}
	if !g.hostAllowed("nexus.example.org:9000") {
		t.Error("non-loopback bind refused its own name")
	}
	g.hosts = []string{"nexus.example.org"}
	if g.hostAllowed("other.example.org") || !g.hostAllowed("nexus.example.org:9000") || !g.hostAllowed("127.0.0.1:9000") {
		t.Error("allow-list not applied")
	}
	if (&guard{loopbackBind: true}).hostAllowed("") {
		t.Error("an empty Host passed")
	}
}

func TestConfigSafety(t *testing.T) {
	tests := []struct {
		cfg  Config
		ok   bool
		name string
	}{
		{Config{}, true, "default loopback"},
		{Config{Host: "localhost"}, true, "localhost"},
		{Config{Host: "::1"}, true, "IPv6 loopback"},
		{Config{Host: "0.0.0.0"}, false, "all interfaces without a token"},
		{Config{Host: "192.0.2.7"}, false, "a LAN address without a token"},
		{Config{Host: "0.0.0.0", AuthToken: "t"}, true, "all interfaces with a token"},
		{Config{Host: "0.0.0.0", AllowNoAuth: true}, true, "told to allow no auth"},
		{Config{AuthToken: "has space"}, false, "token with white space"},
		{Config{Port: 70000}, false, "port out of range"},
	}
	for _, tc := range tests {
		c := tc.cfg
		c.setDefaults()
		err := c.check()
		if (err == nil) != tc.ok {
			t.Errorf("%s: check() = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	if _, err := New(Config{Host: "0.0.0.0", Logger: quietLogger()}, []Program{loadProgram(t, "shapes", &fakeCaller{})}); err == nil || !strings.Contains(err.Error(), "--allow-no-auth") {
		t.Errorf("New on 0.0.0.0 without a token: %v", err)
	}
	for host, want := range map[string]bool{"127.0.0.1": true, "127.8.9.1": true, "localhost": true, "LOCALHOST": true, "::1": true, "[::1]": true,
		"0.0.0.0": false, "::": false, "example.com": false, "10.0.0.1": false, "": false} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestParseAccept(t *testing.T) {
	for h, want := range map[string]accept{
		"":                                     {true, true},
		"application/json, text/event-stream":  {true, true},
		"application/json":                     {true, false},
		"text/event-stream":                    {false, true},
		"*/*":                                  {true, true},
		"application/json;q=0.9, text/html":    {true, false},
		"text/event-stream;q=0, application/*": {true, false},
		"image/png":                            {false, false},
	} {
		if got := parseAccept(h); got != want {
			t.Errorf("parseAccept(%q) = %+v, want %+v", h, got, want)
		}
	}
	if _, err := http.NewRequest("GET", "/", nil); err != nil {
		t.Fatal(err)
	}
}

func TestClientURL(t *testing.T) {
	osHostname = func() (string, error) { return "myhost", nil }
	defer func() { osHostname = os.Hostname }()
	for _, tc := range []struct {
		host string
		want string
	}{
		{"127.0.0.1", "http://127.0.0.1:9000/mcp"},
		{"0.0.0.0", "http://myhost:9000/mcp"},
		{"::", "http://myhost:9000/mcp"},
		{"::1", "http://[::1]:9000/mcp"},
		{"nexus.example.org", "http://nexus.example.org:9000/mcp"},
	} {
		s, err := New(Config{Host: tc.host, Port: 9000, AllowNoAuth: true, Logger: quietLogger()}, []Program{loadProgram(t, "combat", &fakeCaller{})})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ClientURL(); got != tc.want {
			t.Errorf("ClientURL for %s = %s, want %s", tc.host, got, tc.want)
		}
	}
}
