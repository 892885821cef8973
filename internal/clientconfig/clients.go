package clientconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
)

// Client is an MCP client whose configuration file nexus can edit: where
// the file is, for each scope, and the shape of a stdio server in it. Each
// location and shape is the client's documented one (see Docs).
type Client struct {
	Name  string // as --client takes it
	Title string
	// Servers is the path of keys to the object of servers.
	Servers []string
	// TOML: the file is TOML (Codex); else JSON, with comments when JSONC.
	TOML  bool
	JSONC bool
	// Typed entries carry "type": "stdio" (VS Code requires it; Claude
	// Code writes it).
	Typed  bool
	Scopes []string // the first is the default
	Docs   string
	// path is the file for a scope.
	path func(scope string, l Locator) string
	// Marks are files or directories whose presence says the client is
	// installed for this user, beside its config file.
	marks func(l Locator) []string
}

// Locator says where a user's files are: the operating system (GOOS), the
// home directory, the environment and the project directory (for project
// scope). Tests point it at a scratch home.
type Locator struct {
	GOOS    string
	Home    string
	Getenv  func(string) string
	Project string
}

func (l Locator) env(name string) string {
	if l.Getenv == nil {
		return ""
	}
	return l.Getenv(name)
}

// configHome is where the OS keeps per-user application settings:
// ~/Library/Application Support on macOS, $XDG_CONFIG_HOME (~/.config) on
// Linux.
func (l Locator) configHome() string {
	if l.GOOS == "darwin" {
		return filepath.Join(l.Home, "Library", "Application Support")
	}
	if x := l.env("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return x
	}
	return filepath.Join(l.Home, ".config")
}

// Scopes.
const (
	ScopeUser    = "user"
	ScopeProject = "project"
)

// inHomeOrProject is where a client keeps file in its own folder dir: in
// the user's home for the user scope, at the project's root for a project.
func inHomeOrProject(dir, file string) func(string, Locator) string {
	return func(scope string, l Locator) string {
		base := l.Home
		if scope == ScopeProject {
			base = l.Project
		}
		return filepath.Join(base, dir, file)
	}
}

