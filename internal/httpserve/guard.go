package httpserve

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/auth"
	"github.com/nexus-mcp/nexus/internal/metrics"
)

// corsAllowHeaders are the request headers a browser client may send.
const corsAllowHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID"

// guard applies what every request must pass before a handler sees it:
// DNS-rebinding protection (Host and Origin, 403), CORS preflights
// (answered here, without auth), and the credentials (oauth.go: the static
// bearer token, or an OAuth access token; 400, 401 or 403). /health is
// open to all: probes need no secret and learn nothing from it.
type guard struct {
	loopbackBind bool
	hosts        []string // lower-case extra Host names
	origins      []string // extra origins, as written
	tokenHash    *[sha256.Size]byte
	oauth        *auth.Resource // set: access tokens in place of tokenHash
	signin       *pageSignIn    // with oauth: the page's session cookie (signin.go)
	log          *slog.Logger
	metrics      *metrics.Metrics
	next         http.Handler
	onFault      func(w http.ResponseWriter, r *http.Request, status int, msg string)
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/health" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		g.next.ServeHTTP(w, r)
		return
	}
	if !g.hostAllowed(r.Host) {
		g.onFault(w, r, http.StatusForbidden, "forbidden: Host "+quoteHeader(r.Host)+" is not allowed")
		return
	}
	origin := r.Header.Get("Origin")
	if origin != "" {
		if !g.originAllowed(origin) && !g.sameOrigin(r, origin) {
			g.onFault(w, r, http.StatusForbidden, "forbidden: Origin "+quoteHeader(origin)+" is not allowed")
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate")
	}
	if r.Method == http.MethodOptions {
		// A CORS preflight carries no credentials by design.
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	r, ok := g.authenticate(w, r)
	if !ok {
		return
	}
	g.next.ServeHTTP(w, r)
}

// authorized compares the token (page.go's credential: a bearer token, or
// the page's Basic password) in constant time. Both sides are
// hashed first so that neither the content nor the length leaks.
func (g *guard) authorized(r *http.Request) bool {
	if g.tokenHash == nil {
		return true
	}
	token, ok := credential(r.Header.Get("Authorization"))
	if !ok {
		return false
	}
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], g.tokenHash[:]) == 1
}

// hostAllowed checks the Host header: a loopback server answers only to
// loopback names (a DNS-rebinding attack arrives with the attacker's name).
func (g *guard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "" {
		return false
	}
	if IsLoopback(host) || slices.Contains(g.hosts, host) {
		return true
	}
	return !g.loopbackBind && len(g.hosts) == 0
}

// originAllowed accepts loopback origins and the configured ones.
func (g *guard) originAllowed(origin string) bool {
	if slices.Contains(g.origins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return IsLoopback(u.Hostname())
}

// quoteHeader shows a client-supplied value in a message, shortened.
func quoteHeader(v string) string {
	if len(v) > 100 {
		v = v[:100] + "..."
	}
	return "'" + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, v) + "'"
}
