package httpserve

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/mcp"
)

// nameSource names the body field Mcp-Name mirrors, for the methods that
// require the header (2026-07-28 Streamable HTTP, "Standard Request
// Headers"; the tasks extension adds its methods' taskId, SEP-2663
// "Streamable HTTP: Routing Headers").
var nameSource = map[string]string{
	"tools/call":     "name",
	"prompts/get":    "name",
	"resources/read": "uri",
	"tasks/get":      "taskId",
	"tasks/update":   "taskId",
	"tasks/cancel":   "taskId",
}

// checkRoutingHeaders compares MCP-Protocol-Version, Mcp-Method and
// Mcp-Name with the body of a 2026-07-28 request ("Server Validation"): a
// load balancer may route on the headers while nexus executes the body, so
// they must agree. It returns what is wrong, or "".
func checkRoutingHeaders(h http.Header, req *mcp.Request, pv string) string {
	if pv == "" {
		return "missing MCP-Protocol-Version header"
	}
	if v, ok := mcp.RequestVersion(req); ok && v != pv {
		return "MCP-Protocol-Version header " + quoteHeader(pv) + " does not match body value " + quoteHeader(v)
	}
	method, ok := headerValue(h, hdrMethod)
	switch {
	case !ok:
		return "missing Mcp-Method header"
	case method != req.Method:
		return "Mcp-Method header " + quoteHeader(method) + " does not match body value " + quoteHeader(req.Method)
	}
	field, needsName := nameSource[req.Method]
	if !needsName {
		return ""
	}
	raw, ok := headerValue(h, hdrName)
	if !ok {
		return "missing Mcp-Name header (required for " + req.Method + ")"
	}
	name, ok := decodeHeaderValue(raw)
	if !ok {
		return "Mcp-Name header " + quoteHeader(raw) + " is not valid =?base64?...?= encoding"
	}
	value, _ := req.Param(field)
	body, ok := jsontext.DecodeString(value)
	if string(value) == "null" {
		body, ok = "", true // as encoding/json reads null into a string
	}
	if !ok {
		return "" // the body lacks the field: the method's own validation says so
	}
	if name != body {
		return "Mcp-Name header " + quoteHeader(name) + " does not match body value " + quoteHeader(body)
	}
	return ""
}

// headerValue returns a header's single value and whether it is present.
func headerValue(h http.Header, name string) (string, bool) {
	vs := h.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.TrimSpace(vs[0]), true
}

// decodeHeaderValue undoes the Base64 sentinel encoding ("=?base64?...?=")
// a client uses for values that are not plain header-safe ASCII.
func decodeHeaderValue(v string) (string, bool) {
	const pre, post = "=?base64?", "?="
	if !strings.HasPrefix(v, pre) || !strings.HasSuffix(v, post) || len(v) < len(pre)+len(post) {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(v[len(pre) : len(v)-len(post)])
	if err != nil {
		return "", false
	}
	return string(b), true
}
