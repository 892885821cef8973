package mcp

import (
	"context"
	"encoding/json"
	"slices"
)

// CodeUnsupportedProtocolVersion answers a stateless request naming a
// version nexus does not serve (2026-07-28, SEP-2575).
const CodeUnsupportedProtocolVersion = -32022

// MetaLogLevel is the per-request log level of 2026-07-28 (it replaces
// logging/setLevel): without it a request gets no log messages.
const MetaLogLevel = "io.modelcontextprotocol/logLevel"

// unsupportedVersionData is the data of a -32022 error.
type unsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// statelessMeta is what a 2026-07-28 request says about itself.
type statelessMeta struct {
	version      string
	logLevel     string
	capabilities json.RawMessage
}

// checkStatelessMeta validates the per-request _meta of a 2026-07-28
// request: a protocol version nexus serves (else -32022), the client's
// capabilities (else -32602), and an optional log level.
func checkStatelessMeta(r *Request) (statelessMeta, *Error) {
	meta := requestMeta(r)
	raw, ok := meta[MetaProtocolVersion]
	if !ok {
		return statelessMeta{}, errorf(CodeInvalidParams, "invalid params: %s requires params._meta[%q] (protocol %s has no handshake)", r.Method, MetaProtocolVersion, StatelessVersion)
	}
	var m statelessMeta
	if json.Unmarshal(raw, &m.version) != nil {
		return m, errorf(CodeInvalidParams, "invalid params: params._meta[%q] must be a string", MetaProtocolVersion)
	}
	if !slices.Contains(statelessVersions, m.version) {
		return m, &Error{Code: CodeUnsupportedProtocolVersion,
			Message: "unsupported protocol version: " + m.version,
			Data:    &unsupportedVersionData{Supported: SupportedVersions(), Requested: m.version}}
	}
	caps, ok := meta[MetaClientCapabilities]
	if !ok || jsonKind(caps) != "object" {
		return m, errorf(CodeInvalidParams, "invalid params: %s requires params._meta[%q] (an object)", r.Method, MetaClientCapabilities)
	}
	m.capabilities = caps
	if raw, ok := meta[MetaLogLevel]; ok {
		if json.Unmarshal(raw, &m.logLevel) != nil || levelRank(m.logLevel) < 0 {
			return m, errorf(CodeInvalidParams, "invalid params: params._meta[%q] must be one of %v", MetaLogLevel, logLevels)
		}
	}
	return m, nil
}

// dispatchStateless serves one request by the 2026-07-28 rules: no
// session, everything the server needs is in the request.
func (s *Server) dispatchStateless(ctx context.Context, r *Request) (any, *Error) {
	m, err := checkStatelessMeta(r)
	if err != nil {
		return nil, err
	}
	switch r.Method {
	case "server/discover":
		return s.discover(), nil
	case "tools/list":
		return s.listTools(r.Params, m.version)
	case "tools/call":
		c := statelessClient(m)
		if s.tasksEnabled() {
			if res, rpcErr, ok := s.statelessToolCall(ctx, r, c); ok {
				return res, rpcErr
			}
		}
		return s.callTool(ctx, r, c)
	case "tasks/get", "tasks/update", "tasks/cancel":
		if s.tasksEnabled() {
			return s.statelessTaskMethod(ctx, r, m)
		}
	case "subscriptions/listen":
		return s.listen(ctx, r)
	}
	if isFeatureMethod(r.Method) && r.Method != "resources/subscribe" && r.Method != "resources/unsubscribe" {
		return s.feature(ctx, r, statelessClient(m), nil)
	}
	// ping, initialize and logging/setLevel do not exist in this version.
	return nil, errorf(CodeMethodNotFound, "method not found: %s (protocol %s)", r.Method, m.version)
}

// statelessResult adds what every 2026-07-28 result carries: resultType and
// the server's identity in _meta.
func (s *Server) statelessResult(o object) object { return s.current().statelessResult(o) }

func (sf *surface) statelessResult(o object) object {
	return append(o,
		member{Key: "resultType", Value: "complete"},
		member{Key: "_meta", Value: sf.infoMeta})
}

func (s *Server) discover() object {
	return s.statelessResult(object{
		{Key: "supportedVersions", Value: SupportedVersions()},
		{Key: "capabilities", Value: s.capabilities(StatelessVersion)},
		{Key: "ttlMs", Value: s.opts.CacheTTL.Milliseconds()},
		{Key: "cacheScope", Value: "public"},
	})
}
