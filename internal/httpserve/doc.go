// Package httpserve owns nexus's networked serving (docs/spec.md §5): MCP
// over the Streamable HTTP transport at /mcp (the handshake era with
// Mcp-Session-Id sessions, and the stateless 2026-07-28 era, from one
// endpoint), a plain JSON API (/call/<module>/<command>, /discover,
// /health), and the safety around them (loopback by default, a static
// bearer token or OAuth access tokens checked by package auth, with
// sessions and tasks owned by the token's subject (oauth.go), the browser
// page's sign-in through the issuer with a server-side session named by a
// same-origin-only cookie (signin.go), Host and
// Origin checks, body caps, timeouts, a session cap with idle expiry,
// graceful shutdown). Several programs may share one port; their tools are
// then named <module>__<command>. With a certificate it serves HTTPS, and
// with HTTP3 also HTTP/3 over QUIC (quic-go) on the UDP port of the same
// number, through the same handler and guards, so that no route escapes
// them (docs/http.md, "HTTPS and HTTP/3"). Server.Reload swaps in new
// programs while requests in flight finish on the old ones (hot reload,
// reload.go).
//
// It speaks MCP through package mcp's transport-facing API (ParseMessages,
// Session.Handle, Server.HandleStateless) and reaches pools only through
// mcp.Caller; it never starts or stops a pool itself.
package httpserve
