package auth

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// MetadataPrefix starts the path of protected-resource metadata (RFC 9728
// §3): the document of the resource https://host/mcp is at
// https://host/.well-known/oauth-protected-resource/mcp.
const MetadataPrefix = "/.well-known/oauth-protected-resource"

// protectedResource is RFC 9728 §2's document, the members nexus states.
type protectedResource struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// IsMetadataPath reports whether path is where this server's metadata is
// served: the well-known URI bare (what clients of the root form try), with
// /mcp after it, or with the audience's own path after it (a proxy that
// serves nexus under another path).
func (rs *Resource) IsMetadataPath(path string) bool {
	rest, ok := strings.CutPrefix(path, MetadataPrefix)
	if !ok {
		return false
	}
	return rest == "" || rest == "/mcp" || (rest != "/" && rest == rs.audiencePath())
}

// audiencePath is the audience's path when it is an http(s) URL.
func (rs *Resource) audiencePath() string {
	u, err := url.Parse(rs.Audience())
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return ""
	}
	return strings.TrimSuffix(u.EscapedPath(), "/")
}

// ServeMetadata answers GET (and HEAD) of the protected-resource metadata.
func (rs *Resource) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed (use GET)", http.StatusMethodNotAllowed)
		return
	}
	rs.mu.RLock()
	doc := protectedResource{Resource: rs.audience, AuthorizationServers: []string{rs.issuer},
		ScopesSupported: slices.Clone(rs.supported), BearerMethodsSupported: []string{"header"}}
	rs.mu.RUnlock()
	if doc.ScopesSupported == nil {
		doc.ScopesSupported = []string{}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		http.Error(w, "cannot encode the metadata", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "max-age=300")
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}

// MetadataURL is the address of this server's metadata, for the
// resource_metadata of a challenge: after the audience's origin and path
// when the audience is an http(s) URL (as MCP clients require), else on the
// host the request reached.
func (rs *Resource) MetadataURL(r *http.Request) string {
	if u, err := url.Parse(rs.Audience()); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		return u.Scheme + "://" + u.Host + MetadataPrefix + strings.TrimSuffix(u.EscapedPath(), "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + MetadataPrefix + "/mcp"
}

// Challenge sets the WWW-Authenticate header of a refusal.
func (rs *Resource) Challenge(w http.ResponseWriter, r *http.Request, ref *Refusal) {
	w.Header().Set("WWW-Authenticate", challengeHeader(ref, rs.MetadataURL(r)))
}
