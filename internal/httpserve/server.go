package httpserve

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/generation"
	"github.com/nexus-mcp/nexus/internal/mcp"
)

// Server serves one or more programs over HTTP: MCP at /mcp and the plain
// JSON API beside it.
type Server struct {
	cfg Config
	// served holds the programs; Reload swaps them (reload.go).
	served   *generation.Cell[served]
	slots    chan struct{} // MaxCalls, shared by every program and generation
	mcp      *mcp.Server
	sessions *sessionStore
	log      *slog.Logger
	handler  http.Handler
	tls      *tls.Config    // nil: plain HTTP
	inflight sync.WaitGroup // requests being handled, for a hard stop
	conns    connCount      // open connections, for a drain
	node     []string       // the Nexus-Node header's value, or nil
	closing  chan struct{}  // closed when the drain begins: GET streams end
	closeOne sync.Once
	signin   *pageSignIn // with OAuth: the browser page's sign-in (signin.go)
}

// New builds a server for programs. With several programs, their tools are
// renamed <module>__<command> in place. It refuses an unsafe Config (a
// non-loopback host without a token, unless AllowNoAuth).
func New(cfg Config, programs []Program) (*Server, error) {
	cfg.setDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	tlsConf, err := cfg.loadTLS()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		slots:    make(chan struct{}, cfg.MaxCalls),
		sessions: newSessionStore(cfg.MaxSessions, cfg.SessionIdle, cfg.NodeID),
		log:      cfg.Logger,
		tls:      tlsConf,
		closing:  make(chan struct{}),
	}
	first, err := s.build(programs)
	if err != nil {
		return nil, err
	}
	s.served = generation.NewCell(first)
	s.useToolScopes(first)
	if m := cfg.Metrics; m != nil {
		cfg.MCP.OnCall = func(tool string, outcome mcp.Outcome, took time.Duration) {
			o := s.served.Load().Value.owners[tool]
			m.Call(o.program, o.command, string(outcome), took)
		}
	}
	s.mcp = mcp.NewServerFor(s.surface(s.info(first), first), cfg.MCP)
	if cfg.NodeID != "" {
		s.node = []string{cfg.NodeID}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", s.serveMCP)
	mux.HandleFunc("/call/", s.serveCall)
	mux.HandleFunc("/discover", s.serveDiscover)
	mux.HandleFunc("/discover/", s.serveDiscover)
	mux.HandleFunc("/health", s.serveHealth)
	s.routeOAuth(mux)
	if cfg.Metrics != nil {
		mux.Handle("/metrics", cfg.Metrics.Handler())
		cfg.Metrics.Sessions(s.sessions.count)
	}
	mux.HandleFunc("/{$}", s.servePage) // the browser page (page.go)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "not found: %s (endpoints: /mcp, /call/<module>/<command>, /discover, /health)", r.URL.Path)
	})
	g := &guard{loopbackBind: IsLoopback(cfg.Host), oauth: cfg.OAuth, signin: s.signin, log: cfg.Logger, metrics: cfg.Metrics, next: mux, onFault: fault}
	for _, h := range cfg.AllowedHosts {
		g.hosts = append(g.hosts, strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")))
	}
	g.origins = append(g.origins, cfg.AllowedOrigins...)
	if cfg.AuthToken != "" {
		sum := sha256.Sum256([]byte(cfg.AuthToken))
		g.tokenHash = &sum
	}
	s.handler = s.track(g)
	return s, nil
}

// fault answers a request the guard refused, in the shape its endpoint speaks.
func fault(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if r.URL.Path == "/mcp" {
		writeRPCError(w, status, nil, mcp.CodeInvalidRequest, msg)
		return
	}
	askBrowser(w, r, status) // page.go
	apiError(w, status, "%s", msg)
}

// Handler is the whole HTTP surface, guard included.
func (s *Server) Handler() http.Handler { return s.handler }

// Addr is the host:port the server binds.
func (s *Server) Addr() string {
	return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(s.cfg.Host, "["), "]"), strconv.Itoa(s.cfg.Port))
}

