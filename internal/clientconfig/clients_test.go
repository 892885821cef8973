package clientconfig

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

var combat = Stdio{Name: "combat", Nexus: "/opt/nexus/bin/nexus", Manifest: "/home/u/combat/manifest.json",
	Env: map[string]string{"PATH": "/opt/conda/bin:/usr/bin", "CONDA_PREFIX": "/opt/conda"}}

func client(t testing.TB, name string) *Client {
	t.Helper()
	c, err := FindClient(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Adding to a file that holds other servers and keys, then removing, gives
// back the file byte for byte, whatever its indentation and comments; the
// second add changes nothing.
func TestJSONAddRemoveRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, client, src string
		want              string // the added member, as it must appear
	}{
		{"two spaces", "claude-desktop", "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  },\n  \"theme\": \"dark\"\n}\n",
			"\n    \"combat\": {\n      \"command\": \"/opt/nexus/bin/nexus\",\n"},
		{"four spaces", "cursor", "{\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}\n    }\n}",
			",\n        \"combat\": {\n            \"command\""},
		{"tabs", "windsurf", "{\n\t\"mcpServers\": {\n\t\t\"other\": {\"command\": \"x\"}\n\t},\n\t\"x\": [1, 2]\n}\n",
			",\n\t\t\"combat\": {\n\t\t\t\"command\""},
		{"one line", "gemini", `{"mcpServers":{"other":{"command":"x"}},"ui":{"theme":"x"}}`,
			`,"combat":{"command":"/opt/nexus/bin/nexus","args":["mcp","/home/u/combat/manifest.json"],"env":`},
		{"comments and trailing comma", "vscode", "// my servers\n{\n  \"servers\": {\n    /* the old one */\n    \"other\": {\"type\": \"stdio\", \"command\": \"x\"},\n  },\n  \"inputs\": [],\n}\n",
			"\n    \"combat\": {\n      \"type\": \"stdio\",\n      \"command\""},
		{"no servers object", "claude-code", "{\n  \"numStartups\": 3,\n  \"projects\": {}\n}\n",
			",\n  \"mcpServers\": {\n    \"combat\": {\n      \"type\": \"stdio\""},
		{"empty servers object", "cursor", "{\n  \"mcpServers\": {}\n}\n",
			"{\n    \"combat\": {\n      \"command\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := client(t, tc.client)
			out, change, err := c.Add([]byte(tc.src), combat, false)
			if err != nil {
				t.Fatal(err)
			}
			if change != Added || !strings.Contains(string(out), tc.want) {
				t.Fatalf("Add: %s, text:\n%s\nwant it to contain %q", change, out, tc.want)
			}
			if _, err := parseJSONDoc(out, c.JSONC); err != nil {
				t.Fatalf("the result does not parse: %v\n%s", err, out)
			}
			again, change, err := c.Add(out, combat, false)
			if err != nil || change != Unchanged || string(again) != string(out) {
				t.Fatalf("second Add: %s, %v; changed: %v", change, err, string(again) != string(out))
			}
			back, change, err := c.Remove(out, "combat", combat.Manifest, false)
			if err != nil || change != Removed {
				t.Fatalf("Remove: %s, %v", change, err)
			}
			if tc.name == "no servers object" { // the object nexus made stays, empty
				if !strings.Contains(string(back), `"mcpServers": {}`) {
					t.Fatalf("after Remove:\n%s", back)
				}
				return
			}
			if string(back) != tc.src {
				t.Fatalf("after Remove:\n%s\nwant the original:\n%s", back, tc.src)
			}
		})
	}
}

