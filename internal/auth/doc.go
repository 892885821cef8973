// Package auth makes `nexus serve` an OAuth 2.1 resource server, as MCP's
// authorization specification asks of a remote server (docs/auth.md). It
// owns:
//
//   - discovery of the issuer's metadata (OpenID Connect Discovery or RFC
//     8414; discovery.go);
//   - the issuer's signing keys (JWKS), kept in memory and fetched again
//     when a token names a key not yet known, at most once per MinRefresh,
//     so that a key rotation needs no restart (keys.go);
//   - verification of JWT access tokens with go-jose (asymmetric
//     algorithms only; iss, aud as RFC 8707 resource, exp and nbf with a
//     small leeway; verify.go), and of opaque tokens by RFC 7662
//     introspection (introspect.go);
//   - the scopes a request needs: the server's own, and per tool from a
//     command's metadata or --auth-tool-scope (scopes.go);
//   - protected-resource metadata (RFC 9728; metadata.go) and the
//     WWW-Authenticate challenges of RFC 6750 (challenge.go);
//   - the Identity a verified token stands for (identity.go): transports
//     hand it on, and sessions and tasks belong to its subject, never to a
//     token;
//   - the browser page's sign-in as a backend for frontend (signin.go):
//     authorization code with PKCE and state, as a configured client or
//     one registered by RFC 7591, the code exchanged server-side and the
//     token kept in a session a cookie's random id names.
//
// Resource ties these together (resource.go). It never logs a token.
package auth
