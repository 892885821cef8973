package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// introspector asks the issuer about opaque tokens (RFC 7662), as the
// client --auth-introspection-client names. An active answer is kept for
// a short while (at most introspectionTTL, never past the token's exp), so
// that a client's run of requests costs one round trip, not one each.
type introspector struct {
	url          string
	clientID     string
	clientSecret string
	client       *http.Client

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cachedIdentity // by the token's hash: the token itself is never kept
}

type cachedIdentity struct {
	id    *Identity
	until time.Time
}

const (
	introspectionTTL   = 30 * time.Second
	introspectionCache = 10000
)

// introspectionAnswer is RFC 7662 §2.2's response, the members nexus reads.
type introspectionAnswer struct {
	Active    bool             `json:"active"`
	Scope     json.RawMessage  `json:"scope"`
	ClientID  string           `json:"client_id"`
	Subject   string           `json:"sub"`
	Issuer    string           `json:"iss"`
	Audience  jwt.Audience     `json:"aud"`
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
}

// introspect verifies an opaque token by asking the issuer: it must be
// active, for this audience, from this issuer (when the answer says), and
// within exp and nbf.
func (rs *Resource) introspect(ctx context.Context, token string) (*Identity, *Refusal) {
	in := rs.introspection
	key := sha256.Sum256([]byte(token))
	now := rs.now()
	in.mu.Lock()
	c, ok := in.cache[key]
	in.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.id, nil
	}
	ans, err := in.ask(ctx, token)
	if err != nil {
		rs.log.Warn("auth: token introspection failed", "endpoint", in.url, "err", err)
		return nil, invalidToken("introspection", "the token could not be checked with the issuer")
	}
	if !ans.Active {
		return nil, invalidToken("inactive", "the token is not active")
	}
	if ans.Issuer != "" && ans.Issuer != rs.issuer {
		return nil, invalidToken("issuer", fmt.Sprintf("the token is from issuer %q, not %q", ans.Issuer, rs.issuer))
	}
	aud := rs.Audience()
	if !ans.Audience.Contains(aud) {
		return nil, invalidToken("audience", fmt.Sprintf("the token is not meant for this resource (audience %q)", aud))
	}
	var exp time.Time
	if ans.Expiry != nil {
		exp = ans.Expiry.Time()
	}
	if expiresBefore(exp, now, rs.leeway) {
		return nil, invalidToken("expired", "the token has expired")
	}
	if ans.NotBefore != nil && now.Add(rs.leeway).Before(ans.NotBefore.Time()) {
		return nil, invalidToken("not_yet_valid", "the token is not valid yet")
	}
	id := &Identity{Issuer: rs.issuer, Subject: ans.Subject, ClientID: ans.ClientID, Scopes: claimScopes(ans.Scope, nil), Expiry: exp}
	if id.Subject == "" {
		if id.ClientID == "" {
			return nil, invalidToken("claims", "the introspected token names no subject (sub) and no client")
		}
		id.Subject = "client:" + id.ClientID
	}
	until := now.Add(introspectionTTL)
	if !exp.IsZero() && exp.Before(until) {
		until = exp
	}
	in.mu.Lock()
	if len(in.cache) >= introspectionCache {
		for k, v := range in.cache {
			if !now.Before(v.until) {
				delete(in.cache, k)
			}
		}
		if len(in.cache) >= introspectionCache {
			clear(in.cache)
		}
	}
	in.cache[key] = cachedIdentity{id: id, until: until}
	in.mu.Unlock()
	return id, nil
}

// ask POSTs the token to the introspection endpoint with the client's
// credentials (HTTP Basic, RFC 6749 §2.3.1).
func (in *introspector) ask(ctx context.Context, token string) (*introspectionAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.url, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if in.clientID != "" {
		req.SetBasicAuth(url.QueryEscape(in.clientID), url.QueryEscape(in.clientSecret))
	}
	resp, err := in.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var ans introspectionAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %w", err)
	}
	return &ans, nil
}
