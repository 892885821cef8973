package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The browser page's sign-in (docs/auth.md, "The browser page"): nexus is
// a backend for frontend. It sends a person's browser to the issuer with an
// authorization code request (PKCE S256, a state, the resource), exchanges
// the code itself, verifies the access token as /mcp does, and keeps it in
// a session the browser knows only by a random id (httpserve's cookie).
// The token never reaches the page's JavaScript.

const (
	// LoginTTL is how long a person may take at the issuer's forms.
	LoginTTL = 10 * time.Minute
	// maxLogins and maxPageSessions cap what unauthenticated browsers and
	// signed-in ones may make nexus keep.
	maxLogins       = 10000
	maxPageSessions = 10000
	// untimedSession is how long a session lasts whose token names no expiry.
	untimedSession = time.Hour
	// registerRetry is the least time between two registration attempts
	// after one failed.
	registerRetry = 30 * time.Second
)

// PageSignIn signs people in to the browser page through the issuer and
// keeps their tokens server-side. It is the Resource's (Page); its client
// is Config.PageClientID, or one it registers (Prepare).
type PageSignIn struct {
	rs       *Resource // its issuer, clock and logger are the sign-in's
	client   *http.Client
	auth     string // the issuer's endpoints: authorization,
	token    string // token,
	register string // and dynamic client registration ("" when it has none)
	// unusable says why the issuer's metadata rules sign-in out; "" when
	// it does not.
	unusable string

	regMu sync.Mutex // one registration at a time
	mu    sync.Mutex
	cl    pageClient
	// redirectURI is <public base>/oauth/callback, set by Prepare.
	redirectURI   string
	registerErr   error
	registerTried time.Time
	logins        map[string]*login                  // by state
	sessions      map[[sha256.Size]byte]*pageSession // by the hash of the cookie's id
}

// pageClient is the OAuth client nexus signs in as.
type pageClient struct {
	id, secret string
	method     string // token endpoint authentication: client_secret_basic, client_secret_post or none
}

// login is a sign-in under way, from Begin to Complete.
type login struct {
	verifier    string
	binding     [sha256.Size]byte // of the secret the starting browser's cookie holds
	client      pageClient
	redirectURI string
	expires     time.Time
}

type pageSession struct {
	token   string
	expires time.Time
}

// PageSession is a signed-in browser: the random id its cookie holds, who
// signed in, and when the session ends (with the token).
type PageSession struct {
	ID       string
	Identity *Identity
	Expires  time.Time
}

func newPageSignIn(rs *Resource, md *issuerMetadata, cfg Config) *PageSignIn {
	p := &PageSignIn{rs: rs, client: cfg.HTTPClient,
		auth: md.AuthorizationEndpoint, token: md.TokenEndpoint, register: md.RegistrationEndpoint,
		logins: map[string]*login{}, sessions: map[[sha256.Size]byte]*pageSession{}}
	if cfg.PageClientID != "" {
		p.cl = pageClient{id: cfg.PageClientID, secret: cfg.PageClientSecret, method: secretMethod(cfg.PageClientSecret, md.TokenEndpointAuthMethods)}
	}
	for _, e := range [][2]string{{"authorization_endpoint", p.auth}, {"token_endpoint", p.token}, {"registration_endpoint", p.register}} {
		if name, at := e[0], e[1]; at != "" {
			if err := checkEndpoint(at); err != nil {
				p.unusable = fmt.Sprintf("the issuer's %s %q: %v", name, at, err)
			}
		}
	}
	switch {
	case p.auth == "" || p.token == "":
		p.unusable = "the issuer " + cfg.Issuer + " publishes no authorization_endpoint and token_endpoint, so no one can sign in through it from a browser"
	case len(md.CodeChallengeMethodsSupported) > 0 && !slices.Contains(md.CodeChallengeMethodsSupported, "S256"):
		p.unusable = "the issuer " + cfg.Issuer + " does not support PKCE with S256 (code_challenge_methods_supported), which sign-in for the page requires"
	}
	return p
}

