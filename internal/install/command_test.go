package install

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// command is a Command on a scratch home, its output kept.
func command(t *testing.T, dryRun, underWSL bool) (c *Command, stdout, stderr *bytes.Buffer) {
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	return &Command{Locator: scratch(t), Stdout: stdout, Stderr: stderr, DryRun: dryRun, UnderWSL: underWSL}, stdout, stderr
}

// What a run tells the user, step by step: each step runs on the file the
// steps before it left.
func TestCommandSaysWhatItDid(t *testing.T) {
	type step struct {
		name      string
		uninstall bool
		dryRun    bool
		scope     string
		wantOut   string   // stdout holds this ("" : stdout empty)
		wantErr   []string // stderr holds each
		unwanted  string   // stderr lacks this
		changes   bool     // the file changes
	}
	tests := []struct {
		client, rel string
		underWSL    bool
		steps       []step
	}{
		{"cursor", ".cursor/mcp.json", false, []step{
			{name: "dry run of a new entry", dryRun: true, wantOut: "+++ ", unwanted: "nexus:"},
			{name: "install", changes: true, wantErr: []string{
				"nexus: added combat to Cursor (", "mcp.json) (the file as it was: ", "mcp.json" + BackupSuffix + ")\n",
				"nexus: restart Cursor to load it\n"}},
			{name: "again", wantErr: []string{"nexus: combat is already in Cursor (", "): nothing changed\n"}, unwanted: "restart"},
			{name: "dry run of no change", dryRun: true, wantErr: []string{"nexus: Cursor (", "): no change (unchanged)\n"}},
			{name: "uninstall", uninstall: true, changes: true, wantErr: []string{"nexus: removed combat from Cursor ("}, unwanted: "restart"},
			{name: "uninstall again", uninstall: true, wantErr: []string{"nexus: no server named combat in Cursor (", "): nothing changed\n"}},
		}},
		{"claude-code", ".mcp.json", false, []step{
			{name: "project scope", scope: "project", changes: true, wantErr: []string{
				"nexus: restart Claude Code to load it; Claude Code asks you to approve a project's servers the first time it starts there\n"}},
		}},
		{"claude-desktop", ".config/Claude/claude_desktop_config.json", true, []step{
			{name: "under WSL", changes: true, wantErr: []string{"nexus: this is WSL: this installs into a Linux Claude Desktop", "restart Claude Desktop"}},
		}},
		{"claude-desktop", ".config/Claude/claude_desktop_config.json", false, []step{
			{name: "not under WSL", changes: true, wantErr: []string{"restart Claude Desktop"}, unwanted: "WSL"},
		}},
	}
	for _, tt := range tests {
		c, stdout, stderr := command(t, false, tt.underWSL)
		for _, s := range tt.steps {
			t.Run(tt.client+"/"+s.name, func(t *testing.T) {
				stdout.Reset()
				stderr.Reset()
				base := c.Locator.Home
				if s.scope == "project" {
					base = c.Locator.Project
				}
				path := filepath.Join(base, tt.rel)
				before, _ := os.ReadFile(path)
				r := request(t, tt.client)
				r.Scope = s.scope
				c.DryRun = s.dryRun
				var err error
				if s.uninstall {
					err = c.Uninstall(r)
				} else {
					err = c.Install(r)
				}
				if err != nil {
					t.Fatal(err)
				}
				if out := stdout.String(); s.wantOut == "" && out != "" || !strings.Contains(out, s.wantOut) {
					t.Errorf("stdout %q, want it to hold %q", out, s.wantOut)
				}
				for _, want := range s.wantErr {
					if !strings.Contains(stderr.String(), want) {
						t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
					}
				}
				if s.unwanted != "" && strings.Contains(stderr.String(), s.unwanted) {
					t.Errorf("stderr has %q:\n%s", s.unwanted, stderr.String())
				}
				after, _ := os.ReadFile(path)
				if changed := !bytes.Equal(before, after); changed != s.changes {
					t.Errorf("file changed: %v, want %v", changed, s.changes)
				}
			})
		}
	}
}

// --list names a file it cannot read on stderr; one that does not parse is
// told in the table alone.
func TestCommandList(t *testing.T) {
	c, stdout, stderr := command(t, false, false)
	write(t, filepath.Join(c.Locator.Home, ".cursor", "mcp.json"), `{"mcpServers": {`, 0o644)
	unreadable := filepath.Join(c.Locator.Home, ".gemini", "settings.json")
	if err := os.MkdirAll(unreadable, 0o755); err != nil { // a directory: reading it fails
		t.Fatal(err)
	}
	if err := c.List("combat", "/home/u/combat/manifest.json"); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // client: its row
	for _, line := range strings.Split(stdout.String(), "\n") {
		name, _, _ := strings.Cut(line, " ")
		rows[name] = strings.Join(strings.Fields(line), " ")
	}
	for client, want := range map[string]string{
		"CLIENT": "CLIENT SCOPE FOUND combat FILE",
		"cursor": "cursor user yes unreadable: cannot read the file: not valid JSON",
		"gemini": "gemini user yes unreadable: read " + unreadable,
	} {
		if !strings.HasPrefix(rows[client], want) {
			t.Errorf("row %q, want it to begin %q", rows[client], want)
		}
	}
	if got := stderr.String(); !strings.HasPrefix(got, "nexus: "+unreadable+": ") || strings.Contains(got, "mcp.json") {
		t.Errorf("stderr:\n%s\nwant the unreadable settings.json alone", got)
	}
}