// The entry holds what --mcp-config prints, in the client's shape.
func TestJSONEntryShape(t *testing.T) {
	for _, tc := range []struct {
		client string
		want   string
	}{
		{"claude-desktop", `{"mcpServers":{"combat":{"command":"/opt/nexus/bin/nexus","args":["mcp","/home/u/combat/manifest.json"],"env":{"CONDA_PREFIX":"/opt/conda","PATH":"/opt/conda/bin:/usr/bin"}}}}`},
		{"vscode", `{"servers":{"combat":{"type":"stdio","command":"/opt/nexus/bin/nexus","args":["mcp","/home/u/combat/manifest.json"],"env":{"CONDA_PREFIX":"/opt/conda","PATH":"/opt/conda/bin:/usr/bin"}}}}`},
		{"claude-code", `{"mcpServers":{"combat":{"type":"stdio","command":"/opt/nexus/bin/nexus","args":["mcp","/home/u/combat/manifest.json"],"env":{"CONDA_PREFIX":"/opt/conda","PATH":"/opt/conda/bin:/usr/bin"}}}}`},
	} {
		out, _, err := client(t, tc.client).Add(nil, combat, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := compact(t, out); got != tc.want {
			t.Errorf("%s: new file %s\nwant          %s", tc.client, got, tc.want)
		}
		if got := compact(t, combat.JSON()); tc.client == "claude-desktop" && got != tc.want {
			t.Errorf("--mcp-config prints %s, install writes %s", got, tc.want)
		}
	}
}

func TestJSONNamesAndForce(t *testing.T) {
	c := client(t, "claude-desktop")
	src := []byte(`{"mcpServers": {"combat": {"command": "uvx", "args": ["combat-server"]}}}`)
	_, _, err := c.Add(src, combat, false)
	var taken *TakenError
	if !errors.As(err, &taken) || taken.Command != "uvx" || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("a taken name: %v, want a TakenError naming uvx and --force", err)
	}
	if _, _, err := c.Remove(src, "combat", combat.Manifest, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("removing another's server: %v, want a refusal", err)
	}
	out, change, err := c.Add(src, combat, true)
	if err != nil || change != Replaced || !strings.Contains(string(out), combat.Nexus) || strings.Contains(string(out), "uvx") {
		t.Fatalf("--force: %s %v\n%s", change, err, out)
	}
	// nexus's own entry for the same program, from another PATH: updated.
	moved := combat
	moved.Env = map[string]string{"PATH": "/usr/bin"}
	out2, change, err := c.Add(out, moved, false)
	if err != nil || change != Updated || !strings.Contains(string(out2), `"env":{"PATH":"/usr/bin"}`) {
		t.Fatalf("reinstall with another PATH: %s %v\n%s", change, err, out2)
	}
	// Removing by name alone takes any nexus entry.
	if _, change, err := c.Remove(out2, "combat", "", false); err != nil || change != Removed {
		t.Fatalf("remove by name: %s %v", change, err)
	}
	if _, change, _ := c.Remove(out2, "nothere", "", false); change != Absent {
		t.Fatalf("removing an absent server: %s", change)
	}
}

func TestJSONBadFiles(t *testing.T) {
	for _, tc := range []struct{ client, src, want string }{
		{"claude-desktop", `{"mcpServers": {"a": 1,}}`, "line 1, column 23: a comma"},
		{"claude-desktop", "{\n  // a comment\n}", "line 2, column 3"},
		{"cursor", `[1, 2]`, "expected a JSON object"},
		{"cursor", `{"mcpServers": []}`, `"mcpServers" is not an object`},
		{"vscode", "{\n  \"servers\": {\n    \"a\": \"b\n  }\n}", "line 3"},
		{"gemini", `{"mcpServers": {}} x`, "after the top-level object"},
		{"gemini", `{"a": 1 /* never closed`, "never closed"},
	} {
		_, _, err := client(t, tc.client).Add([]byte(tc.src), combat, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v, want an error with %q", tc.client, tc.src, err, tc.want)
		}
	}
}

