package auth

import (
	"context"
	"slices"
	"time"
)

// Identity is who a request comes from, as its verified credentials say.
// It never holds the token itself.
type Identity struct {
	// Issuer is the authorization server that vouches for Subject; empty
	// for the static bearer token.
	Issuer string
	// Subject is the token's sub: the user, or for a client_credentials
	// token the client.
	Subject string
	// ClientID is the OAuth client the token was issued to, when it says.
	ClientID string
	// Scopes are the token's scopes.
	Scopes []string
	// Expiry is when the token stops being accepted; zero when it does not say.
	Expiry time.Time
	// static marks the --auth-token identity, which scopes do not limit.
	static bool
}

// StaticToken is the identity of a request that carried the static
// --auth-token: one principal, everyone who holds the token.
var StaticToken = &Identity{Subject: "static-token", static: true}

// Owner names the identity as the owner of sessions and tasks: issuer and
// subject, so that a user's next token reaches what the last one started
// and no other user does.
func (id *Identity) Owner() string {
	if id == nil {
		return ""
	}
	if id.static {
		return "token"
	}
	return "sub:" + id.Issuer + "#" + id.Subject
}

// Missing returns the scopes of need that the identity lacks, in need's
// order; the static token lacks none.
func (id *Identity) Missing(need []string) []string {
	if id == nil || id.static {
		return nil
	}
	var missing []string
	for _, s := range need {
		if !slices.Contains(id.Scopes, s) && !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

type identityKey struct{}

// WithIdentity hands the request's identity on to what serves it.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext is the request's identity; nil when the server checks no
// credentials.
func FromContext(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}
