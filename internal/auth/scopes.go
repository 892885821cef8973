package auth

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// MetadataScopes is the key of a command's metadata that names the scopes
// its tool needs beyond the server's own: a list of strings, or one
// space-separated string (OAuth's own spelling).
const MetadataScopes = "scopes"

// ParseScopes splits a list of scopes given as "a b", "a,b" or both, as
// flags and claims spell them; empty items are dropped, and order is kept.
func ParseScopes(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// CommandScopes reads the scopes a command's metadata asks for its tool
// (MetadataScopes); none when it names none.
func CommandScopes(cmd *manifest.Command) ([]string, error) {
	raw, ok := cmd.Metadata[MetadataScopes]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return checkScopes(ParseScopes(one))
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("command %q: metadata.%s must be a list of strings or one space-separated string", cmd.Name, MetadataScopes)
	}
	var out []string
	for _, s := range list {
		for _, f := range ParseScopes(s) {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	scopes, err := checkScopes(out)
	if err != nil {
		return nil, fmt.Errorf("command %q: metadata.%s: %w", cmd.Name, MetadataScopes, err)
	}
	return scopes, nil
}

// checkScopes accepts RFC 6749 §3.3 scope tokens: printable ASCII without
// space, '"' or '\' (they go into a WWW-Authenticate header as they are).
func checkScopes(scopes []string) ([]string, error) {
	for _, s := range scopes {
		for _, r := range s {
			if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
				return nil, fmt.Errorf("scope %q: a scope is printable ASCII without spaces, quotes or backslashes", s)
			}
		}
	}
	return scopes, nil
}

// ParseToolScopes reads --auth-tool-scope values, each TOOL=SCOPE (several
// scopes separated by spaces or '+'); a tool named twice gets the union.
func ParseToolScopes(values []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, v := range values {
		tool, scopes, ok := strings.Cut(v, "=")
		tool = strings.TrimSpace(tool)
		list := ParseScopes(strings.ReplaceAll(scopes, "+", " "))
		if !ok || tool == "" || len(list) == 0 {
			return nil, fmt.Errorf("--auth-tool-scope %q: want TOOL=SCOPE", v)
		}
		if _, err := checkScopes(list); err != nil {
			return nil, fmt.Errorf("--auth-tool-scope %q: %w", v, err)
		}
		for _, s := range list {
			if !slices.Contains(out[tool], s) {
				out[tool] = append(out[tool], s)
			}
		}
	}
	return out, nil
}

// claimScopes reads a token's scopes: "scope" (RFC 9068, RFC 7662: one
// space-separated string) or "scp" (Entra ID, Okta: a string or a list).
func claimScopes(scope json.RawMessage, scp json.RawMessage) []string {
	for _, raw := range []json.RawMessage{scope, scp} {
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var one string
		if json.Unmarshal(raw, &one) == nil {
			return strings.Fields(one)
		}
		var list []string
		if json.Unmarshal(raw, &list) == nil {
			return list
		}
	}
	return nil
}
