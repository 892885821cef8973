// Package authtest is an authorization server for tests of package auth
// and of the servers that use it: OpenID Connect discovery, a JWKS whose
// key can be rotated, RFC 7662 introspection of opaque tokens it was told
// about, tokens minted to order, forged ones included (alg none, HS256
// keyed with the public key, a stranger's key), and a browser's sign-in
// (authorization code with PKCE, dynamic client registration).
package authtest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is a running test authorization server.
type Issuer struct {
	// URL is its issuer identifier (http://127.0.0.1:port).
	URL string
	// JWKSFetches counts GETs of its key set; Introspections its
	// introspection requests.
	JWKSFetches, Introspections atomic.Int64
	// ClientID and ClientSecret are what introspection accepts.
	ClientID, ClientSecret string

	srv    *httptest.Server
	mu     sync.Mutex
	key    *Key
	opaque map[string]map[string]any
	signIn *signIn // the browser sign-in's endpoints (signin.go)
}

// Key is a signing key with its id.
type Key struct {
	ID      string
	Private *rsa.PrivateKey
}

// NewKey makes a fresh RSA key with a random id.
func NewKey(t testing.TB) *Key {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var id [8]byte
	rand.Read(id[:])
	return &Key{ID: hex.EncodeToString(id[:]), Private: priv}
}

// NewIssuer starts an issuer on loopback; it stops with the test. It
// signs people in too (signin.go): as "alice" unless told otherwise.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{key: NewKey(t), opaque: map[string]map[string]any{}, ClientID: "nexus", ClientSecret: "s3cret", signIn: newSignIn(t)}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		md := map[string]any{"issuer": is.URL, "jwks_uri": is.URL + "/jwks",
			"introspection_endpoint": is.URL + "/introspect", "token_endpoint": is.URL + "/token",
			"authorization_endpoint": is.URL + "/authorize", "code_challenge_methods_supported": []string{"S256"}}
		if is.registers() {
			md["registration_endpoint"] = is.URL + "/register"
		}
		writeJSON(w, md)
	})
	is.routeSignIn(mux)
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.JWKSFetches.Add(1)
		is.mu.Lock()
		k := is.key
		is.mu.Unlock()
		writeJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.Private.PublicKey, KeyID: k.ID, Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("/introspect", func(w http.ResponseWriter, r *http.Request) {
		is.Introspections.Add(1)
		id, secret, ok := r.BasicAuth()
		if !ok || id != is.ClientID || secret != is.ClientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.ParseForm()
		is.mu.Lock()
		ans, known := is.opaque[r.PostForm.Get("token")]
		is.mu.Unlock()
		if !known {
			ans = map[string]any{"active": false}
		}
		writeJSON(w, ans)
	})
	is.srv = httptest.NewServer(mux)
	is.URL = is.srv.URL
	t.Cleanup(is.srv.Close)
	return is
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// Rotate replaces the published key with a new one: tokens signed with the
// old one no longer verify once a server fetches the set again.
func (is *Issuer) Rotate(t testing.TB) {
	k := NewKey(t)
	is.mu.Lock()
	is.key = k
	is.mu.Unlock()
}

// SigningKey is the key the issuer signs with now.
func (is *Issuer) SigningKey() *Key {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.key
}

// Claims are a good access token's claims for audience, with scopes.
func (is *Issuer) Claims(subject, audience string, scopes ...string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.URL, "sub": subject, "aud": audience, "client_id": "test-client",
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "scope": strings.Join(scopes, " ")}
}

// Mint signs claims with the issuer's current key (RS256).
func (is *Issuer) Mint(t testing.TB, claims map[string]any) string {
	return Sign(t, is.SigningKey(), claims)
}

// Sign signs claims with k (RS256, k.ID as kid).
func Sign(t testing.TB, k *Key, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: k.Private, KeyID: k.ID}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Unsigned is claims as a JWT with alg "none" and no signature, naming
// the issuer's key id.
func (is *Issuer) Unsigned(t testing.TB, claims map[string]any) string {
	return Unsigned(t, is.SigningKey().ID, claims)
}

// Unsigned is claims as a JWT with alg "none", no signature, and kid.
func Unsigned(t testing.TB, kid string, claims map[string]any) string {
	return compact(t, map[string]any{"alg": "none", "typ": "JWT", "kid": kid}, claims, nil)
}

// HMACWithPublicKey is claims signed HS256 with the issuer's public key
// (its PEM) as the HMAC secret: the algorithm-confusion forgery.
func (is *Issuer) HMACWithPublicKey(t testing.TB, claims map[string]any) string {
	return HMACWithPublicKey(t, is.SigningKey(), claims)
}

// HMACWithPublicKey is claims signed HS256 with k's public key (its PEM)
// as the HMAC secret, naming k's id.
func HMACWithPublicKey(t testing.TB, k *Key, claims map[string]any) string {
	der, err := x509.MarshalPKIXPublicKey(&k.Private.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return compact(t, map[string]any{"alg": "HS256", "typ": "JWT", "kid": k.ID}, claims, func(input []byte) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write(input)
		return m.Sum(nil)
	})
}

// PrivateJWKS is keys as a JWKS with their private halves, for an
// authorization server to sign with (the first key signs).
func PrivateJWKS(t testing.TB, keys ...*Key) []byte {
	t.Helper()
	set := jose.JSONWebKeySet{}
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Private, KeyID: k.ID, Algorithm: "RS256", Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compact assembles a JWS by hand, for the forgeries go-jose refuses to make.
func compact(t testing.TB, header, claims map[string]any, sign func([]byte) []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sig := ""
	if sign != nil {
		sig = base64.RawURLEncoding.EncodeToString(sign([]byte(input)))
	}
	return input + "." + sig
}

// Opaque registers an opaque token whose introspection answers answer.
func (is *Issuer) Opaque(answer map[string]any) string {
	tok := randomHex()
	is.mu.Lock()
	is.opaque[tok] = answer
	is.mu.Unlock()
	return tok
}
