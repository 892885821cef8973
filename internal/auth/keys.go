package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// keySet is the issuer's public signing keys (its JWKS), kept in memory.
// A token that names a key not in the set makes it fetch the set again, at
// most once per minRefresh, so that a rotation needs no restart while a
// flood of made-up key ids cannot make nexus hammer the issuer. A set older
// than maxAge is fetched again at its next use (a key the issuer withdrew
// stops being accepted).
type keySet struct {
	url        string
	client     *http.Client
	log        *slog.Logger
	minRefresh time.Duration
	maxAge     time.Duration
	now        func() time.Time

	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetched time.Time // when keys were fetched
	tried   time.Time // when a fetch was last tried
	// fetching is closed when the fetch in flight ends; nil when none runs.
	fetching chan struct{}
}

// errUnknownKey answers a kid the issuer's key set does not hold, even
// after fetching it again.
var errUnknownKey = errors.New("unknown key")

// lookup returns the keys a token signed with alg under kid may be
// verified with: the key of that id, or with no kid every key fit for
// alg. An unknown kid fetches the set again when minRefresh allows.
func (ks *keySet) lookup(ctx context.Context, kid string, alg string) ([]jose.JSONWebKey, error) {
	ks.mu.Lock()
	stale := ks.now().Sub(ks.fetched) > ks.maxAge
	keys := ks.keys
	ks.mu.Unlock()
	if !stale {
		if found := matchKeys(keys, kid, alg); len(found) > 0 {
			return found, nil
		}
	}
	if err := ks.refresh(ctx); err != nil && len(keys) == 0 {
		return nil, err
	}
	ks.mu.Lock()
	keys = ks.keys
	ks.mu.Unlock()
	if found := matchKeys(keys, kid, alg); len(found) > 0 {
		return found, nil
	}
	return nil, errUnknownKey
}

// matchKeys picks the signing keys of kid ("" for any) usable with alg.
func matchKeys(keys []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		out = append(out, k)
	}
	return out
}

// refresh fetches the set again unless a fetch was tried within
// minRefresh. Calls that arrive during a fetch wait for it instead of
// fetching too.
func (ks *keySet) refresh(ctx context.Context) error {
	ks.mu.Lock()
	if wait := ks.fetching; wait != nil {
		ks.mu.Unlock()
		select {
		case <-wait:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if !ks.tried.IsZero() && ks.now().Sub(ks.tried) < ks.minRefresh {
		ks.mu.Unlock()
		return nil // rate-limited: the keys held are what there is
	}
	ks.tried = ks.now()
	done := make(chan struct{})
	ks.fetching = done
	ks.mu.Unlock()

	// The fetch is the set's, not the request's: a client that goes away
	// must not leave the waiting requests without keys.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	keys, err := fetchKeys(fctx, ks.client, ks.url)
	ks.mu.Lock()
	if err == nil {
		ks.keys, ks.fetched = keys, ks.now()
	}
	ks.fetching = nil
	close(done)
	ks.mu.Unlock()
	if err != nil {
		ks.log.Warn("auth: cannot fetch the issuer's keys", "jwks_uri", ks.url, "err", err)
		return err
	}
	ks.log.Debug("auth: fetched the issuer's keys", "jwks_uri", ks.url, "keys", len(keys))
	return nil
}

// fetchKeys reads a JWKS and keeps its public signing keys: asymmetric
// keys meant for signatures ("use" absent or "sig"). A symmetric key in the
// set is dropped, so that no token can be checked with a shared secret.
func fetchKeys(ctx context.Context, client *http.Client, url string) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	status, err := getJSON(ctx, client, url, &set)
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", url, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("jwks %s: HTTP %d", url, status)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			continue // a key type go-jose does not know: not one nexus can use
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if _, symmetric := k.Key.([]byte); symmetric {
			continue
		}
		if !k.IsPublic() {
			k = k.Public() // a set should never publish private keys; use only the public half
		}
		if !k.Valid() {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("jwks %s: no public signing key", url)
	}
	return keys, nil
}
