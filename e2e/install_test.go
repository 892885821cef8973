package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// scratchEnv is nexus's environment with HOME pointed at home and the
// variables that move client files elsewhere taken out.
func scratchEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "APPDATA", "USERPROFILE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home)
}

// nexusIn runs nexus in dir with env.
func nexusIn(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(nexusBin, args...)
	cmd.Dir, cmd.Env = dir, env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("nexus %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

// writtenEntry is a stdio server as a client's file holds it.
type writtenEntry struct {
	Type    string            `json:"type" toml:"type"`
	Command string            `json:"command" toml:"command"`
	Args    []string          `json:"args" toml:"args"`
	Env     map[string]string `json:"env" toml:"env"`
}

// stripJSONC drops // and /* */ comments outside strings (VS Code's and
// Gemini CLI's files may have them) and trailing commas.
func stripJSONC(b []byte) []byte {
	var out []byte
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr:
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			i += 2 + end + 1
		default:
			out = append(out, c)
		}
	}
	return regexp.MustCompile(`,(\s*[}\]])`).ReplaceAll(out, []byte("$1"))
}

// A client's files in a scratch home, each already holding another server
// and settings nexus knows nothing of, in the client's documented place and
// shape.
var clientFiles = []struct {
	client, rel string
	servers     []string // the path to the servers object
	original    string
}{
	{"claude-desktop", ".config/Claude/claude_desktop_config.json", []string{"mcpServers"},
		"{\n  \"mcpServers\": {\n    \"filesystem\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/home/u\"]\n    }\n  },\n  \"globalShortcut\": \"Ctrl+Space\"\n}\n"},
	{"claude-code", ".claude.json", []string{"mcpServers"},
		"{\n  \"numStartups\": 12,\n  \"mcpServers\": {\n    \"github\": {\n      \"type\": \"http\",\n      \"url\": \"https://api.example.com/mcp\"\n    }\n  },\n  \"projects\": {\n    \"/home/u/p\": {\n      \"allowedTools\": []\n    }\n  }\n}\n"},
	{"cursor", ".cursor/mcp.json", []string{"mcpServers"},
		"{\n    \"mcpServers\": {\n        \"memory\": {\n            \"command\": \"npx\",\n            \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"],\n            \"env\": {\"MEMORY_FILE\": \"/tmp/m.json\"}\n        }\n    }\n}\n"},
	{"vscode", ".config/Code/User/mcp.json", []string{"servers"},
		"{\n\t// Servers for Copilot's agent mode\n\t\"servers\": {\n\t\t\"memory\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"npx\",\n\t\t\t\"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"]\n\t\t},\n\t},\n\t\"inputs\": [\n\t\t{\"type\": \"promptString\", \"id\": \"api-key\", \"description\": \"API key\", \"password\": true}\n\t]\n}\n"},
	{"windsurf", ".codeium/windsurf/mcp_config.json", []string{"mcpServers"},
		"{\"mcpServers\": {\"zapier\": {\"serverUrl\": \"https://actions.zapier.com/mcp/KEY/sse\"}}}"},
	{"gemini", ".gemini/settings.json", []string{"mcpServers"},
		"{\n  \"theme\": \"GitHub\",\n  \"mcpServers\": {\n    \"docs\": {\n      \"httpUrl\": \"https://docs.example.com/mcp\",\n      \"timeout\": 5000\n    }\n  },\n  \"selectedAuthType\": \"gemini-api-key\"\n}\n"},
	{"codex", ".codex/config.toml", []string{"mcp_servers"},
		"model = \"o3\"\napproval_policy = \"on-request\"\n\n[mcp_servers.docs]\ncommand = \"docs-server\"\nargs = [\"--port\", \"0\"]\n\n[mcp_servers.docs.env]\nDOCS_TOKEN = \"x\"\n\n[projects.\"/home/u/p\"]\ntrust_level = \"trusted\"\n"},
}