// Clients are the clients nexus installs into, by name.
var Clients = []*Client{
	{
		Name: "claude-desktop", Title: "Claude Desktop", Servers: []string{"mcpServers"},
		Scopes: []string{ScopeUser},
		Docs:   "modelcontextprotocol.io/quickstart/user: ~/Library/Application Support/Claude/claude_desktop_config.json on macOS; ~/.config/Claude on Linux builds",
		path: func(_ string, l Locator) string {
			return filepath.Join(l.configHome(), "Claude", "claude_desktop_config.json")
		},
		marks: func(l Locator) []string { return []string{filepath.Join(l.configHome(), "Claude")} },
	},
	{
		Name: "claude-code", Title: "Claude Code", Servers: []string{"mcpServers"}, Typed: true,
		Scopes: []string{ScopeUser, ScopeProject},
		Docs:   "docs.claude.com/en/docs/claude-code/mcp: user scope in ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json when set), project scope in .mcp.json at the project root",
		path: func(scope string, l Locator) string {
			if scope == ScopeProject {
				return filepath.Join(l.Project, ".mcp.json")
			}
			if d := l.env("CLAUDE_CONFIG_DIR"); d != "" {
				return filepath.Join(d, ".claude.json")
			}
			return filepath.Join(l.Home, ".claude.json")
		},
		marks: func(l Locator) []string { return []string{filepath.Join(l.Home, ".claude")} },
	},
	{
		Name: "cursor", Title: "Cursor", Servers: []string{"mcpServers"},
		Scopes: []string{ScopeUser, ScopeProject},
		Docs:   "cursor.com/docs/mcp: ~/.cursor/mcp.json, or .cursor/mcp.json in a project",
		path:   inHomeOrProject(".cursor", "mcp.json"),
		marks:  func(l Locator) []string { return []string{filepath.Join(l.Home, ".cursor")} },
	},
	{
		Name: "vscode", Title: "VS Code", Servers: []string{"servers"}, JSONC: true, Typed: true,
		Scopes: []string{ScopeUser, ScopeProject},
		Docs:   "code.visualstudio.com/docs/copilot/reference/mcp-configuration: mcp.json in the user profile (Code/User), or .vscode/mcp.json in a workspace; \"servers\", each with \"type\"",
		path: func(scope string, l Locator) string {
			if scope == ScopeProject {
				return filepath.Join(l.Project, ".vscode", "mcp.json")
			}
			return filepath.Join(l.configHome(), "Code", "User", "mcp.json")
		},
		marks: func(l Locator) []string { return []string{filepath.Join(l.configHome(), "Code", "User")} },
	},
	{
		Name: "windsurf", Title: "Windsurf", Servers: []string{"mcpServers"},
		Scopes: []string{ScopeUser},
		Docs:   "docs.windsurf.com/windsurf/cascade/mcp: ~/.codeium/windsurf/mcp_config.json",
		path: func(_ string, l Locator) string {
			return filepath.Join(l.Home, ".codeium", "windsurf", "mcp_config.json")
		},
		marks: func(l Locator) []string { return []string{filepath.Join(l.Home, ".codeium", "windsurf")} },
	},
	{
		Name: "gemini", Title: "Gemini CLI", Servers: []string{"mcpServers"}, JSONC: true,
		Scopes: []string{ScopeUser, ScopeProject},
		Docs:   "geminicli.com/docs/tools/mcp-server: mcpServers in ~/.gemini/settings.json, or .gemini/settings.json in a project",
		path:   inHomeOrProject(".gemini", "settings.json"),
		marks:  func(l Locator) []string { return []string{filepath.Join(l.Home, ".gemini")} },
	},
	{
		Name: "codex", Title: "Codex", Servers: []string{"mcp_servers"}, TOML: true,
		Scopes: []string{ScopeUser, ScopeProject},
		Docs:   "developers.openai.com/codex/mcp: [mcp_servers.NAME] in ~/.codex/config.toml ($CODEX_HOME when set), or .codex/config.toml in a trusted project",
		path: func(scope string, l Locator) string {
			if scope == ScopeProject {
				return filepath.Join(l.Project, ".codex", "config.toml")
			}
			if d := l.env("CODEX_HOME"); d != "" {
				return filepath.Join(d, "config.toml")
			}
			return filepath.Join(l.Home, ".codex", "config.toml")
		},
		marks: func(l Locator) []string { return []string{filepath.Join(l.Home, ".codex")} },
	},
}

