package httpserve

import (
	"context"
	"crypto/sha256"
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

	"github.com/nexus-mcp/nexus/internal/mcp"
)

// Server serves one or more programs over HTTP: MCP at /mcp and the plain
// JSON API beside it.
type Server struct {
	cfg      Config
	programs []*program
	byModule map[string]*program
	mcp      *mcp.Server
	sessions *sessionStore
	log      *slog.Logger
	handler  http.Handler
	inflight sync.WaitGroup // requests being handled, for a hard stop
	conns    connCount      // open connections, for a drain
	node     []string       // the Nexus-Node header's value, or nil
	closing  chan struct{}  // closed when the drain begins: GET streams end
	closeOne sync.Once
}

// New builds a server for programs. With several programs, their tools are
// renamed <module>__<command> in place. It refuses an unsafe Config (a
// non-loopback host without a token, unless AllowNoAuth).
func New(cfg Config, programs []Program) (*Server, error) {
	cfg.setDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	progs, err := prepare(programs, cfg.MaxCalls)
	if err != nil {
		return nil, err
	}
	if m := cfg.Metrics; m != nil {
		owners := toolOwners(progs)
		cfg.MCP.OnCall = func(tool string, outcome mcp.Outcome, took time.Duration) {
			o := owners[tool]
			m.Call(o.program, o.command, string(outcome), took)
		}
		for _, p := range progs {
			p.Caller = countingCaller{next: p.Caller, program: p.name, metrics: m}
		}
	}
	info := cfg.Info
	if info.Name == "" {
		if len(progs) == 1 {
			info = mcp.Implementation{Name: progs[0].name, Version: progs[0].Manifest.Version()}
		} else {
			info = mcp.Implementation{Name: "nexus", Version: "0.0.0"}
		}
	}
	s := &Server{
		cfg:      cfg,
		programs: progs,
		byModule: map[string]*program{},
		mcp:      mcp.NewServer(info, allTools(progs), newRoutingCaller(progs), cfg.MCP),
		sessions: newSessionStore(cfg.MaxSessions, cfg.SessionIdle, cfg.NodeID),
		log:      cfg.Logger,
		closing:  make(chan struct{}),
	}
	for _, p := range progs {
		s.byModule[p.name] = p
	}
	if cfg.NodeID != "" {
		s.node = []string{cfg.NodeID}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", s.serveMCP)
	mux.HandleFunc("/call/", s.serveCall)
	mux.HandleFunc("/discover", s.serveDiscover)
	mux.HandleFunc("/discover/", s.serveDiscover)
	mux.HandleFunc("/health", s.serveHealth)
	if cfg.Metrics != nil {
		mux.Handle("/metrics", cfg.Metrics.Handler())
		cfg.Metrics.Sessions(s.sessions.count)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "not found: %s (endpoints: /mcp, /call/<module>/<command>, /discover, /health)", r.URL.Path)
	})
	g := &guard{loopbackBind: IsLoopback(cfg.Host), next: mux, onFault: fault}
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
	apiError(w, status, "%s", msg)
}

// Handler is the whole HTTP surface, guard included.
func (s *Server) Handler() http.Handler { return s.handler }

// Addr is the host:port the server binds.
func (s *Server) Addr() string {
	return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(s.cfg.Host, "["), "]"), strconv.Itoa(s.cfg.Port))
}

// Listen binds the configured address.
func (s *Server) Listen() (net.Listener, error) {
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
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	base, hardStop := context.WithCancel(context.Background())
	defer hardStop()
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		ConnState:         s.conns.track,
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

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
	s.drain(hs, ln, hardStop)
	s.sessions.closeAll()
	<-served // the error of the listener the drain closed
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
	return endpointURL(host, port)
}

// ClientURL is the MCP endpoint's address for clients, from the
// configuration alone (nothing is bound).
func (s *Server) ClientURL() string {
	return endpointURL(strings.TrimSuffix(strings.TrimPrefix(s.cfg.Host, "["), "]"), strconv.Itoa(s.cfg.Port))
}

// endpointURL names host:port/mcp, with a wildcard host replaced by this
// machine's name (a client cannot connect to 0.0.0.0).
func endpointURL(host, port string) string {
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := osHostname(); err == nil && name != "" {
			host = name
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/mcp"
}

var osHostname = os.Hostname