// Listen binds the configured address: its TCP port, and with HTTP3 the
// UDP port of the same number.
func (s *Server) Listen() (net.Listener, error) {
	if s.cfg.HTTP3 {
		return s.listenDual()
	}
	ln, err := net.Listen("tcp", s.Addr())
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.Addr(), err)
	}
	return ln, nil
}

// Serve answers requests on ln until ctx ends, then drains (drain.go): it
// stops accepting at once, lets requests in flight finish within Grace,
// then cancels what still runs (which cancels those calls in their pools)
// and ends every session. The pools are the caller's to stop afterwards.
// With TLS it serves HTTPS on ln, and with HTTP3 also QUIC on the UDP port
// of ln's number (bound by Listen, or here), under the same handler chain.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	base, hardStop := context.WithCancel(context.Background())
	defer hardStop()
	if s.cfg.OAuth != nil {
		s.cfg.OAuth.SetDefaultAudience(s.URL(ln)) // tokens are for this /mcp unless --auth-audience says
		s.prepareSignIn(ctx, s.URL(ln))
	}
	q, err := s.startQUIC(ln)
	if err != nil {
		return err
	}
	tcpHandler := s.handler
	if q != nil {
		tcpHandler = q.advertise(s.handler)
	}
	hs := &http.Server{
		Handler:           tcpHandler,
		TLSConfig:         s.tls,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		ConnState:         s.conns.track,
	}
	servers := 1
	if q != nil {
		servers = 2
	}
	served := make(chan error, servers)
	go func() {
		if hs.TLSConfig != nil {
			served <- hs.ServeTLS(ln, "", "") // HTTP/1.1 and h2
			return
		}
		served <- hs.Serve(ln)
	}()
	if q != nil {
		go func() { served <- q.serve() }()
	}

	sweep := time.NewTicker(min(s.cfg.SessionIdle/2, time.Minute))
	defer sweep.Stop()
	for {
		select {
		case err := <-served:
			return fmt.Errorf("http server: %w", err)
		case <-sweep.C:
			s.sessions.sweep()
			continue
		case <-ctx.Done():
		}
		break
	}
	graceCtx, cancel := context.WithTimeout(context.Background(), s.cfg.Grace)
	defer cancel()
	if q != nil {
		q.shutdown(graceCtx) // GOAWAY: QUIC clients send no new requests
	}
	graceOver := s.drain(hs, ln, hardStop)
	if q != nil {
		// The drain waited for TCP only; idle QUIC connections are not
		// waited for, their requests are.
		if graceOver || q.wait(graceCtx) != nil {
			hardStop()
			go q.close() // ends QUIC requests' contexts; waits for their handlers
		} else {
			q.linger(graceCtx) // the last responses still travel
			q.close()
		}
	}
	s.sessions.closeAll()
	s.mcp.CloseTasks() // no client could fetch what they would return
	for range servers {
		<-served // each ends with the error of what the drain (or q.close) stopped under it
	}
	return nil
}

// track counts requests in flight and logs each at debug level (method,
// path, status, time: never a header, so never a token).
func (s *Server) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Done()
		if s.node != nil {
			w.Header()[hdrNode] = s.node // shared, never appended to: no allocation
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK // nothing written: net/http sends 200
		}
		s.cfg.Metrics.Request(rec.status)
		s.log.Debug("http", "method", r.Method, "path", r.URL.Path, "status", rec.status, "took", time.Since(start))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// readLimited reads a request body of at most max bytes.
func readLimited(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}

// URL is the MCP endpoint's address for clients once ln is bound.
func URL(ln net.Listener) string {
	host, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return "http://" + ln.Addr().String() + "/mcp"
	}
	return endpointURL("http", host, port)
}

// ClientURL is the MCP endpoint's address for clients, from the
// configuration alone (nothing is bound).
func (s *Server) ClientURL() string {
	return endpointURL(s.scheme(), strings.TrimSuffix(strings.TrimPrefix(s.cfg.Host, "["), "]"), strconv.Itoa(s.cfg.Port))
}

// endpointURL names scheme://host:port/mcp, with a wildcard host replaced
// by this machine's name (a client cannot connect to 0.0.0.0).
func endpointURL(scheme, host, port string) string {
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := osHostname(); err == nil && name != "" {
			host = name
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/mcp"
}

var osHostname = os.Hostname
