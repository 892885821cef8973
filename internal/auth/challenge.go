package auth

import (
	"net/http"
	"strings"
)

// Refusal is why a request's credentials were not accepted, as RFC 6750 §3
// answers it: the HTTP status, the error code of the WWW-Authenticate
// challenge, and the scopes that would do.
type Refusal struct {
	// Status is 400 (invalid_request), 401 (no or bad token) or 403
	// (insufficient_scope).
	Status int
	// Code is RFC 6750's error code; empty when the request carried no
	// credentials at all (§3.1: then the challenge names no error).
	Code string
	// Description says what was wrong, for the client and the log; it
	// never quotes the token.
	Description string
	// Scope lists the scopes the request needs (insufficient_scope), or
	// those a client should ask for (a 401).
	Scope []string
	// Reason is a short, fixed word for logs and metrics: missing,
	// query, malformed, algorithm, key, signature, issuer, audience,
	// expired, not_yet_valid, claims, inactive, introspection, scope;
	// for the page's sign-in (signin.go) state, exchange, session.
	Reason string
	// Subject is the token's subject when the token itself was good (a
	// scope refusal), for the log.
	Subject string
}

func (r *Refusal) Error() string { return r.Description }

// RFC 6750 §3.1 error codes.
const (
	CodeInvalidRequest    = "invalid_request"
	CodeInvalidToken      = "invalid_token"
	CodeInsufficientScope = "insufficient_scope"
)

func invalidToken(reason, description string) *Refusal {
	return &Refusal{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Reason: reason, Description: description}
}

// InsufficientScope refuses an identity that lacks scopes: 403 naming all
// of need (RFC 6750 §3.1: "the scope necessary to access the resource"),
// so that a client can ask for them in one step.
func InsufficientScope(id *Identity, need []string, description string) *Refusal {
	r := &Refusal{Status: http.StatusForbidden, Code: CodeInsufficientScope, Scope: need, Reason: "scope", Description: description}
	if id != nil {
		r.Subject = id.Subject
	}
	return r
}

// challengeHeader is the WWW-Authenticate value for r: the Bearer scheme with
// resource_metadata (RFC 9728 §5.1, which MCP clients start discovery
// from), error, error_description and scope as they apply.
func challengeHeader(r *Refusal, resourceMetadata string) string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(k, v string) {
		b.WriteString(sep + k + `="` + quotable(v) + `"`)
		sep = ", "
	}
	if resourceMetadata != "" {
		param("resource_metadata", resourceMetadata)
	}
	if r.Code != "" {
		param("error", r.Code)
	}
	if r.Description != "" && r.Code != "" {
		param("error_description", r.Description)
	}
	if len(r.Scope) > 0 {
		param("scope", strings.Join(r.Scope, " "))
	}
	return b.String()
}

// quotable keeps what RFC 6750 allows in a quoted value (%x20-21 /
// %x23-5B / %x5D-7E): anything else becomes '?'.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '?'
		}
		return r
	}, s)
}
