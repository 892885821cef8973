package mcp

import (
	"context"
	"encoding/json"
	"slices"
)

// CodeUnsupportedProtocolVersion answers a stateless request naming a
// version nexus does not serve (2026-07-28, SEP-2575).
const CodeUnsupportedProtocolVersion = -32022

// unsupportedVersionData is the data of a -32022 error.
type unsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// checkStatelessMeta validates the per-request _meta of a 2026-07-28
// request: a supported protocol version and the client's capabilities.
func checkStatelessMeta(r *Request) *Error {
	meta := requestMeta(r)
	raw, ok := meta[MetaProtocolVersion]
	if !ok {
		return errorf(CodeInvalidParams, "invalid params: %s requires params._meta[%q] (protocol %s has no handshake)", r.Method, MetaProtocolVersion, StatelessVersion)
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return errorf(CodeInvalidParams, "invalid params: params._meta[%q] must be a string", MetaProtocolVersion)
	}
	if !slices.Contains(statelessVersions, v) {
		return &Error{Code: CodeUnsupportedProtocolVersion,
			Message: "unsupported protocol version: " + v,
			Data:    &unsupportedVersionData{Supported: SupportedVersions(), Requested: v}}
	}
	if caps, ok := meta[MetaClientCapabilities]; !ok || jsonKind(caps) != "object" {
		return errorf(CodeInvalidParams, "invalid params: %s requires params._meta[%q] as an object", r.Method, MetaClientCapabilities)
	}
	return nil
}

// dispatchStateless serves one request by the 2026-07-28 rules: no
// session, everything the server needs is in the request.
func (s *Server) dispatchStateless(ctx context.Context, r *Request) (any, *Error) {
	if err := checkStatelessMeta(r); err != nil {
		return nil, err
	}
	v, _ := RequestVersion(r)
	switch r.Method {
	case "server/discover":
		return s.discover(), nil
	case "tools/list":
		return s.listTools(r.Params, v)
	case "tools/call":
		return s.callTool(ctx, r.Params, v)
	}
	// ping, initialize and logging/setLevel do not exist in this version.
	return nil, errorf(CodeMethodNotFound, "method not found: %s (protocol %s)", r.Method, v)
}

type discoverResult struct {
	ResultType        string         `json:"resultType"`
	SupportedVersions []string       `json:"supportedVersions"`
	Capabilities      map[string]any `json:"capabilities"`
	Meta              map[string]any `json:"_meta"`
	TTLMs             int64          `json:"ttlMs"`
	CacheScope        string         `json:"cacheScope"`
}

func (s *Server) discover() *discoverResult {
	return &discoverResult{
		ResultType:        "complete",
		SupportedVersions: SupportedVersions(),
		Capabilities:      map[string]any{"tools": map[string]any{}},
		Meta:              map[string]any{MetaServerInfo: s.info},
		TTLMs:             s.opts.CacheTTL.Milliseconds(),
		CacheScope:        "public",
	}
}