// Codex: appended as tables, removed to the byte, the rest intact.
func TestTOMLAddRemoveRoundTrip(t *testing.T) {
	c := client(t, "codex")
	for _, src := range []string{
		"",
		"model = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\nargs = [\"a\"]\n\n[profiles.fast]\nmodel = \"o4-mini\" # fast\n",
		"# only a comment\nnotes = '''\n[mcp_servers.combat]\nnot a header\n'''\n",
		"[mcp_servers.other]\ncommand = \"x\"\nenv = { A = \"1\" }\n[projects.\"/home/u/p\"]\ntrust_level = \"trusted\"",
	} {
		out, change, err := c.Add([]byte(src), combat, false)
		if err != nil || change != Added {
			t.Fatalf("Add to %q: %s %v", src, change, err)
		}
		var got struct {
			MCPServers map[string]struct {
				Command string
				Args    []string
				Env     map[string]string
			} `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(string(out), &got); err != nil {
			t.Fatalf("result does not parse: %v\n%s", err, out)
		}
		s := got.MCPServers["combat"]
		if s.Command != combat.Nexus || len(s.Args) != 2 || s.Args[1] != combat.Manifest || s.Env["PATH"] != combat.Env["PATH"] {
			t.Fatalf("decoded %+v from\n%s", s, out)
		}
		if again, change, err := c.Add(out, combat, false); err != nil || change != Unchanged || string(again) != string(out) {
			t.Fatalf("second Add: %s %v", change, err)
		}
		back, change, err := c.Remove(out, "combat", combat.Manifest, false)
		if err != nil || change != Removed {
			t.Fatalf("Remove: %s %v", change, err)
		}
		want := src
		if src != "" && !strings.HasSuffix(src, "\n") {
			want += "\n" // the line nexus ended before its tables
		}
		if string(back) != want {
			t.Fatalf("after Remove:\n%q\nwant\n%q", back, want)
		}
	}
}

func TestTOMLUpdateAndRefusals(t *testing.T) {
	c := client(t, "codex")
	// An older nexus entry in the middle of the file, with a tools table.
	src := "[mcp_servers.combat]\ncommand = \"/old/nexus\"\nargs = [\"mcp\", \"/home/u/combat/manifest.json\"]\n\n[mcp_servers.combat.tools.rollAdv]\napproval_mode = \"approve\"\n\n[other]\nx = 1\n"
	out, change, err := c.Add([]byte(src), combat, false)
	if err != nil || change != Updated {
		t.Fatalf("update: %s %v", change, err)
	}
	if strings.Contains(string(out), "/old/nexus") || !strings.HasPrefix(string(out), "[other]\nx = 1\n") {
		t.Fatalf("updated file:\n%s", out)
	}
	for _, tc := range []struct{ src, want string }{
		{"[mcp_servers.combat]\ncommand = \"uvx\"\n", "--force"},
		{"mcp_servers = { combat = { command = \"/old/nexus\", args = [\"mcp\", \"/home/u/combat/manifest.json\"] } }\n", "edit it by hand"},
		{"[mcp_servers]\ncombat.command = \"/old/nexus\"\ncombat.args = [\"mcp\", \"/home/u/combat/manifest.json\"]\n", "edit it by hand"},
		{"a = \n", "not valid TOML"},
	} {
		_, _, err := c.Add([]byte(tc.src), combat, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add to %q: %v, want an error with %q", tc.src, err, tc.want)
		}
	}
	if _, _, err := c.Add([]byte("a = \n"), combat, false); !errors.Is(err, ErrParse) {
		t.Errorf("a broken file: %v is not ErrParse", err)
	}
}

func TestTOMLHeaderKey(t *testing.T) {
	for line, want := range map[string]string{
		`[mcp_servers.combat]`:                 "mcp_servers|combat",
		`[ mcp_servers . "my server" ] # note`: "mcp_servers|my server",
		`[[mcp_servers.'a.b'.tools]]`:          "mcp_servers|a.b|tools",
	} {
		got, err := tomlHeaderKey(line)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("tomlHeaderKey(%s) = %q, %v; want %s", line, got, err, want)
		}
	}
	// A name that needs quotes round-trips.
	odd := combat
	odd.Name = "my server.v2"
	c := client(t, "codex")
	out, _, err := c.Add([]byte("x = 1\n"), odd, false)
	if err != nil {
		t.Fatal(err)
	}
	if back, _, err := c.Remove(out, odd.Name, odd.Manifest, false); err != nil || string(back) != "x = 1\n" {
		t.Fatalf("Remove: %v\n%s", err, back)
	}
}

