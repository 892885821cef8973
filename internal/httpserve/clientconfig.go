package httpserve

import (
	"encoding/json"
	"os"
	"strings"
)

var osHostname = os.Hostname

// ClientConfig is what an MCP client needs to reach a served program: the
// `--mcp-config` JSON (SPEC §5) and the matching `claude mcp add` command.
type ClientConfig struct {
	Name, URL, Token string
}

type urlServer struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// JSON is {"mcpServers":{"<name>":{"url":...,"headers":{"Authorization":"Bearer ..."}}}},
// indented, with a trailing newline.
func (c ClientConfig) JSON() []byte {
	srv := urlServer{URL: c.URL}
	if c.Token != "" {
		srv.Headers = map[string]string{"Authorization": "Bearer " + c.Token}
	}
	out, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{c.Name: srv}}, "", "  ")
	return append(out, '\n')
}

// ClaudeCommand is the `claude mcp add --transport http ...` line that
// registers the server with Claude Code.
func (c ClientConfig) ClaudeCommand() string {
	parts := []string{"claude", "mcp", "add", "--transport", "http", shellWord(c.Name), shellWord(c.URL)}
	if c.Token != "" {
		parts = append(parts, "--header", shellWord("Authorization: Bearer "+c.Token))
	}
	return strings.Join(parts, " ")
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@=+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
