package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/nexus-mcp/nexus/internal/testcert"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// h3Request is one request of the HTTP/3 tests, sent as is over each transport.
type h3Request struct {
	name    string
	method  string
	path    string
	body    string
	headers []string // name, value, ...
	status  int
	want    string // in the body
}

// do sends r with c to base, and returns the response with its body read.
func (r h3Request) do(t *testing.T, c *http.Client, base string) (*http.Response, string) {
	t.Helper()
	resp, b, err := exchange(context.Background(), c, r.method, base+r.path, r.body, append([]string{"Accept", mcpAccept}, r.headers...)...)
	if err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	return resp, b
}

// `nexus serve --http3` with real Python pools (docs/deploy.md, "HTTP/3"): a
// quic-go client drives /call and stateless MCP tools/call (a streamed one
// too) over HTTP/3, trusting a certificate made here; the same requests over
// HTTPS on TCP carry Alt-Svc; the guards refuse alike on both; SIGTERM ends
// it all, pools included.
func TestHTTP3(t *testing.T) {
	testenv.Long(t) // the fast tier has the unit tests of this path
	testenv.NeedPython(t)
	cert := testcert.New(t)
	srv := startHTTP(t, []string{"NEXUS_AUTH_TOKEN=e2e-h3-token"}, "serve", "--port", "0", "--max-body", "2048",
		"--http3", "--tls-cert", cert.Cert, "--tls-key", cert.Key, program("shapes"), program("everything"))
	if !strings.HasPrefix(srv.base, "https://") {
		t.Fatalf("listening on %s, want https", srv.base)
	}
	u, _ := url.Parse(srv.base)
	wantAltSvc := `h3=":` + u.Port() + `"; ma=2592000`

	tlsConf := &tls.Config{RootCAs: cert.Pool}
	h3 := &http3.Transport{TLSClientConfig: tlsConf.Clone()}
	defer h3.Close()
	tcp := &http.Transport{TLSClientConfig: tlsConf.Clone(), ForceAttemptHTTP2: true}
	defer tcp.CloseIdleConnections()

	auth := []string{"Authorization", "Bearer e2e-h3-token"}
	requests := []h3Request{
		{"call", "POST", "/call/shapes/addInt", "[41]", auth, 200, `{"status":"ok","result":42}`},
		{"stateless tools/call", "POST", "/mcp", statelessCallBody(1, "shapes__addInt", `{"_1":41}`, ""), statelessHeaders("shapes__addInt", auth...), 200, `"text":"42"`},
		{"discover", "GET", "/discover/shapes", "", auth, 200, `"addInt"`},
		{"metrics", "GET", "/metrics", "", auth, 200, "nexus_http_requests_total"},
		{"health without token", "GET", "/health", "", nil, 200, `"ok"`},
		{"call without token", "POST", "/call/shapes/addInt", "[1]", nil, 401, "unauthorized"},
		{"bad token", "POST", "/mcp", statelessCallBody(1, "shapes__addInt", `{"_1":1}`, ""), []string{"Authorization", "Bearer wrong"}, 401, "unauthorized"},
		{"foreign origin", "POST", "/call/shapes/addInt", "[1]", append([]string{"Origin", "https://evil.example.com"}, auth...), 403, "Origin"},
		{"oversize body", "POST", "/call/shapes/addInt", "[" + strings.Repeat(" ", 3000) + "1]", auth, 413, `"status":"error"`},
	}
	for _, tr := range []struct {
		name   string
		client *http.Client
		proto  string
		altSvc string
	}{
		{"HTTP/3", &http.Client{Transport: h3}, "HTTP/3.0", ""},
		{"HTTPS over TCP", &http.Client{Transport: tcp}, "HTTP/2.0", wantAltSvc},
	} {
		t.Run(tr.name, func(t *testing.T) {
			for _, r := range requests {
				resp, body := r.do(t, tr.client, srv.base)
				if resp.StatusCode != r.status || !strings.Contains(body, r.want) {
					t.Errorf("%s: %d %s, want %d with %q", r.name, resp.StatusCode, body, r.status, r.want)
				}
				if resp.Proto != tr.proto {
					t.Errorf("%s: answered over %s, want %s", r.name, resp.Proto, tr.proto)
				}
				if got := resp.Header.Get("Alt-Svc"); got != tr.altSvc {
					t.Errorf("%s: Alt-Svc %q, want %q", r.name, got, tr.altSvc)
				}
				if r.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s: 401 without WWW-Authenticate", r.name)
				}
			}
		})
	}

	// Progress streams over HTTP/3: each event arrives as it is sent.
	t.Run("SSE over HTTP/3", func(t *testing.T) {
		req, err := jsonRequest(context.Background(), http.MethodPost, srv.url, statelessCallBody(1, "everything__slow_count", `{"_1":3,"_2":400}`, `"progressToken":"p",`),
			statelessHeaders("everything__slow_count", append([]string{"Accept", mcpAccept}, auth...)...)...)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := (&http.Client{Transport: h3}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.Proto != "HTTP/3.0" || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%s %s, want an HTTP/3 event stream", resp.Proto, resp.Header.Get("Content-Type"))
		}
		var events []map[string]any
		var firstAt time.Duration
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if firstAt == 0 {
				firstAt = time.Since(start)
			}
			var e map[string]any
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			events = append(events, e)
		}
		if len(events) != 4 || events[0]["method"] != "notifications/progress" || events[3]["result"] == nil {
			t.Fatalf("events %v, want three progress notifications then the result", events)
		}
		if total := time.Since(start); firstAt > total-500*time.Millisecond {
			t.Errorf("first event after %v of %v: events were held back", firstAt, total)
		}
	})

	pools := descendants(srv.cmd.Process.Pid)
	if len(pools) == 0 {
		t.Fatal("no pool process under nexus")
	}
	srv.stop()
	if srv.exit != nil {
		t.Errorf("exit after SIGTERM: %v, want 0\n%s", srv.exit, srv.stderr.String())
	}
	waitGone(t, pools)
}

