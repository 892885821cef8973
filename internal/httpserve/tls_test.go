package httpserve

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/nexus-mcp/nexus/internal/testcert"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// tlsServer is a Server serving the shapes program (through a fakeCaller)
// over HTTPS, and HTTP/3 when asked, on a real port.
type tlsServer struct {
	base   string // https://127.0.0.1:PORT
	port   string
	tcp    *http.Client // HTTPS over TCP (h2), trusting the test certificate
	h3     *http.Client // HTTP/3
	h3tr   *http3.Transport
	pool   *x509.CertPool // trusts the server's certificate
	fc     *fakeCaller
	stop   context.CancelFunc
	served chan error
}

// startTLS serves with cfg plus a fresh self-signed certificate.
func startTLS(t *testing.T, cfg Config) *tlsServer {
	t.Helper()
	cert := testcert.New(t)
	cfg.TLSCert, cfg.TLSKey = cert.Cert, cert.Key
	cfg.Logger = quietLogger()
	fc := &fakeCaller{began: make(chan string, 1)}
	s, err := New(cfg, []Program{loadProgram(t, "shapes", fc)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ts := &tlsServer{fc: fc, stop: stop, served: make(chan error, 1), pool: cert.Pool}
	go func() { ts.served <- s.Serve(ctx, ln) }()
	_, ts.port, _ = net.SplitHostPort(ln.Addr().String())
	ts.base = "https://" + ln.Addr().String()
	tlsConf := &tls.Config{RootCAs: cert.Pool}
	tcpTr := &http.Transport{TLSClientConfig: tlsConf, ForceAttemptHTTP2: true}
	ts.tcp = &http.Client{Transport: tcpTr}
	ts.h3tr = &http3.Transport{TLSClientConfig: tlsConf, QUICConfig: &quic.Config{}}
	ts.h3 = &http.Client{Transport: ts.h3tr}
	t.Cleanup(func() {
		stop()
		tcpTr.CloseIdleConnections()
		ts.h3tr.Close()
		select {
		case <-ts.served:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after shutdown")
		}
	})
	return ts
}

func send(t *testing.T, c *http.Client, method, url, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(request(t, method, url, body, plus([]string{"Content-Type", "application/json", "Accept", mcpAccept}, headers...)...))
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// Half a TLS setup, or a file that is no certificate, is refused by New
// with a message naming the flags.
func TestTLSConfigRefused(t *testing.T) {
	cert := testcert.New(t)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // in the error; "" for none
	}{
		{"cert and key", Config{TLSCert: cert.Cert, TLSKey: cert.Key}, ""},
		{"HTTP/3", Config{TLSCert: cert.Cert, TLSKey: cert.Key, HTTP3: true}, ""},
		{"cert without key", Config{TLSCert: cert.Cert}, "--tls-cert needs --tls-key"},
		{"key without cert", Config{TLSKey: cert.Key}, "--tls-key needs --tls-cert"},
		{"HTTP/3 without TLS", Config{HTTP3: true}, "--http3 needs --tls-cert and --tls-key"},
		{"missing file", Config{TLSCert: cert.Cert + ".gone", TLSKey: cert.Key}, "no such file"},
		{"not PEM", Config{TLSCert: garbage, TLSKey: cert.Key}, "--tls-cert " + garbage},
		{"key of another certificate", Config{TLSCert: cert.Cert, TLSKey: testcert.New(t).Key}, "private key does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logger = quietLogger()
			_, err := New(tc.cfg, []Program{loadProgram(t, "shapes", &fakeCaller{})})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("New: %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("New: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// With HTTP3 the same endpoints answer over QUIC and over HTTPS on TCP,
// the TCP side announcing the QUIC one with Alt-Svc; the guard holds on both.
func TestHTTP3(t *testing.T) {
	srv := startTLS(t, Config{HTTP3: true, AuthToken: "s3cret", MaxBody: 1024})
	auth := []string{"Authorization", "Bearer s3cret"}
	wantAltSvc := `h3=":` + srv.port + `"; ma=2592000`
	for _, tr := range []struct {
		name   string
		client *http.Client
		proto  int // HTTP major version
		altSvc string
	}{
		{"HTTP/3", srv.h3, 3, ""},
		{"HTTPS over TCP", srv.tcp, 2, wantAltSvc},
	} {
		t.Run(tr.name, func(t *testing.T) {
			for _, tc := range []reqCase{
				{"call", "POST", "/call/shapes/addInt", "[41]", auth, 200, `"result":42`},
				{"stateless tools/call", "POST", "/mcp", statelessBody(1, "tools/call", `"name":"addInt","arguments":{"_1":1}`),
					append([]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "addInt"}, auth...), 200, `"text":"2"`},
				{"discover", "GET", "/discover", "", auth, 200, `"shapes"`},
				{"health without token", "GET", "/health", "", nil, 200, `"ok"`},
				{"no token", "POST", "/call/shapes/addInt", "[1]", nil, 401, "unauthorized"},
				{"bad token", "POST", "/mcp", initBody, []string{"Authorization", "Bearer nope"}, 401, "unauthorized"},
				{"foreign origin", "POST", "/mcp", initBody, append([]string{"Origin", "http://evil.example.com"}, auth...), 403, "Origin"},
				{"oversize body", "POST", "/call/shapes/addInt", "[" + strings.Repeat(" ", 2000) + "1]", auth, 413, ""},
			} {
				resp, body := send(t, tr.client, tc.method, srv.base+tc.path, tc.body, tc.headers...)
				if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
					t.Errorf("%s: %d %s, want %d with %q", tc.name, resp.StatusCode, body, tc.status, tc.want)
				}
				if resp.ProtoMajor != tr.proto {
					t.Errorf("%s: answered over %s, want HTTP/%d", tc.name, resp.Proto, tr.proto)
				}
				if got := resp.Header.Get("Alt-Svc"); got != tr.altSvc {
					t.Errorf("%s: Alt-Svc %q, want %q", tc.name, got, tr.altSvc)
				}
			}
		})
	}
}

// A call that reports progress streams over HTTP/3 as over TCP: the first
// event arrives while the call still runs (each event is flushed).
func TestHTTP3StreamsProgress(t *testing.T) {
	srv := startTLS(t, Config{HTTP3: true})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleepMs","arguments":{"_1":1000},` +
		`"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	resp, err := srv.h3.Do(request(t, "POST", srv.base+"/mcp", body, "Content-Type", "application/json", "Accept", mcpAccept,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "sleepMs"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("%d %s, want 200 text/event-stream", resp.StatusCode, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var first, last time.Time
	var lines []string
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			if first.IsZero() {
				first = time.Now()
			}
			last = time.Now()
			lines = append(lines, sc.Text())
		}
	}
	// The call sleeps a second, reporting progress as it goes: streamed,
	// the first event comes about that second before the result; held
	// back, they come together. Measured between events, not from the
	// request, so that a slow handshake on a loaded machine cannot fail it.
	if gap := last.Sub(first); gap < 500*time.Millisecond {
		t.Errorf("first event %v before the result: events are held back until the call ends", gap)
	}
	if len(lines) != 11 || !strings.Contains(lines[0], "notifications/progress") || !strings.Contains(lines[10], `"text":"1000"`) {
		t.Errorf("%d events, want 10 progress notifications and the result: %v", len(lines), lines)
	}
}

// A call longer than the QUIC idle timeout the client asks for survives:
// the server's keep-alive PINGs fill the silence.
// (quic-go takes a peer's idle timeout as 5 s at least, hence a 6 s call.)
func TestHTTP3LongCallKeepsConnection(t *testing.T) {
	testenv.Long(t)
	srv := startTLS(t, Config{HTTP3: true})
	srv.h3tr.QUICConfig.MaxIdleTimeout = 5 * time.Second
	resp, body := send(t, srv.h3, "POST", srv.base+"/call/shapes/sleepMs", "[6000]")
	if resp.StatusCode != 200 || !strings.Contains(body, `"result":6000`) {
		t.Errorf("%d %s, want the result", resp.StatusCode, body)
	}
}

// SIGTERM's path over QUIC: a call in flight finishes within the grace
// period and is answered, one that outlives it is cancelled; a QUIC
// connection that stays open after GOAWAY does not hold shutdown.
func TestHTTP3GracefulShutdown(t *testing.T) {
	testenv.Long(t)
	for _, tc := range []struct {
		name      string
		grace     time.Duration
		callMs    string
		answered  bool
		cancelled bool
	}{
		{"finishes within grace", 20 * time.Second, "800", true, false},
		{"cancelled after grace", 300 * time.Millisecond, "5000", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startTLS(t, Config{HTTP3: true, Grace: tc.grace})
			// A bare QUIC connection: it never closes on GOAWAY.
			idle, err := quic.DialAddr(context.Background(), strings.TrimPrefix(srv.base, "https://"),
				&tls.Config{RootCAs: srv.pool, NextProtos: []string{http3.NextProtoH3}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer idle.CloseWithError(0, "")
			got := make(chan string, 1)
			go func() {
				req, _ := http.NewRequest("POST", srv.base+"/call/shapes/sleepMs", strings.NewReader("["+tc.callMs+"]"))
				resp, err := srv.h3.Do(req)
				if err != nil {
					got <- err.Error()
					return
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				got <- string(b)
			}()
			srv.fc.waitBegan(t) // the call is running
			start := time.Now()
			srv.stop()
			srv.served <- waitServed(t, srv.served, 10*time.Second, "Serve did not return") // again, for the cleanup
			// Held by the idle QUIC connection, shutdown would take the whole
			// grace; a loaded machine may take a few seconds more than the
			// call and the linger, not the 20s.
			if took := time.Since(start); tc.grace > 10*time.Second && took > tc.grace/2 {
				t.Errorf("shutdown took %v: the idle QUIC connection held it", took)
			}
			body := <-got
			if answered := strings.Contains(body, `"result":`+tc.callMs); answered != tc.answered {
				t.Errorf("answered = %v (%s), want %v", answered, body, tc.answered)
			}
			if cancelled := len(srv.fc.cancelledCalls()) > 0; cancelled != tc.cancelled {
				t.Errorf("cancelled = %v, want %v", cancelled, tc.cancelled)
			}
		})
	}
}

// TLS without HTTP3 is plain HTTPS: h2 and HTTP/1.1, no Alt-Svc, and no
// plain HTTP on that port.
func TestHTTPSWithoutHTTP3(t *testing.T) {
	srv := startTLS(t, Config{})
	resp, body := send(t, srv.tcp, "POST", srv.base+"/call/shapes/addInt", "[1]")
	if resp.StatusCode != 200 || !strings.Contains(body, `"result":2`) || resp.ProtoMajor != 2 {
		t.Errorf("%s %d %s, want HTTP/2 200 with the result", resp.Proto, resp.StatusCode, body)
	}
	if a := resp.Header.Get("Alt-Svc"); a != "" {
		t.Errorf("Alt-Svc %q without HTTP/3", a)
	}
	plain, _ := send(t, http.DefaultClient, "GET", "http"+strings.TrimPrefix(srv.base, "https")+"/health", "")
	if plain.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP on the HTTPS port: %d, want 400", plain.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.base+"/health", nil)
	if _, err := srv.h3.Do(req); err == nil {
		t.Error("HTTP/3 answered without --http3")
	}
}

// The client URL says https when the server speaks TLS.
func TestClientURLTLS(t *testing.T) {
	cert := testcert.New(t)
	s, err := New(Config{Port: 9443, TLSCert: cert.Cert, TLSKey: cert.Key, HTTP3: true, Logger: quietLogger()}, []Program{loadProgram(t, "shapes", &fakeCaller{})})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.ClientURL(), "https://127.0.0.1:9443/mcp"; got != want {
		t.Errorf("ClientURL %s, want %s", got, want)
	}
}