// secretMethod picks how a client with secret authenticates at the token
// endpoint: HTTP Basic (RFC 6749 §2.3.1) unless the issuer lists only the
// form post; none for a public client.
func secretMethod(secret string, supported []string) string {
	switch {
	case secret == "":
		return "none"
	case len(supported) > 0 && !slices.Contains(supported, "client_secret_basic") && slices.Contains(supported, "client_secret_post"):
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// Page is the browser page's sign-in.
func (rs *Resource) Page() *PageSignIn { return rs.page }

// Prepare readies sign-in for the server whose public URL is base (its
// page, without a trailing slash): the redirect URI is base/oauth/callback.
// Without a configured client it registers one (RFC 7591) when the issuer
// publishes a registration_endpoint. The error says why sign-in is not
// available; Begin tries a failed registration again.
func (p *PageSignIn) Prepare(ctx context.Context, base string) error {
	p.mu.Lock()
	p.redirectURI = strings.TrimSuffix(base, "/") + "/oauth/callback"
	p.mu.Unlock()
	return p.ensureClient(ctx)
}

// RedirectURI is where the issuer sends a browser back; "" before Prepare.
func (p *PageSignIn) RedirectURI() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.redirectURI
}

// ClientID is the client the page signs in as; "" when there is none yet.
func (p *PageSignIn) ClientID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cl.id
}

// ensureClient has a client to sign in as, registering one if it must
// (at most once per registerRetry after a failure).
func (p *PageSignIn) ensureClient(ctx context.Context) error {
	if p.unusable != "" {
		return fmt.Errorf("sign-in for the page is not available: %s", p.unusable)
	}
	p.regMu.Lock()
	defer p.regMu.Unlock()
	p.mu.Lock()
	have, redirect, tried, lastErr := p.cl.id != "", p.redirectURI, p.registerTried, p.registerErr
	p.mu.Unlock()
	switch {
	case redirect == "":
		return fmt.Errorf("sign-in for the page is not ready: the server's address is not known yet")
	case have:
		return nil
	case p.register == "":
		return fmt.Errorf("sign-in for the page needs --auth-page-client: the issuer %s publishes no registration_endpoint, so nexus cannot register itself. "+
			"Register a client there with the redirect URI %s and pass its id (a confidential client's secret in $NEXUS_AUTH_PAGE_CLIENT_SECRET)", p.rs.issuer, redirect)
	case !tried.IsZero() && p.rs.now().Sub(tried) < registerRetry:
		return lastErr
	}
	cl, err := p.registerClient(ctx, redirect)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.registerTried = p.rs.now()
	if err != nil {
		p.registerErr = fmt.Errorf("sign-in for the page: cannot register nexus at %s (%v); register a client with the redirect URI %s and pass --auth-page-client", p.register, err, redirect)
		return p.registerErr
	}
	p.cl, p.registerErr = cl, nil
	p.rs.log.Info("auth: registered the page's client", "registration_endpoint", p.register, "client_id", cl.id, "redirect_uri", redirect)
	return nil
}

// Begin starts a sign-in: it returns the issuer's authorization URL to
// send the browser to, and a secret for that browser's cookie, without
// which Complete refuses the sign-in (so that no one can finish a sign-in
// in a browser that did not start it).
func (p *PageSignIn) Begin(ctx context.Context) (authURL, binding string, err error) {
	if err := p.ensureClient(ctx); err != nil {
		return "", "", err
	}
	state, verifier, binding := randomID(), randomID(), randomID()
	sum := sha256.Sum256([]byte(verifier))
	now := p.rs.now()
	p.mu.Lock()
	l := &login{verifier: verifier, binding: sha256.Sum256([]byte(binding)), client: p.cl, redirectURI: p.redirectURI, expires: now.Add(LoginTTL)}
	if len(p.logins) >= maxLogins {
		evict(p.logins, now, maxLogins, func(l *login) time.Time { return l.expires })
	}
	p.logins[state] = l
	p.mu.Unlock()
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {l.client.id},
		"redirect_uri":          {l.redirectURI},
		"state":                 {state},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"resource":              {p.rs.Audience()},
	}
	if len(p.rs.scopes) > 0 {
		q.Set("scope", strings.Join(p.rs.scopes, " "))
	}
	sep := "?"
	if strings.Contains(p.auth, "?") {
		sep = "&"
	}
	return p.auth + sep + q.Encode(), binding, nil
}

