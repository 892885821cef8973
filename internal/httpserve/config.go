package httpserve

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/auth"
	"github.com/nexus-mcp/nexus/internal/metrics"

	"github.com/nexus-mcp/nexus/internal/mcp"
)

// Defaults of Config.
const (
	DefaultHost        = "127.0.0.1"
	DefaultPort        = 9000
	DefaultMaxBody     = 64 << 20 // as docs/spec.md §4.1's line cap on stdio
	DefaultMaxSessions = 1000
	DefaultSessionIdle = 30 * time.Minute
	DefaultGrace       = 30 * time.Second
	DefaultMaxCalls    = 512
)

// Config tunes a Server; zero values take the defaults.
type Config struct {
	// Host and Port to bind. Host defaults to 127.0.0.1 (loopback only);
	// Port 0 picks a free port.
	Host string
	Port int
	// AuthToken, when set, must come with every request except /health and
	// CORS preflights as "Authorization: Bearer <token>".
	AuthToken string
	// OAuth, when set, makes the server an OAuth 2.1 resource server
	// (docs/auth.md): every request except /health, CORS preflights and
	// the protected-resource metadata needs an access token its issuer
	// made for this server, and each tool the scopes its rules say. It
	// excludes AuthToken. Its audience defaults to the server's /mcp URL.
	OAuth *auth.Resource
	// AllowNoAuth permits a non-loopback bind without a token.
	AllowNoAuth bool
	// AllowedOrigins are browser origins ("https://app.example.com") allowed
	// besides loopback ones.
	AllowedOrigins []string
	// AllowedHosts are Host header values (without port) accepted besides
	// loopback names. A loopback bind accepts only loopback names and these;
	// a non-loopback bind accepts any Host unless this list is set.
	AllowedHosts []string
	// MaxBody caps a request body in bytes (default 64 MiB).
	MaxBody int64
	// MaxSessions caps live handshake-era sessions (default 1000).
	MaxSessions int
	// SessionIdle ends a session unused for this long (default 30 min).
	SessionIdle time.Duration
	// MaxCalls bounds the function calls running at once across every
	// client and program; further calls wait for a slot (default 512).
	MaxCalls int
	// ReadHeaderTimeout, ReadTimeout and IdleTimeout bound slow clients
	// (defaults 10s, 5 min, 2 min). There is no write timeout: a tool call
	// may run long.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// Grace is how long in-flight requests may run on at shutdown (default 30s).
	Grace time.Duration
	// TLSCert and TLSKey are PEM files (certificate chain, private key);
	// with both, the server speaks HTTPS (HTTP/1.1 and h2) instead of HTTP.
	TLSCert, TLSKey string
	// HTTP3 serves HTTP/3 (QUIC) too, on the UDP port of the same number,
	// and advertises it to TCP clients with Alt-Svc. It needs TLSCert and TLSKey.
	HTTP3 bool
	// Info is MCP's serverInfo; defaults to the program's own name and
	// version when one program is served, else to "nexus".
	Info mcp.Implementation
	// MCP tunes the shared MCP server (the logger defaults to Logger).
	MCP    mcp.Options
	Logger *slog.Logger
	// Metrics, when set, is served at GET /metrics (behind the same auth as
	// the rest) and counts this server's calls, sessions and requests.
	Metrics *metrics.Metrics
	// NodeID names this server among several behind one load balancer
	// (docs/deploy.md, "Scale-out behind nginx"): the session ids it mints
	// start with "<NodeID>." so the balancer can send a session's requests
	// to the node that holds it, and every response carries it in a
	// Nexus-Node header. Letters, digits, '-' and '_'; empty for none.
	NodeID string
}

func (c *Config) setDefaults() {
	if c.Host == "" {
		c.Host = DefaultHost
	}
	positiveOr(&c.MaxBody, DefaultMaxBody)
	positiveOr(&c.MaxSessions, DefaultMaxSessions)
	positiveOr(&c.SessionIdle, DefaultSessionIdle)
	positiveOr(&c.MaxCalls, DefaultMaxCalls)
	positiveOr(&c.ReadHeaderTimeout, 10*time.Second)
	positiveOr(&c.ReadTimeout, 5*time.Minute)
	positiveOr(&c.IdleTimeout, 2*time.Minute)
	positiveOr(&c.Grace, DefaultGrace)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MCP.Logger == nil {
		c.MCP.Logger = c.Logger
	}
}

// positiveOr sets *v to d unless it is positive: zero (and a negative
// value, which no cap or timeout means) is "the default".
func positiveOr[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// ErrNeedsToken refuses a non-loopback bind without a token (docs/spec.md
// §5).
var ErrNeedsToken = errors.New("refusing to serve on a non-loopback address without --auth-token (or NEXUS_AUTH_TOKEN) or --auth-issuer; pass --allow-no-auth to do it anyway")

// ErrTokenAndIssuer refuses a static token beside OAuth: a token that
// no issuer made would bypass the audience, expiry and scope checks, and
// own its tasks apart from any subject.
var ErrTokenAndIssuer = errors.New("--auth-token (or NEXUS_AUTH_TOKEN) and --auth-issuer exclude each other: with an issuer, every client signs in through it (a script can use a client_credentials token; docs/auth.md)")

// check refuses an unsafe configuration.
func (c *Config) check() error {
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("port %d out of range", c.Port)
	}
	if !IsLoopback(c.Host) && c.AuthToken == "" && c.OAuth == nil && !c.AllowNoAuth {
		return fmt.Errorf("host %s: %w", c.Host, ErrNeedsToken)
	}
	if c.AuthToken != "" && c.OAuth != nil {
		return ErrTokenAndIssuer
	}
	if strings.ContainsAny(c.AuthToken, " \t\r\n") {
		return errors.New("the auth token must not contain white space")
	}
	if err := checkNodeID(c.NodeID); err != nil {
		return err
	}
	return c.checkTLS()
}

// maxNodeID bounds a node id: it prefixes every session id.
const maxNodeID = 32

// checkNodeID accepts what a load balancer can match in a session id
// without escaping, and an MCP session id may hold (visible ASCII).
func checkNodeID(id string) error {
	if len(id) > maxNodeID {
		return fmt.Errorf("node id %q: longer than %d characters", id, maxNodeID)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("node id %q: %q is not allowed (use letters, digits, '-' and '_')", id, r)
		}
	}
	return nil
}

// IsLoopback reports whether host (a name or an IP, without port) only
// reaches this machine.
func IsLoopback(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
