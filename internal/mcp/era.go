package mcp

import (
	"encoding/json"
	"slices"
)

// Protocol versions of the handshake era, newest first (docs/spec.md §4.2).
var handshakeVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// LatestVersion is answered to an initialize asking for a version nexus lacks.
var LatestVersion = handshakeVersions[0]

// StatelessVersion is the protocol without a handshake (docs/spec.md
// §4.3): every request names its version in params._meta.
const StatelessVersion = "2026-07-28"

// Keys of params._meta in the stateless era.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// statelessVersions are the versions served per request, newest first.
var statelessVersions = []string{StatelessVersion}

// SupportedVersions lists every protocol version nexus speaks, newest first.
func SupportedVersions() []string {
	return append(slices.Clone(statelessVersions), handshakeVersions...)
}

// IsInitialize reports whether r opens a handshake-era session.
func IsInitialize(r *Request) bool { return r.Method == "initialize" }

// IsStateless reports whether r is served by the stateless rules of
// 2026-07-28 rather than by a handshake session: server/discover, or any
// request whose params._meta carries the per-request protocol fields
// (a version or client capabilities; one without the other is then a
// -32602) (docs/spec.md §4.3).
func IsStateless(r *Request) bool {
	if r.Method == "server/discover" {
		return true
	}
	m := requestMeta(r)
	_, v := m[MetaProtocolVersion]
	_, c := m[MetaClientCapabilities]
	return v || c
}

// RequestVersion returns the protocol version r names in
// params._meta["io.modelcontextprotocol/protocolVersion"], and whether it
// names one at all.
func RequestVersion(r *Request) (string, bool) {
	m := requestMeta(r)
	raw, ok := m[MetaProtocolVersion]
	if !ok {
		return "", false
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return string(raw), true
	}
	return v, true
}

// requestMeta decodes params._meta, nil when absent or not an object. It is
// decoded once per request: the transport, the era and the method all ask.
func requestMeta(r *Request) map[string]json.RawMessage {
	if m := r.meta.Load(); m != nil {
		return *m
	}
	raw, ok := r.param("_meta")
	if !ok {
		r.meta.CompareAndSwap(nil, &noMeta) // most requests: nothing to allocate
		return *r.meta.Load()
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		m = nil
	}
	r.meta.CompareAndSwap(nil, &m)
	return *r.meta.Load()
}

// noMeta is the decoded _meta of every request without one; never written.
var noMeta map[string]json.RawMessage

// features are what a protocol version has beyond 2024-11-05's core.
type features struct {
	annotations     bool // tool annotations, progress messages, audio (2025-03-26)
	title           bool // tool title (2025-06-18)
	structured      bool // outputSchema and structuredContent (2025-06-18)
	stateless       bool // resultType, ttlMs/cacheScope, serverInfo in _meta (2026-07-28)
	progressMessage bool // notifications/progress "message" (2025-03-26)
	allCapabilities bool // prompts, resources, completions, logging declared (2025-11-25)
	execution       bool // tool execution.taskSupport (2025-11-25)
}

// featuresOf returns the features of a supported version. Versions are
// dates, so they order as strings.
func featuresOf(version string) features {
	return features{
		annotations:     version >= "2025-03-26",
		title:           version >= "2025-06-18",
		structured:      version >= "2025-06-18",
		stateless:       version >= StatelessVersion,
		progressMessage: version >= "2025-03-26",
		allCapabilities: version >= "2025-11-25",
		execution:       version >= "2025-11-25",
	}
}