// Complete finishes the sign-in the issuer sent back with state and code,
// in the browser whose cookie holds binding: the state must be one Begin
// made for that browser and not used yet; nexus exchanges the code (with
// the PKCE verifier) and verifies the token as /mcp would. The session it
// returns holds the token server-side.
func (p *PageSignIn) Complete(ctx context.Context, state, binding, code string) (*PageSession, *Refusal) {
	now := p.rs.now()
	p.mu.Lock()
	l := p.logins[state]
	if l == nil {
		p.mu.Unlock()
		return nil, signInRefusal(http.StatusBadRequest, "state", "this sign-in is unknown or already finished: sign in again")
	}
	b := sha256.Sum256([]byte(binding))
	if subtle.ConstantTimeCompare(b[:], l.binding[:]) != 1 {
		// Not deleted: a stranger who saw the state must not end the real sign-in.
		p.mu.Unlock()
		return nil, signInRefusal(http.StatusBadRequest, "state", "this sign-in was started in another browser, or at another address of this server: sign in again")
	}
	delete(p.logins, state) // a state, and so its code, is used once
	p.mu.Unlock()
	if now.After(l.expires) {
		return nil, signInRefusal(http.StatusBadRequest, "state", fmt.Sprintf("this sign-in took longer than %d minutes: sign in again", int(LoginTTL.Minutes())))
	}
	if code == "" {
		return nil, signInRefusal(http.StatusBadRequest, "state", "the issuer sent no authorization code")
	}
	token, expiresIn, err := p.exchange(ctx, l, code)
	if err != nil {
		p.rs.log.Warn("auth: the page's code exchange failed", "token_endpoint", p.token, "err", err)
		return nil, signInRefusal(http.StatusBadGateway, "exchange", "the issuer did not exchange the sign-in's code for a token: "+err.Error())
	}
	id, ref := p.rs.Verify(ctx, token)
	if ref != nil {
		return nil, ref
	}
	expires := id.Expiry
	if expires.IsZero() {
		expires = now.Add(untimedSession)
		if expiresIn > 0 {
			expires = now.Add(expiresIn)
		}
	}
	sid := randomID()
	p.mu.Lock()
	if len(p.sessions) >= maxPageSessions {
		evict(p.sessions, now, maxPageSessions, func(s *pageSession) time.Time { return s.expires })
	}
	p.sessions[sha256.Sum256([]byte(sid))] = &pageSession{token: token, expires: expires}
	p.mu.Unlock()
	return &PageSession{ID: sid, Identity: id, Expires: expires}, nil
}

// Session is the identity of the browser whose cookie holds id: its
// session's token, verified again as /mcp verifies a bearer token (a
// withdrawn key or a revoked opaque token ends it). An unknown, expired
// or no longer accepted session is a 401, and is forgotten.
func (p *PageSignIn) Session(ctx context.Context, id string) (*Identity, *Refusal) {
	key := sha256.Sum256([]byte(id))
	p.mu.Lock()
	s := p.sessions[key]
	p.mu.Unlock()
	if s == nil {
		return nil, signInRefusal(http.StatusUnauthorized, "session", "no such sign-in session (signed out, or the server restarted): sign in again")
	}
	if !p.rs.now().Before(s.expires) {
		p.End(id)
		return nil, signInRefusal(http.StatusUnauthorized, "session", "the sign-in session has expired with its token: sign in again")
	}
	ident, ref := p.rs.Verify(ctx, s.token)
	if ref != nil {
		p.End(id)
		return nil, ref
	}
	return ident, nil
}

// End forgets the session of the cookie id (signing out).
func (p *PageSignIn) End(id string) {
	key := sha256.Sum256([]byte(id))
	p.mu.Lock()
	delete(p.sessions, key)
	p.mu.Unlock()
}

