package install

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/clientconfig"
)

func scratch(t *testing.T) clientconfig.Locator {
	home := t.TempDir()
	return clientconfig.Locator{GOOS: "linux", Home: home, Getenv: func(string) string { return "" }, Project: filepath.Join(home, "project")}
}

func request(t *testing.T, client string) Request {
	t.Helper()
	c, err := clientconfig.FindClient(client)
	if err != nil {
		t.Fatal(err)
	}
	return Request{Client: c, Server: clientconfig.Stdio{Name: "combat", Nexus: "/usr/local/bin/nexus",
		Manifest: "/home/u/combat/manifest.json", Env: map[string]string{"PATH": "/usr/bin:/bin"}}}
}

func write(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInstallWritesBackupAndIsIdempotent(t *testing.T) {
	l := scratch(t)
	r := request(t, "cursor")
	path := filepath.Join(l.Home, ".cursor", "mcp.json")
	orig := "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  }\n}\n"
	write(t, path, orig, 0o600)
	p, err := Install(l, r)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != path || p.Change != clientconfig.Added || !p.Changed() {
		t.Fatalf("plan: %s %s changed=%v", p.Path, p.Change, p.Changed())
	}
	diff := p.Diff()
	for _, want := range []string{"--- " + path, "+++ " + path, "@@ -1,5 +1,15 @@", "-    \"other\": {\"command\": \"x\"}\n", "+    \"other\": {\"command\": \"x\"},\n", "+      \"command\": \"/usr/local/bin/nexus\",\n", "   }\n }\n"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if read(t, path) != orig {
		t.Fatal("planning wrote the file")
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if read(t, path+BackupSuffix) != orig || read(t, path) != string(p.After) {
		t.Fatal("backup or new file wrong")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", st.Mode().Perm())
	}
	again, err := Install(l, r)
	if err != nil || again.Changed() || again.Change != clientconfig.Unchanged || again.Diff() != "" {
		t.Fatalf("second install: %v %s %q", err, again.Change, again.Diff())
	}
	os.Remove(path + BackupSuffix)
	if err := again.Apply(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + BackupSuffix); err == nil {
		t.Error("an unchanged install wrote a backup")
	}
	un, err := Uninstall(l, r)
	if err != nil || un.Change != clientconfig.Removed {
		t.Fatalf("uninstall: %v %s", err, un.Change)
	}
	if err := un.Apply(); err != nil {
		t.Fatal(err)
	}
	if read(t, path) != orig {
		t.Fatalf("after uninstall:\n%s\nwant\n%s", read(t, path), orig)
	}
}

func TestInstallCreatesFile(t *testing.T) {
	l := scratch(t)
	r := request(t, "codex")
	r.Scope = "project"
	p, err := Install(l, r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Diff(), "--- /dev/null\n+++ "+filepath.Join(l.Project, ".codex", "config.toml")+"\n@@ -0,0 +1,") {
		t.Errorf("diff of a new file:\n%s", p.Diff())
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(l.Project, ".codex", "config.toml")); !strings.HasPrefix(got, "[mcp_servers.combat]\ncommand = \"/usr/local/bin/nexus\"\n") {
		t.Errorf("new file:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(l.Project, ".codex", "config.toml"+BackupSuffix)); err == nil {
		t.Error("a backup of a file that did not exist")
	}
}

func TestInstallRefusesAndLeavesFile(t *testing.T) {
	l := scratch(t)
	for _, tc := range []struct {
		client, rel, text string
		mode              os.FileMode
		want              []string
	}{
		{"claude-desktop", ".config/Claude/claude_desktop_config.json", "{\"mcpServers\": {\n", 0o644,
			[]string{"Claude Desktop config", "claude_desktop_config.json", "not valid JSON at line 2", "left as it is"}},
		{"windsurf", ".codeium/windsurf/mcp_config.json", "{\"mcpServers\": {}}\n", 0o444,
			[]string{"mcp_config.json is read-only (mode 0444)", "chmod u+w"}},
		{"codex", ".codex/config.toml", "[mcp_servers.combat]\ncommand = \"other\"\n", 0o644,
			[]string{"config.toml", `already there, running "other"`, "--force"}},
		{"gemini", ".gemini/settings.json", "{\"mcpServers\": 3}", 0o644,
			[]string{"settings.json", `"mcpServers" is not an object`}},
	} {
		path := filepath.Join(l.Home, tc.rel)
		write(t, path, tc.text, tc.mode)
		_, err := Install(l, request(t, tc.client))
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want an error with %q", tc.client, err, want)
			}
		}
		if read(t, path) != tc.text {
			t.Errorf("%s: the file changed", tc.client)
		}
	}
}

// A file rewritten by its client between plan and apply is not clobbered.
func TestApplyNoticesAChangedFile(t *testing.T) {
	l := scratch(t)
	path := filepath.Join(l.Home, ".gemini", "settings.json")
	write(t, path, "{}\n", 0o644)
	p, err := Install(l, request(t, "gemini"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, "{\"theme\": \"new\"}\n", 0o644)
	if err := p.Apply(); err == nil || !strings.Contains(err.Error(), "changed while nexus was editing it") {
		t.Fatalf("Apply: %v", err)
	}
	if read(t, path) != "{\"theme\": \"new\"}\n" {
		t.Fatal("the client's write was lost")
	}
}

func TestInstallFollowsSymlink(t *testing.T) {
	l := scratch(t)
	real := filepath.Join(l.Home, "dotfiles", "claude.json")
	write(t, real, "{}\n", 0o644)
	if err := os.Symlink(real, filepath.Join(l.Home, ".claude.json")); err != nil {
		t.Fatal(err)
	}
	p, err := Install(l, request(t, "claude-code"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(l.Home, ".claude.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if !strings.Contains(read(t, real), `"combat"`) {
		t.Fatal("the linked file was not edited")
	}
}

func TestList(t *testing.T) {
	l := scratch(t)
	write(t, filepath.Join(l.Home, ".cursor", "mcp.json"), `{"mcpServers": {}}`, 0o644)
	if err := os.MkdirAll(filepath.Join(l.Home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := Install(l, request(t, "vscode"))
	if err != nil || p.Apply() != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(l.Project, ".mcp.json"), `{"mcpServers": {"combat": {"command": "uvx"}}}`, 0o644)
	found := List(l, "combat", "/home/u/combat/manifest.json")
	var b bytes.Buffer
	if err := WriteList(&b, found, "combat"); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"cursor          user     yes    no ",
		"codex           user     yes    no ",
		"vscode          user     yes    installed ",
		"claude-code     project  yes    name taken ",
		"windsurf        user     no     - ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("list lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "cursor          project") {
		t.Errorf("a project scope with no file is listed:\n%s", got)
	}
}
