// Package clientconfig owns what `--mcp-config` prints: the JSON an MCP
// client (Claude Desktop, Claude Code, ...) needs to start or reach a nexus
// server (docs/spec.md §3 and §5), with the environment the user's pools
// need, and the matching `claude mcp add` line.
//
// Clients start servers with a minimal environment: Claude Desktop's PATH
// finds the system python3, not the conda or pyenv interpreter that holds
// the user's numpy. So every form carries the PATH in force when the config
// was made, and the variables by which Python and R find their packages.
package clientconfig

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
)

// EnvNames are the variables a config carries when set: PATH always, and
// those by which Python and R find the user's interpreters and packages.
var EnvNames = []string{"PATH", "PYTHONPATH", "R_LIBS", "R_LIBS_USER", "CONDA_PREFIX", "VIRTUAL_ENV"}

// Env is the environment a config carries, read with lookup (os.LookupEnv):
// each of EnvNames that is set and not empty.
func Env(lookup func(string) (string, bool)) map[string]string {
	env := map[string]string{}
	for _, name := range EnvNames {
		if v, ok := lookup(name); ok && v != "" {
			env[name] = v
		}
	}
	return env
}

// Stdio is a server the client starts itself: nexus mcp on a manifest.
type Stdio struct {
	Name     string            // the server's key in mcpServers
	Nexus    string            // absolute path of the nexus binary
	Manifest string            // absolute path of the manifest
	Env      map[string]string // see Env
}

// JSON is {"mcpServers":{"<name>":{"command":nexus,"args":["mcp",manifest],"env":{...}}}},
// two-space indented, with a trailing newline.
func (s Stdio) JSON() []byte {
	return marshal(s.Name, stdioEntry{Command: s.Nexus, Args: []string{"mcp", s.Manifest}, Env: s.Env})
}

// WSLJSON is the form Claude Desktop on Windows needs for a nexus inside
// WSL: it starts wsl.exe, which runs nexus by its Linux path. The client's
// "env" would reach wsl.exe, a Windows process, not nexus, so the variables
// go through env(1) on the Linux side instead.
func (s Stdio) WSLJSON() []byte {
	args := []string{"-e", "env"}
	for _, name := range sortedKeys(s.Env) {
		args = append(args, name+"="+s.Env[name])
	}
	args = append(args, s.Nexus, "mcp", s.Manifest)
	return marshal(s.Name, stdioEntry{Command: "wsl.exe", Args: args})
}

type stdioEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// URL is a server that runs already: nexus serve.
type URL struct {
	Name, URL, Token string
	Env              map[string]string // see Env: what the served pools were started with
}

type urlEntry struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// JSON is {"mcpServers":{"<name>":{"url":...,"headers":{"Authorization":"Bearer ..."},"env":{...}}}},
// indented, with a trailing newline. A client that reaches the server by
// URL ignores env; it records the environment the server's pools run in,
// so that the same config can be turned into a stdio one.
func (u URL) JSON() []byte {
	e := urlEntry{URL: u.URL, Env: u.Env}
	if u.Token != "" {
		e.Headers = map[string]string{"Authorization": "Bearer " + u.Token}
	}
	return marshal(u.Name, e)
}

// ClaudeCommand is the `claude mcp add --transport http ...` line that
// registers the server with Claude Code.
func (u URL) ClaudeCommand() string {
	parts := []string{"claude", "mcp", "add", "--transport", "http", ShellWord(u.Name), ShellWord(u.URL)}
	if u.Token != "" {
		parts = append(parts, "--header", ShellWord("Authorization: Bearer "+u.Token))
	}
	return strings.Join(parts, " ")
}

func marshal(name string, entry any) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(map[string]any{"mcpServers": map[string]any{name: entry}})
	return []byte(b.String())
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ShellWord quotes s for a POSIX shell when it needs it.
func ShellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@=+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// UnderWSL reports whether this Linux runs inside Windows's WSL, from the
// kernel's version string (/proc/version names Microsoft there).
func UnderWSL() bool {
	b, err := os.ReadFile("/proc/version")
	return err == nil && isWSLVersion(string(b))
}

func isWSLVersion(v string) bool {
	v = strings.ToLower(v)
	return strings.Contains(v, "microsoft") || strings.Contains(v, "wsl")
}