// Sessions is how many signed-in browsers nexus keeps.
func (p *PageSignIn) Sessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions)
}

func signInRefusal(status int, reason, description string) *Refusal {
	return &Refusal{Status: status, Reason: reason, Description: description}
}

// evict makes room in a map holding limit entries: it drops those past
// their end, and if it is still full, the one nearest its end.
func evict[K comparable, V any](m map[K]V, now time.Time, limit int, end func(V) time.Time) {
	var first K
	var firstEnd time.Time
	for k, v := range m {
		e := end(v)
		if !now.Before(e) {
			delete(m, k)
			continue
		}
		if firstEnd.IsZero() || e.Before(firstEnd) {
			first, firstEnd = k, e
		}
	}
	if len(m) >= limit && !firstEnd.IsZero() {
		delete(m, first)
	}
}

// randomID is 256 random bits, base64url: a state, a PKCE verifier (43
// characters, RFC 7636 §4.1), a cookie's secret.
func randomID() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// tokenAnswer is RFC 6749 §5.1's response, and §5.2's error.
type tokenAnswer struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int64  `json:"expires_in"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// exchange trades the code for an access token at the token endpoint
// (RFC 6749 §4.1.3, with RFC 7636's verifier and RFC 8707's resource).
func (p *PageSignIn) exchange(ctx context.Context, l *login, code string) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {l.redirectURI},
		"code_verifier": {l.verifier}, "resource": {p.rs.Audience()}}
	switch l.client.method {
	case "none":
		form.Set("client_id", l.client.id)
	case "client_secret_post":
		form.Set("client_id", l.client.id)
		form.Set("client_secret", l.client.secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.token, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if l.client.method == "client_secret_basic" {
		req.SetBasicAuth(url.QueryEscape(l.client.id), url.QueryEscape(l.client.secret))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return "", 0, err
	}
	var ans tokenAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		return "", 0, fmt.Errorf("HTTP %d, not JSON", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK || ans.Error != "" {
		return "", 0, fmt.Errorf("HTTP %d: %s %s", resp.StatusCode, ans.Error, ans.ErrorDescription)
	}
	if ans.AccessToken == "" || !strings.EqualFold(ans.TokenType, "Bearer") {
		return "", 0, fmt.Errorf("no bearer access token in the answer (token_type %q)", ans.TokenType)
	}
	return ans.AccessToken, time.Duration(ans.ExpiresIn) * time.Second, nil
}

// registerClient registers nexus as a confidential web client with one
// redirect URI (RFC 7591 §3.1); the issuer may make it public (no secret).
func (p *PageSignIn) registerClient(ctx context.Context, redirectURI string) (pageClient, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	meta := map[string]any{
		"client_name": "nexus browser page", "redirect_uris": []string{redirectURI}, "application_type": "web",
		"grant_types": []string{"authorization_code"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "client_secret_basic",
	}
	if len(p.rs.scopes) > 0 {
		meta["scope"] = strings.Join(p.rs.scopes, " ")
	}
	b, _ := json.Marshal(meta)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.register, strings.NewReader(string(b)))
	if err != nil {
		return pageClient{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return pageClient{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return pageClient{}, err
	}
	var ans struct {
		ClientID                string `json:"client_id"`
		ClientSecret            string `json:"client_secret"`
		TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
		Error                   string `json:"error"`
		ErrorDescription        string `json:"error_description"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return pageClient{}, fmt.Errorf("HTTP %d, not JSON", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK || ans.ClientID == "" {
		return pageClient{}, fmt.Errorf("HTTP %d: %s %s", resp.StatusCode, ans.Error, ans.ErrorDescription)
	}
	cl := pageClient{id: ans.ClientID, secret: ans.ClientSecret, method: ans.TokenEndpointAuthMethod}
	switch {
	case cl.secret == "":
		cl.method = "none"
	case cl.method != "client_secret_post":
		cl.method = "client_secret_basic"
	}
	return cl, nil
}