// decodeEntry reads the server name from a client's file.
func decodeEntry(t *testing.T, client string, servers []string, b []byte, name string) (writtenEntry, map[string]any) {
	t.Helper()
	var doc map[string]any
	if client == "codex" {
		if _, err := toml.Decode(string(b), &doc); err != nil {
			t.Fatalf("%s: not TOML: %v\n%s", client, err, b)
		}
	} else if err := json.Unmarshal(stripJSONC(b), &doc); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", client, err, b)
	}
	var obj any = doc
	for _, k := range servers {
		m, _ := obj.(map[string]any)
		obj = m[k]
	}
	m, _ := obj.(map[string]any)
	raw, _ := json.Marshal(m[name])
	var e writtenEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("%s: %s: %v", client, raw, err)
	}
	return e, m
}

// startEntry starts a written entry as its client does (the command, its
// arguments, the entry's env over a minimal one) and completes an MCP
// session with it: tools listed, a Python function called.
func startEntry(t *testing.T, e writtenEntry) {
	t.Helper()
	cmd := exec.Command(e.Command, e.Args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for k, v := range e.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting %s %v: %v\n%s", e.Command, e.Args, err, stderr.String())
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 3 {
		t.Fatalf("tools/list: %v %+v", err, tools)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "fighterDamage", Arguments: map[string]any{"_1": 15}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "12" {
		t.Fatalf("fighterDamage(15): %v %+v\n%s", err, res, stderr.String())
	}
}

// For every client: install into a scratch home holding another server and
// unrelated keys; the entry is the client's documented shape and what
// --mcp-config prints; the written command serves; a second install
// changes nothing; uninstall gives back the file byte for byte.
func TestInstallEveryClient(t *testing.T) {
	testenv.NeedPython(t)
	manifestPath := filepath.Join(program("combat"), "manifest.json")
	for _, cf := range clientFiles {
		t.Run(cf.client, func(t *testing.T) {
			home := t.TempDir()
			env := scratchEnv(home)
			path := filepath.Join(home, filepath.FromSlash(cf.rel))
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(cf.original), 0o600); err != nil {
				t.Fatal(err)
			}
			want, _, _ := nexusIn(t, home, env, "run", program("combat"), "--mcp-config")
			var printed struct{ MCPServers map[string]writtenEntry }
			if err := json.Unmarshal([]byte(want), &printed); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := nexusIn(t, home, env, "install", program("combat"), "--client", cf.client)
			if code != 0 || !strings.Contains(stderr, "added combat to") {
				t.Fatalf("install: exit %d\n%s", code, stderr)
			}
			after, _ := os.ReadFile(path)
			if backup, _ := os.ReadFile(path + ".nexus-backup"); string(backup) != cf.original {
				t.Errorf("backup:\n%s\nwant the original", backup)
			}
			e, servers := decodeEntry(t, cf.client, cf.servers, after, "combat")
			mc := printed.MCPServers["combat"]
			if e.Command != nexusBin || strings.Join(e.Args, " ") != "mcp "+manifestPath || e.Env["PATH"] == "" || e.Env["PATH"] != mc.Env["PATH"] || e.Command != mc.Command {
				t.Errorf("entry %+v, want what --mcp-config prints: %+v", e, mc)
			}
			if wantType := map[string]string{"vscode": "stdio", "claude-code": "stdio"}[cf.client]; e.Type != wantType {
				t.Errorf("type %q, want %q", e.Type, wantType)
			}
			if len(servers) != 2 {
				t.Errorf("servers after install: %v, want the other one and combat", servers)
			}
			startEntry(t, e)
			_, stderr, code = nexusIn(t, home, env, "install", program("combat"), "--client", cf.client)
			if again, _ := os.ReadFile(path); code != 0 || !bytes.Equal(again, after) || !strings.Contains(stderr, "nothing changed") {
				t.Errorf("second install: exit %d, changed %v\n%s", code, !bytes.Equal(again, after), stderr)
			}
			_, stderr, code = nexusIn(t, home, env, "uninstall", program("combat"), "--client", cf.client)
			if back, _ := os.ReadFile(path); code != 0 || string(back) != cf.original {
				t.Errorf("uninstall: exit %d\n%s\nfile:\n%s\nwant the original:\n%s", code, stderr, back, cf.original)
			}
		})
	}
}

// --dry-run prints the diff and writes nothing; --list finds the clients.
func TestInstallDryRunAndList(t *testing.T) {
	home := t.TempDir()
	env := scratchEnv(home)
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o755)
	out, _, code := nexusIn(t, home, env, "install", program("combat"), "--client", "gemini", "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "--- /dev/null\n+++ "+filepath.Join(home, ".gemini", "settings.json")+"\n@@ -0,0 +1,") || !strings.Contains(out, "+    \"combat\": {\n") {
		t.Errorf("dry run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".gemini")); err == nil {
		t.Error("a dry run wrote")
	}
	if _, stderr, code := nexusIn(t, home, env, "install", program("combat"), "--client", "cursor"); code != 0 {
		t.Fatal(stderr)
	}
	out, _, code = nexusIn(t, home, env, "install", "--list", program("combat"))
	if code != 0 {
		t.Errorf("--list: exit %d", code)
	}
	checkSays(t, "--list", out, []string{"CLIENT", "cursor          user     yes    installed", "gemini          user     no     -", "codex           user     no     -"}, nil)
}

// Bad inputs: each a clear error, the file as it was.
func TestInstallBadInputs(t *testing.T) {
	home := t.TempDir()
	env := scratchEnv(home)
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	codex := filepath.Join(home, ".codex", "config.toml")
	windsurf := filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")
	for path, text := range map[string]string{cursor: "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"}\n", codex: "[mcp_servers.a\ncommand = 1\n", windsurf: "{}\n"} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(text), 0o644)
	}
	os.Chmod(windsurf, 0o444)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
		file string
	}{
		{"malformed JSON", []string{"install", program("combat"), "--client", "cursor"}, 1,
			[]string{"Cursor config " + cursor, "not valid JSON at line 3", "left as it is"}, cursor},
		{"malformed TOML", []string{"install", program("combat"), "--client", "codex"}, 1,
			[]string{"Codex config " + codex, "not valid TOML"}, codex},
		{"read-only", []string{"install", program("combat"), "--client", "windsurf"}, 1,
			[]string{windsurf + " is read-only (mode 0444)"}, windsurf},
		{"unknown client", []string{"install", program("combat"), "--client", "zed"}, 2,
			[]string{`unknown client "zed"`, "claude-desktop, claude-code, cursor, vscode, windsurf, gemini, codex"}, ""},
		{"no such program", []string{"install", filepath.Join(home, "nowhere"), "--client", "gemini"}, 2,
			[]string{"program not found", "nowhere"}, filepath.Join(home, ".gemini", "settings.json")},
		{"no project scope", []string{"install", program("combat"), "--client", "windsurf", "--scope", "project"}, 1,
			[]string{"Windsurf has no project scope"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before []byte
			if tc.file != "" {
				before, _ = os.ReadFile(tc.file)
			}
			_, stderr, code := nexusIn(t, home, env, tc.args...)
			for _, w := range tc.want {
				if code != tc.code || !strings.Contains(stderr, w) {
					t.Errorf("exit %d (want %d), stderr %q lacks %q", code, tc.code, stderr, w)
				}
			}
			if tc.file != "" {
				after, err := os.ReadFile(tc.file)
				if !bytes.Equal(before, after) || before == nil && err == nil {
					t.Errorf("%s changed", tc.file)
				}
			}
		})
	}
}