// ClientNames lists the clients' names, for help and errors.
func ClientNames() string {
	names := make([]string, len(Clients))
	for i, c := range Clients {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// FindClient returns the client named name, or an error listing them.
func FindClient(name string) (*Client, error) {
	for _, c := range Clients {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("unknown client %q: expected one of %s", name, ClientNames())
}

// Path is the client's config file for scope ("" for the default one).
func (c *Client) Path(scope string, l Locator) (string, error) {
	if scope == "" {
		scope = c.Scopes[0]
	}
	for _, s := range c.Scopes {
		if s == scope {
			if scope == ScopeProject && l.Project == "" {
				return "", fmt.Errorf("%s: project scope needs a project directory", c.Name)
			}
			if scope == ScopeUser && l.Home == "" {
				return "", fmt.Errorf("%s: no home directory (set HOME)", c.Name)
			}
			return c.path(scope, l), nil
		}
	}
	return "", fmt.Errorf("%s has no %s scope: expected %s", c.Title, scope, strings.Join(c.Scopes, " or "))
}

// Marks are the paths whose presence says the client is set up for this user.
func (c *Client) Marks(l Locator) []string { return c.marks(l) }

// Entry is a stdio server as a client's file holds it: what --mcp-config
// prints, with "type" for the clients that want it.
type Entry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// Entry is s in this client's shape.
func (c *Client) Entry(s Stdio) Entry {
	e := Entry{Command: s.Nexus, Args: []string{"mcp", s.Manifest}, Env: s.Env}
	if c.Typed {
		e.Type = "stdio"
	}
	return e
}

// Change says what an edit did to a file.
type Change string

// The changes an edit makes.
const (
	Added     Change = "added"
	Updated   Change = "updated"   // nexus's own entry for the program, rewritten
	Replaced  Change = "replaced"  // another server's, with --force
	Unchanged Change = "unchanged" // the same entry was there already
	Removed   Change = "removed"
	Absent    Change = "absent" // nothing to remove
)

// TakenError is a server name already used by an entry nexus did not write
// for this program.
type TakenError struct {
	Name, Command string
}

func (e *TakenError) Error() string {
	return fmt.Sprintf("a server named %q is already there, running %q: choose another name with --name, or pass --force to replace it", e.Name, e.Command)
}

// ErrParse wraps every "the file does not parse" error.
var ErrParse = errors.New("cannot read the file")

// existing is a server already in a file, as decoded.
type existing struct {
	command   string
	args      []string
	sameAs    bool // exactly the entry nexus would write
	fromNexus bool // nexus mcp on the same manifest (an older install)
}

// change is what writing the entry over ex does: nothing when ex is that
// entry already, an update of nexus's own older one, and over another
// server's a replacement only with force (else a TakenError).
func (ex *existing) change(name string, force bool) (Change, error) {
	switch {
	case ex.sameAs:
		return Unchanged, nil
	case ex.fromNexus:
		return Updated, nil
	case !force:
		return "", &TakenError{Name: name, Command: ex.command}
	}
	return Replaced, nil
}

func classify(command string, args []string, same bool, manifest string) *existing {
	return &existing{command: command, args: args, sameAs: same,
		fromNexus: len(args) == 2 && args[0] == "mcp" && args[1] == manifest}
}

// Add puts server s into the file's text src (nil or empty: no file yet)
// and returns the new text. A name taken by another server is refused
// unless force; nexus's own older entry for the same manifest is updated.
func (c *Client) Add(src []byte, s Stdio, force bool) ([]byte, Change, error) {
	e := c.Entry(s)
	if c.TOML {
		return c.addTOML(src, s.Name, e, s.Manifest, force)
	}
	return c.addJSON(src, s.Name, e, s.Manifest, force)
}

// Remove takes server name out of src. Only nexus's entry for manifest is
// removed ("" for manifest: any entry that runs `nexus mcp`), unless force.
func (c *Client) Remove(src []byte, name, manifest string, force bool) ([]byte, Change, error) {
	if c.TOML {
		return c.removeTOML(src, name, manifest, force)
	}
	return c.removeJSON(src, name, manifest, force)
}

// Has reports whether src holds a server named name, and whether that is
// nexus's entry for manifest.
func (c *Client) Has(src []byte, name, manifest string) (found, ours bool, err error) {
	var ex *existing
	if c.TOML {
		d, err := parseTOMLDoc(src)
		if err != nil {
			return false, false, fmt.Errorf("%w: %v", ErrParse, err)
		}
		ex, err = c.tomlExisting(d, name, Entry{}, manifest)
		if err != nil {
			return false, false, err
		}
	} else if len(src) > 0 {
		d, err := c.parseJSON(src)
		if err != nil {
			return false, false, err
		}
		ex, _, _, err = c.jsonExisting(d, name, Entry{}, manifest)
		if err != nil {
			return false, false, err
		}
	}
	return ex != nil, ex != nil && ex.fromNexus, nil
}

func (c *Client) parseJSON(src []byte) (*jsonDoc, error) {
	root, err := parseJSONDoc(src, c.JSONC)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	return &jsonDoc{src: src, root: root}, nil
}

// jsonExisting finds server name in the document: the servers object (nil
// when absent), the member, and how it compares with e.
func (c *Client) jsonExisting(d *jsonDoc, name string, e Entry, manifest string) (*existing, *jsonValue, int, error) {
	servers, err := d.servers(c.Servers)
	if err != nil {
		return nil, nil, -1, err
	}
	if servers == nil {
		return nil, nil, -1, nil
	}
	for i := range servers.members {
		m := &servers.members[i]
		if m.key != name {
			continue
		}
		var have struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		_ = json.Unmarshal(d.raw(m), &have) // another shape (a URL server): neither same nor ours
		var got, want any
		_ = json.Unmarshal(d.raw(m), &got)
		b, _ := json.Marshal(e)
		_ = json.Unmarshal(b, &want)
		return classify(have.Command, have.Args, reflect.DeepEqual(got, want), manifest), servers, i, nil
	}
	return nil, servers, -1, nil
}

func (c *Client) addJSON(src []byte, name string, e Entry, manifest string, force bool) ([]byte, Change, error) {
	value, err := json.Marshal(e)
	if err != nil {
		return nil, "", err
	}
	if len(strings.TrimSpace(string(src))) == 0 {
		doc := nestValue(c.Servers, nestValue([]string{name}, value))
		var b strings.Builder
		b.Write(render(doc, "", "  ", true))
		b.WriteByte('\n')
		return []byte(b.String()), Added, nil
	}
	d, err := c.parseJSON(src)
	if err != nil {
		return nil, "", err
	}
	ex, servers, i, err := c.jsonExisting(d, name, e, manifest)
	if err != nil {
		return nil, "", err
	}
	if ex != nil {
		change, err := ex.change(name, force)
		if err != nil {
			return nil, "", err
		}
		if change == Unchanged {
			return src, Unchanged, nil
		}
		return d.replaceValue(servers, &servers.members[i], value), change, nil
	}
	if servers != nil {
		return d.insertMember(servers, name, value), Added, nil
	}
	// Create the missing objects on the path, in the deepest one there is.
	obj, rest := d.root, c.Servers
	for len(rest) > 0 {
		m := obj.member(rest[0])
		if m == nil {
			break
		}
		obj, rest = m.value, rest[1:]
	}
	return d.insertMember(obj, rest[0], nestValue(rest[1:], nestValue([]string{name}, value))), Added, nil
}

func (c *Client) removeJSON(src []byte, name, manifest string, force bool) ([]byte, Change, error) {
	if len(strings.TrimSpace(string(src))) == 0 {
		return src, Absent, nil
	}
	d, err := c.parseJSON(src)
	if err != nil {
		return nil, "", err
	}
	ex, servers, i, err := c.jsonExisting(d, name, Entry{}, manifest)
	if err != nil {
		return nil, "", err
	}
	if ex == nil {
		return src, Absent, nil
	}
	if err := mayRemove(name, ex, manifest, force); err != nil {
		return nil, "", err
	}
	return d.removeMember(servers, i), Removed, nil
}

// mayRemove refuses to remove an entry nexus did not write for this
// program (for any program when manifest is "") unless force.
func mayRemove(name string, ex *existing, manifest string, force bool) error {
	if force || ex.fromNexus {
		return nil
	}
	if manifest == "" && len(ex.args) == 2 && ex.args[0] == "mcp" {
		return nil
	}
	return fmt.Errorf("the server named %q runs %q %q, not nexus on this program: pass --force to remove it anyway", name, ex.command, ex.args)
}

func (c *Client) tomlExisting(d *tomlDoc, name string, e Entry, manifest string) (*existing, error) {
	t, err := d.server(name)
	if err != nil || t == nil {
		return nil, err
	}
	cmd, _ := t["command"].(string)
	var args []string
	if list, ok := t["args"].([]any); ok {
		for _, a := range list {
			s, _ := a.(string)
			args = append(args, s)
		}
	}
	return classify(cmd, args, reflect.DeepEqual(t, tomlEntry(e)), manifest), nil
}

func (c *Client) addTOML(src []byte, name string, e Entry, manifest string, force bool) ([]byte, Change, error) {
	d, err := parseTOMLDoc(src)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrParse, err)
	}
	ex, err := c.tomlExisting(d, name, e, manifest)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrParse, err)
	}
	change := Added
	if ex != nil {
		if change, err = ex.change(name, force); err != nil {
			return nil, "", err
		}
		if change == Unchanged {
			return src, Unchanged, nil
		}
		cut, err := d.removeServer(name)
		if err != nil {
			return nil, "", err
		}
		d = &tomlDoc{src: cut, data: d.data}
	}
	out := d.appendServer(name, e)
	if err := d.checkEdit(out, name, tomlEntry(e)); err != nil {
		return nil, "", err
	}
	return out, change, nil
}

func (c *Client) removeTOML(src []byte, name, manifest string, force bool) ([]byte, Change, error) {
	d, err := parseTOMLDoc(src)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrParse, err)
	}
	ex, err := c.tomlExisting(d, name, Entry{}, manifest)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrParse, err)
	}
	if ex == nil {
		return src, Absent, nil
	}
	if err := mayRemove(name, ex, manifest, force); err != nil {
		return nil, "", err
	}
	out, err := d.removeServer(name)
	if err != nil {
		return nil, "", err
	}
	if err := d.checkEdit(out, name, nil); err != nil {
		return nil, "", err
	}
	return out, Removed, nil
}