func TestPaths(t *testing.T) {
	env := map[string]string{}
	l := Locator{GOOS: "linux", Home: "/home/u", Getenv: func(k string) string { return env[k] }, Project: "/proj/p"}
	mac := l
	mac.GOOS = "darwin"
	for _, tc := range []struct {
		client, scope string
		l             Locator
		env           map[string]string
		want          string
	}{
		{"claude-desktop", "", mac, nil, "/home/u/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", "user", l, nil, "/home/u/.config/Claude/claude_desktop_config.json"},
		{"claude-desktop", "", l, map[string]string{"XDG_CONFIG_HOME": "/x"}, "/x/Claude/claude_desktop_config.json"},
		{"claude-code", "", l, nil, "/home/u/.claude.json"},
		{"claude-code", "", l, map[string]string{"CLAUDE_CONFIG_DIR": "/c"}, "/c/.claude.json"},
		{"claude-code", "project", l, nil, "/proj/p/.mcp.json"},
		{"cursor", "", mac, nil, "/home/u/.cursor/mcp.json"},
		{"cursor", "project", l, nil, "/proj/p/.cursor/mcp.json"},
		{"vscode", "", mac, nil, "/home/u/Library/Application Support/Code/User/mcp.json"},
		{"vscode", "", l, nil, "/home/u/.config/Code/User/mcp.json"},
		{"vscode", "project", l, nil, "/proj/p/.vscode/mcp.json"},
		{"windsurf", "", l, nil, "/home/u/.codeium/windsurf/mcp_config.json"},
		{"gemini", "", l, nil, "/home/u/.gemini/settings.json"},
		{"gemini", "project", l, nil, "/proj/p/.gemini/settings.json"},
		{"codex", "", l, nil, "/home/u/.codex/config.toml"},
		{"codex", "", l, map[string]string{"CODEX_HOME": "/ch"}, "/ch/config.toml"},
		{"codex", "project", l, nil, "/proj/p/.codex/config.toml"},
	} {
		env = tc.env
		got, err := client(t, tc.client).Path(tc.scope, tc.l)
		if err != nil || got != filepath.FromSlash(tc.want) {
			t.Errorf("%s %s on %s: %s, %v; want %s", tc.client, tc.scope, tc.l.GOOS, got, err, tc.want)
		}
	}
	env = nil
	for _, c := range []string{"claude-desktop", "windsurf"} {
		if _, err := client(t, c).Path("project", l); err == nil || !strings.Contains(err.Error(), "no project scope") {
			t.Errorf("%s project scope: %v", c, err)
		}
	}
	if _, err := FindClient("zed"); err == nil || !strings.Contains(err.Error(), "claude-desktop, claude-code") {
		t.Errorf("unknown client: %v", err)
	}
}

