package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// signatureAlgorithms are the algorithms a JWT access token may be signed
// with: asymmetric ones only. "none" and the HMAC family (HS256, ...) are
// absent, so a token that names them is refused before any key is
// looked at: no one can sign with a public key used as an HMAC secret.
var signatureAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// looksLikeJWT tells a JWS compact serialization (three base64url parts)
// from an opaque token.
func looksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }

// tokenClaims are the claims nexus reads beyond the registered ones.
type tokenClaims struct {
	Scope    json.RawMessage `json:"scope"`
	Scp      json.RawMessage `json:"scp"`
	ClientID string          `json:"client_id"`
	Azp      string          `json:"azp"`
	AppID    string          `json:"appid"`
}

// verifyJWT checks a JWT access token: an allowed algorithm, a signature by
// one of the issuer's keys, the issuer, the audience (this resource: RFC
// 8707, RFC 9068 §4), and exp and nbf within leeway. exp is required: a
// token that never expires is not an access token nexus accepts.
func (rs *Resource) verifyJWT(ctx context.Context, token string) (*Identity, *Refusal) {
	if rs.keys == nil {
		return nil, invalidToken("malformed", "this server accepts only opaque tokens (the issuer publishes no keys)")
	}
	tok, err := jwt.ParseSigned(token, signatureAlgorithms)
	if err != nil {
		if alg := headerAlg(token); alg != "" && !allowedAlg(alg) {
			return nil, invalidToken("algorithm", fmt.Sprintf("signature algorithm %q is not accepted (asymmetric algorithms only)", alg))
		}
		return nil, invalidToken("malformed", "the token is not a well-formed signed JWT")
	}
	if len(tok.Headers) != 1 {
		return nil, invalidToken("malformed", "the token must carry exactly one signature")
	}
	h := tok.Headers[0]
	keys, err := rs.keys.lookup(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		if errors.Is(err, errUnknownKey) {
			return nil, invalidToken("key", fmt.Sprintf("the token is signed with a key (kid %q) the issuer does not publish", h.KeyID))
		}
		return nil, invalidToken("key", "cannot fetch the issuer's keys to check the token")
	}
	var std jwt.Claims
	var extra tokenClaims
	verified := false
	for _, k := range keys {
		if tok.Claims(k.Key, &std, &extra) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, invalidToken("signature", "the token's signature does not verify")
	}
	// Its own claims now speak for the issuer: check what they say.
	if std.Issuer != rs.issuer {
		return nil, invalidToken("issuer", fmt.Sprintf("the token is from issuer %q, not %q", std.Issuer, rs.issuer))
	}
	aud := rs.Audience()
	if !std.Audience.Contains(aud) {
		return nil, invalidToken("audience", fmt.Sprintf("the token is not meant for this resource (audience %q)", aud))
	}
	if std.Expiry == nil {
		return nil, invalidToken("claims", "the token has no expiry (exp)")
	}
	now := rs.now()
	if err := std.ValidateWithLeeway(jwt.Expected{Time: now}, rs.leeway); err != nil {
		switch {
		case errors.Is(err, jwt.ErrExpired):
			return nil, invalidToken("expired", "the token has expired")
		case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
			return nil, invalidToken("not_yet_valid", "the token is not valid yet")
		}
		return nil, invalidToken("claims", "the token's claims do not hold: "+err.Error())
	}
	id := &Identity{Issuer: rs.issuer, Subject: std.Subject, Scopes: claimScopes(extra.Scope, extra.Scp),
		ClientID: firstNonEmpty(extra.ClientID, extra.Azp, extra.AppID), Expiry: std.Expiry.Time()}
	if id.Subject == "" {
		// A client_credentials token of some issuers names only its client.
		if id.ClientID == "" {
			return nil, invalidToken("claims", "the token names no subject (sub) and no client")
		}
		id.Subject = "client:" + id.ClientID
	}
	return id, nil
}

// headerAlg reads the alg of a compact JWS's header without trusting it,
// to say why a token was refused.
func headerAlg(token string) string {
	head, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return ""
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(b, &h) != nil {
		return ""
	}
	return h.Alg
}

func allowedAlg(alg string) bool {
	for _, a := range signatureAlgorithms {
		if string(a) == alg {
			return true
		}
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// expiresBefore reports whether t is set and already past now by more than leeway.
func expiresBefore(t, now time.Time, leeway time.Duration) bool {
	return !t.IsZero() && now.After(t.Add(leeway))
}