// A bundle asked for a platform whose C++ pool is missing is refused, by
// the pool's name, and no bundle is written.
func TestBundleMissingPool(t *testing.T) {
	if why := cppAvailable(); why != "" {
		testenv.MissingTool(t, why)
	}
	out := filepath.Join(t.TempDir(), "numeric.mcpb")
	_, stderr, code := runNexus(t, "bundle", program("numeric"), "-o", out, "--author", "T",
		"--platform", "linux/amd64,darwin/arm64", "--binary", "darwin/arm64="+darwinNexus(t))
	if code != 1 || !strings.Contains(stderr, "pools/cpp/pool-cpp.out: built for linux/amd64, so it cannot run on darwin/arm64") || !strings.Contains(stderr, "--allow-missing-pools") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused bundle was written")
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	_, stderr, code = runNexus(t, "bundle", program("numeric"), "-o", out, "--author", "T",
		"--platform", "linux/amd64,darwin/arm64", "--binary", "darwin/arm64="+darwinNexus(t), "--allow-missing-pools")
	if _, err := os.Stat(out); code != 0 || err != nil || !strings.Contains(stderr, "warning: pool 0 (cpp)") {
		t.Errorf("--allow-missing-pools: exit %d\n%s", code, stderr)
	}
}

// The real Claude Code CLI: nexus install --client claude-code --scope
// project writes .mcp.json in a scratch project; claude mcp list shows the
// server pending approval, then (approved as its prompt would record it)
// connected, which it finds by starting nexus and completing the MCP
// handshake; no network or API key is needed for that. nexus uninstall
// takes it out again.
func TestInstallClaudeCode(t *testing.T) {
	testenv.Long(t)
	claude := clientTool(t, "claude")
	testenv.NeedPython(t)
	home := t.TempDir()
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := scratchEnv(home)
	env = append(env, "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "NO_COLOR=1")
	list := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, claude, "mcp", "list")
		cmd.Dir, cmd.Env = project, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude mcp list: %v\n%s", err, out)
		}
		return string(out)
	}
	_, stderr, code := nexusIn(t, project, env, "install", program("combat"), "--client", "claude-code", "--scope", "project")
	if code != 0 || !strings.Contains(stderr, "approve") {
		t.Fatalf("install: exit %d\n%s", code, stderr)
	}
	mcpJSON, err := os.ReadFile(filepath.Join(project, ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := decodeEntry(t, "claude-code", []string{"mcpServers"}, mcpJSON, "combat"); e.Type != "stdio" || e.Command != nexusBin {
		t.Fatalf(".mcp.json: %s", mcpJSON)
	}
	line := regexp.MustCompile(`(?m)^combat: .*$`)
	if got := line.FindString(list()); !strings.Contains(got, nexusBin+" mcp "+filepath.Join(program("combat"), "manifest.json")) || !strings.Contains(got, "Pending approval") {
		t.Errorf("before approval: %q, want combat pending approval", got)
	}
	// What Claude Code's approval prompt records: the project trusted and
	// its .mcp.json server enabled, in ~/.claude.json (which claude made).
	state := map[string]any{}
	if b, err := os.ReadFile(filepath.Join(home, ".claude.json")); err == nil {
		json.Unmarshal(b, &state)
	}
	state["projects"] = map[string]any{project: map[string]any{"hasTrustDialogAccepted": true, "enabledMcpjsonServers": []string{"combat"}}}
	b, _ := json.Marshal(state)
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := line.FindString(list()); !strings.Contains(got, "Connected") {
		t.Errorf("approved: %q, want combat connected", got)
	}
	_, stderr, code = nexusIn(t, project, env, "uninstall", program("combat"), "--client", "claude-code", "--scope", "project")
	if code != 0 || !strings.Contains(stderr, "removed combat") {
		t.Fatalf("uninstall: exit %d\n%s", code, stderr)
	}
	if got := list(); line.MatchString(got) {
		t.Errorf("after uninstall claude still lists combat:\n%s", got)
	}
}