func TestHas(t *testing.T) {
	c := client(t, "cursor")
	out, _, _ := c.Add(nil, combat, false)
	for _, tc := range []struct {
		name, manifest string
		found, ours    bool
	}{
		{"combat", combat.Manifest, true, true},
		{"combat", "/elsewhere/manifest.json", true, false},
		{"other", combat.Manifest, false, false},
	} {
		found, ours, err := c.Has(out, tc.name, tc.manifest)
		if err != nil || found != tc.found || ours != tc.ours {
			t.Errorf("Has(%s, %s) = %v %v %v", tc.name, tc.manifest, found, ours, err)
		}
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
}

// Any file a client can read takes the entry and gives it back: the result
// parses, holds the entry, and removing it restores every byte (when the
// servers object was there before, with members).
func FuzzJSONAddRemove(f *testing.F) {
	for _, seed := range []string{
		"{}", "{\n}\n", `{"mcpServers":{}}`, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n  }\n}\n",
		"{\n\t\"servers\": {\n\t\t\"a\": 1,\n\t},\n}", "// c\n{ /* d */ \"servers\": { } }", `{"mcpServers":{"a":[1,{"b":null}]},"x":"\u00e9\"}"}`,
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, src string, jsonc bool) {
		c := client(t, "claude-desktop")
		if jsonc {
			c = client(t, "vscode")
		}
		root, err := parseJSONDoc([]byte(src), c.JSONC)
		if err != nil {
			return
		}
		if !c.JSONC && !json.Valid([]byte(src)) {
			t.Fatalf("parsed a file that is not JSON: %q", src)
		}
		d := &jsonDoc{src: []byte(src), root: root}
		servers, err := d.servers(c.Servers)
		if err != nil {
			return
		}
		if servers != nil && servers.member("combat") != nil {
			return
		}
		out, change, err := c.Add([]byte(src), combat, false)
		if err != nil || change != Added {
			t.Fatalf("Add to %q: %s %v", src, change, err)
		}
		if _, err := parseJSONDoc(out, c.JSONC); err != nil {
			t.Fatalf("Add to %q gave %q, which does not parse: %v", src, out, err)
		}
		if found, ours, err := c.Has(out, "combat", combat.Manifest); !found || !ours || err != nil {
			t.Fatalf("Add to %q gave %q without the entry", src, out)
		}
		back, change, err := c.Remove(out, "combat", combat.Manifest, false)
		if err != nil || change != Removed {
			t.Fatalf("Remove from %q: %s %v", out, change, err)
		}
		if found, _, _ := c.Has(back, "combat", ""); found {
			t.Fatalf("Add then Remove on %q left the entry: %q", src, back)
		}
		// Byte for byte when the servers object had members (an empty one
		// comes back as {}).
		if servers != nil && len(servers.members) > 0 && string(back) != src {
			t.Fatalf("Add then Remove on %q gave %q", src, back)
		}
	})
}

// Codex's TOML likewise: an Add nexus cannot check is refused, never
// written wrong; one it makes parses with the entry, and Remove restores
// the text (with the final newline Add ends the file with).
func FuzzTOMLAddRemove(f *testing.F) {
	for _, seed := range []string{
		"", "a = 1", "[mcp_servers.x]\ncommand = \"y\"\n", "s = \"\"\"\n[mcp_servers.combat]\n\"\"\"\n[t]\n",
		"mcp_servers = {}\n", "[[arr]]\nx = [\n [1],\n]\n", "k = 'lit' # c\n[a.\"b.c\"]\n",
	} {
		f.Add(seed)
	}
	c := client(f, "codex")
	f.Fuzz(func(t *testing.T, src string) {
		d, err := parseTOMLDoc([]byte(src))
		if err != nil {
			return
		}
		if s, err := d.server("combat"); err != nil || s != nil {
			return
		}
		out, change, err := c.Add([]byte(src), combat, false)
		if err != nil {
			if !strings.Contains(err.Error(), "edit it by hand") {
				t.Fatalf("Add to %q: %v", src, err)
			}
			return
		}
		if change != Added {
			t.Fatalf("Add to %q: %s", src, change)
		}
		if found, ours, err := c.Has(out, "combat", combat.Manifest); !found || !ours || err != nil {
			t.Fatalf("Add to %q gave %q without the entry (%v)", src, out, err)
		}
		back, _, err := c.Remove(out, "combat", combat.Manifest, false)
		if err != nil {
			t.Fatalf("Remove from %q: %v", out, err)
		}
		want := src
		if src != "" && !strings.HasSuffix(src, "\n") {
			want += "\n"
		}
		if string(back) != want {
			t.Fatalf("Add then Remove on %q gave %q", src, back)
		}
	})
}

// A key stands bare only when TOML allows it; any other is quoted.
func TestTOMLKey(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{"PATH", "PATH"},
		{"my-server_2", "my-server_2"},
		{"", `""`},
		{"a.b", `"a.b"`},
		{"a b", `"a b"`},
		{"é", `"é"`},
	} {
		if got := tomlKey(c.key); got != c.want {
			t.Errorf("tomlKey(%q) = %s, want %s", c.key, got, c.want)
		}
	}
}
