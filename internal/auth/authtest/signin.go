package authtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// signIn is the issuer's side of a browser's sign-in: GET /authorize
// signs the person in at once (the test stands for them) and sends the
// browser back with a code; POST /token redeems a code once, with its
// PKCE verifier and the client's credentials; POST /register registers
// clients when Registration allows it.
type signIn struct {
	t       testing.TB
	user    string
	claims  func(map[string]any)
	reg     bool
	clients map[string]Client // by id
	codes   map[string]*grant // unredeemed
	// Exchanges counts POSTs to /token with a code, good or not.
	exchanges atomic.Int64
}

// Client is an OAuth client the issuer knows.
type Client struct {
	ID, Secret  string // an empty Secret: a public client
	RedirectURI string
}

type grant struct {
	client, redirect, challenge string
	claims                      map[string]any
}

func newSignIn(t testing.TB) *signIn {
	return &signIn{t: t, user: "alice", clients: map[string]Client{}, codes: map[string]*grant{}}
}

func (is *Issuer) registers() bool {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.signIn.reg
}

// Registration makes the issuer publish a registration_endpoint (RFC
// 7591) and register whoever asks; a server reads it at discovery.
func (is *Issuer) Registration(on bool) {
	is.mu.Lock()
	is.signIn.reg = on
	is.mu.Unlock()
}

// AddClient makes a client known, as an administrator registers one.
func (is *Issuer) AddClient(c Client) {
	is.mu.Lock()
	is.signIn.clients[c.ID] = c
	is.mu.Unlock()
}

// Clients are the clients the issuer knows, registered ones included.
func (is *Issuer) Clients() []Client {
	is.mu.Lock()
	defer is.mu.Unlock()
	var out []Client
	for _, c := range is.signIn.clients {
		out = append(out, c)
	}
	return out
}

// SignInAs makes the next sign-ins those of subject; edit, when set,
// changes the claims of the tokens they get (an expiry, a scope).
func (is *Issuer) SignInAs(subject string, edit func(claims map[string]any)) {
	is.mu.Lock()
	is.signIn.user, is.signIn.claims = subject, edit
	is.mu.Unlock()
}

// Exchanges is how many codes were presented at /token, good or not.
func (is *Issuer) Exchanges() int64 { return is.signIn.exchanges.Load() }

func (is *Issuer) routeSignIn(mux *http.ServeMux) {
	mux.HandleFunc("GET /authorize", is.authorize)
	mux.HandleFunc("POST /token", is.exchange)
	mux.HandleFunc("POST /register", is.register)
}

// authorize checks an authorization request as an issuer must (a known
// client, its redirect URI, PKCE with S256) and answers with a code for
// the signed-in user, for the resource and scope asked.
func (is *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	is.mu.Lock()
	c, known := is.signIn.clients[q.Get("client_id")]
	user, edit := is.signIn.user, is.signIn.claims
	is.mu.Unlock()
	switch {
	case !known:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case q.Get("redirect_uri") != c.RedirectURI:
		http.Error(w, "redirect_uri is not the client's", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "":
		http.Error(w, "want response_type=code, a state, and PKCE with S256", http.StatusBadRequest)
		return
	}
	claims := is.Claims(user, q.Get("resource"), strings.Fields(q.Get("scope"))...)
	claims["client_id"] = c.ID
	if edit != nil {
		edit(claims)
	}
	code := randomHex()
	is.mu.Lock()
	is.signIn.codes[code] = &grant{client: c.ID, redirect: c.RedirectURI, challenge: q.Get("code_challenge"), claims: claims}
	is.mu.Unlock()
	back, _ := url.Parse(c.RedirectURI)
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// exchange redeems a code once (RFC 6749 §4.1.3): a code presented again,
// by another client, with another redirect URI or a wrong verifier is
// invalid_grant, and is gone.
func (is *Issuer) exchange(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	f := r.PostForm
	if f.Get("grant_type") != "authorization_code" {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	is.signIn.exchanges.Add(1)
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	is.mu.Lock()
	c, known := is.signIn.clients[id]
	g := is.signIn.codes[f.Get("code")]
	delete(is.signIn.codes, f.Get("code"))
	is.mu.Unlock()
	if !known || c.Secret != secret {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	if g == nil || g.client != id || g.redirect != f.Get("redirect_uri") || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	writeJSON(w, map[string]any{"access_token": is.Mint(is.signIn.t, g.claims), "token_type": "Bearer", "expires_in": 300})
}

// register is RFC 7591 §3: a confidential client for the one redirect URI asked.
func (is *Issuer) register(w http.ResponseWriter, r *http.Request) {
	if !is.registers() {
		http.NotFound(w, r)
		return
	}
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) != 1 {
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]any{"error": "invalid_client_metadata"})
		return
	}
	c := Client{ID: "reg-" + randomHex()[:8], Secret: randomHex(), RedirectURI: meta.RedirectURIs[0]}
	is.AddClient(c)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{"client_id": c.ID, "client_secret": c.Secret,
		"token_endpoint_auth_method": "client_secret_basic", "redirect_uris": meta.RedirectURIs})
}

func tokenError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code})
}

func randomHex() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Clock is a time a test moves, for auth.Config.Now: sessions and tokens
// expire without waiting.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts at the present.
func NewClock() *Clock { return &Clock{t: time.Now()} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
