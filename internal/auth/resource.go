package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Defaults of Config.
const (
	DefaultLeeway     = 30 * time.Second
	DefaultMinRefresh = 10 * time.Second
	// keysMaxAge is how long a fetched key set serves before its next use
	// fetches it again.
	keysMaxAge = time.Hour
)

// Config is what `nexus serve --auth-issuer` is told.
type Config struct {
	// Issuer is the authorization server's issuer identifier, exactly as
	// its tokens' iss says (https; http only on loopback).
	Issuer string
	// Audience is this resource's identifier (RFC 8707): an access token's
	// aud must name it. Empty: the server's own /mcp URL, set once it is
	// known (SetDefaultAudience).
	Audience string
	// Scopes are those every request needs.
	Scopes []string
	// ToolScopes are the scopes each tool needs beyond Scopes, by tool
	// name (--auth-tool-scope); for a tool not named, its command's
	// metadata says (MetadataScopes).
	ToolScopes map[string][]string
	// Introspection, when set, is the RFC 7662 endpoint that checks opaque
	// tokens, as the client IntrospectionClientID with
	// IntrospectionSecret.
	Introspection                              string
	IntrospectionClientID, IntrospectionSecret string
	// Leeway is the clock skew allowed on exp and nbf (default 30s).
	Leeway time.Duration
	// MinRefresh is the least time between two fetches of the issuer's
	// keys that a token with an unknown key id may cause (default 10s).
	MinRefresh time.Duration
	// PageClientID is the OAuth client the browser page signs in as
	// (--auth-page-client), with PageClientSecret when it is confidential.
	// Empty: one registered at start (RFC 7591) when the issuer allows it.
	PageClientID, PageClientSecret string
	// HTTPClient fetches metadata and keys and introspects (default: one
	// with a 10s timeout).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Now is the clock tokens and the page's sessions are checked against
	// (default time.Now); tests move it.
	Now func() time.Time
}

// Resource is this server as an OAuth 2.1 resource server: it checks a
// request's bearer token and answers what a client needs to get one.
type Resource struct {
	issuer        string
	scopes        []string
	toolScopes    map[string][]string
	keys          *keySet // nil: the issuer publishes no keys (introspection only)
	introspection *introspector
	page          *PageSignIn
	leeway        time.Duration
	log           *slog.Logger
	now           func() time.Time

	mu        sync.RWMutex
	audience  string
	supported []string // scopes_supported: Scopes and every tool's
}