// --tls-cert and --tls-key without --http3: plain HTTPS (h2 and HTTP/1.1),
// no Alt-Svc, no QUIC; --mcp-config gives the https URL.
func TestHTTPS(t *testing.T) {
	testenv.NeedPython(t)
	cert := testcert.New(t)
	tlsFlags := []string{"--tls-cert", cert.Cert, "--tls-key", cert.Key}
	srv := startHTTP(t, nil, append([]string{"serve", "--port", "0", program("shapes")}, tlsFlags...)...)
	tlsConf := &tls.Config{RootCAs: cert.Pool}
	for _, tc := range []struct {
		name  string
		tr    *http.Transport
		proto string
	}{
		// (Each transport its own config: an h2 one adds "h2" to it in place.)
		{"h2", &http.Transport{TLSClientConfig: tlsConf.Clone(), ForceAttemptHTTP2: true}, "HTTP/2.0"},
		{"HTTP/1.1", &http.Transport{TLSClientConfig: tlsConf.Clone()}, "HTTP/1.1"}, // a custom TLSClientConfig turns h2 off
	} {
		r := h3Request{tc.name, "POST", "/call/shapes/addInt", "[1]", nil, 200, `"result":2`}
		resp, body := r.do(t, &http.Client{Transport: tc.tr}, srv.base)
		if resp.StatusCode != 200 || !strings.Contains(body, r.want) || resp.Proto != tc.proto {
			t.Errorf("%s: %s %d %s, want %s 200 with the result", tc.name, resp.Proto, resp.StatusCode, body, tc.proto)
		}
		if a := resp.Header.Get("Alt-Svc"); a != "" {
			t.Errorf("%s: Alt-Svc %q without --http3", tc.name, a)
		}
		tc.tr.CloseIdleConnections()
	}
	h3 := &http3.Transport{TLSClientConfig: tlsConf.Clone()}
	defer h3.Close()
	req, _ := http.NewRequest("GET", srv.base+"/health", nil)
	done := make(chan error, 1)
	go func() { _, err := h3.RoundTrip(req); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("HTTP/3 answered without --http3")
		}
	case <-time.After(500 * time.Millisecond): // no answer either: right
	}

	out, err := exec.Command(nexusBin, append([]string{"serve", "--port", "9443", "--mcp-config", program("shapes")}, tlsFlags...)...).Output()
	if err != nil || !strings.Contains(string(out), `"url": "https://127.0.0.1:9443/mcp"`) {
		t.Errorf("--mcp-config with TLS: %v\n%s", err, out)
	}
}

// Half a TLS setup is a usage error (exit 2) that names what is missing.
func TestHTTP3Usage(t *testing.T) {
	cert := testcert.New(t)
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"--http3 alone", []string{"--http3"}, "--http3 needs --tls-cert and --tls-key"},
		{"--http3 with a certificate only", []string{"--http3", "--tls-cert", cert.Cert}, "--tls-cert needs --tls-key"},
		{"a certificate only", []string{"--tls-cert", cert.Cert}, "--tls-cert needs --tls-key"},
		{"a key only", []string{"--tls-key", cert.Key}, "--tls-key needs --tls-cert"},
		{"a missing certificate", []string{"--tls-cert", cert.Cert + ".gone", "--tls-key", cert.Key}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(nexusBin, append([]string{"serve", "--port", "0", program("pure")}, tc.flags...)...).CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Errorf("exit %v, want status 2 (usage)", err)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output %q, want %q in it", out, tc.want)
			}
		})
	}
}