// New discovers the issuer's metadata and fetches its keys, so that a
// wrong issuer stops nexus at once rather than at the first request.
func New(ctx context.Context, cfg Config) (*Resource, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("auth: no issuer")
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = DefaultLeeway
	}
	if cfg.MinRefresh <= 0 {
		cfg.MinRefresh = DefaultMinRefresh
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if _, err := checkScopes(cfg.Scopes); err != nil {
		return nil, fmt.Errorf("--auth-scopes: %w", err)
	}
	if cfg.Audience != "" {
		if err := checkAudience(cfg.Audience); err != nil {
			return nil, err
		}
	}
	md, err := discover(ctx, cfg.HTTPClient, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	rs := &Resource{issuer: cfg.Issuer, scopes: slices.Clone(cfg.Scopes), toolScopes: cfg.ToolScopes,
		leeway: cfg.Leeway, log: cfg.Logger, now: cfg.Now, audience: cfg.Audience, supported: slices.Clone(cfg.Scopes)}
	if md.JWKSURI != "" {
		rs.keys = &keySet{url: md.JWKSURI, client: cfg.HTTPClient, log: cfg.Logger, minRefresh: cfg.MinRefresh, maxAge: keysMaxAge, now: cfg.Now}
		if err := rs.keys.refresh(ctx); err != nil {
			return nil, fmt.Errorf("auth: issuer %s: %w", cfg.Issuer, err)
		}
	}
	if cfg.Introspection != "" {
		if err := checkEndpoint(cfg.Introspection); err != nil {
			return nil, fmt.Errorf("--auth-introspection %q: %w", cfg.Introspection, err)
		}
		rs.introspection = &introspector{url: cfg.Introspection, clientID: cfg.IntrospectionClientID, clientSecret: cfg.IntrospectionSecret,
			client: cfg.HTTPClient, cache: map[[sha256.Size]byte]cachedIdentity{}}
	}
	if rs.keys == nil && rs.introspection == nil {
		return nil, fmt.Errorf("auth: issuer %s publishes no jwks_uri, so its tokens can only be checked by introspection: pass --auth-introspection", cfg.Issuer)
	}
	rs.page = newPageSignIn(rs, md, cfg)
	return rs, nil
}

// checkAudience accepts an absolute URI, as RFC 8707 requires of a
// resource indicator, without a fragment.
func checkAudience(aud string) error {
	u, err := url.Parse(aud)
	if err != nil || u.Scheme == "" || u.Fragment != "" {
		return fmt.Errorf("--auth-audience %q: an audience is an absolute URI without a fragment", aud)
	}
	return nil
}

// Issuer is the issuer tokens must come from.
func (rs *Resource) Issuer() string { return rs.issuer }

// Scopes are those every request needs.
func (rs *Resource) Scopes() []string { return rs.scopes }

// Audience is this resource's identifier, which tokens must be issued for.
func (rs *Resource) Audience() string {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	return rs.audience
}

// SetDefaultAudience makes url the audience unless Config named one: the
// server's own /mcp URL, known once it listens.
func (rs *Resource) SetDefaultAudience(url string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.audience == "" {
		rs.audience = url
	}
}

// Authenticate checks the request's credentials: a bearer token in the
// Authorization header, verified as a JWT or by introspection, with
// every scope the server needs. A token in the URI query is refused
// (OAuth 2.1 §5.2, MCP: "MUST NOT be included in the URI query string").
func (rs *Resource) Authenticate(r *http.Request) (*Identity, *Refusal) {
	if r.URL.Query().Has("access_token") {
		return nil, &Refusal{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Reason: "query",
			Description: "an access token in the URI query is not accepted: send it in the Authorization header"}
	}
	hs := r.Header.Values("Authorization")
	if len(hs) == 0 {
		return nil, &Refusal{Status: http.StatusUnauthorized, Reason: "missing", Scope: rs.scopes,
			Description: "this server needs \"Authorization: Bearer <access token>\" from " + rs.issuer}
	}
	if len(hs) > 1 {
		return nil, &Refusal{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Reason: "malformed",
			Description: "more than one Authorization header"}
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(hs[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return nil, &Refusal{Status: http.StatusUnauthorized, Reason: "missing", Scope: rs.scopes,
			Description: "this server takes bearer tokens only (\"Authorization: Bearer <access token>\")"}
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, invalidToken("malformed", "the Authorization header carries no token")
	}
	return rs.Verify(r.Context(), token)
}

// Verify checks an access token as Authenticate checks the one a request
// carries: verified as a JWT or by introspection, with every scope the
// server needs. The page's sign-in (signin.go) verifies its tokens here too.
func (rs *Resource) Verify(ctx context.Context, token string) (*Identity, *Refusal) {
	var id *Identity
	var ref *Refusal
	switch {
	case rs.keys != nil && looksLikeJWT(token):
		id, ref = rs.verifyJWT(ctx, token)
	case rs.introspection != nil:
		id, ref = rs.introspect(ctx, token)
	default:
		ref = invalidToken("malformed", "the token is not a JWT access token")
	}
	if ref != nil {
		return nil, ref
	}
	if missing := id.Missing(rs.scopes); missing != nil {
		return nil, InsufficientScope(id, rs.scopes, "the token lacks scope "+strings.Join(missing, " "))
	}
	return id, nil
}

// ToolScopes are the scopes the tool name (its command cmd) needs beyond
// the server's own: --auth-tool-scope's when it names the tool, else the
// command's metadata. Metadata that cannot be read (CheckTools refuses it
// at load) asks for a scope no token has: it fails closed.
func (rs *Resource) ToolScopes(name string, cmd *manifest.Command) []string {
	if s, ok := rs.toolScopes[name]; ok {
		return s
	}
	if cmd == nil {
		return nil
	}
	s, err := CommandScopes(cmd)
	if err != nil {
		return []string{"nexus:unreadable-scopes"}
	}
	return s
}

// CheckTools checks the served tools (name → command) against the scope
// rules: every command's metadata scopes readable, every tool that
// --auth-tool-scope names served.
func (rs *Resource) CheckTools(tools map[string]*manifest.Command) error {
	for name := range rs.toolScopes {
		if _, ok := tools[name]; !ok {
			return fmt.Errorf("--auth-tool-scope names tool %q, which is not served", name)
		}
	}
	for _, cmd := range tools {
		if _, err := CommandScopes(cmd); err != nil {
			return err
		}
	}
	return nil
}

// SetTools makes scopes_supported list the server's scopes and every
// scope a served tool needs (after CheckTools; again on a reload).
func (rs *Resource) SetTools(tools map[string]*manifest.Command) {
	all := slices.Clone(rs.scopes)
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		for _, s := range rs.ToolScopes(n, tools[n]) {
			if !slices.Contains(all, s) {
				all = append(all, s)
			}
		}
	}
	rs.mu.Lock()
	rs.supported = all
	rs.mu.Unlock()
}
