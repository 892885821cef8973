package install

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/nexus-mcp/nexus/internal/clientconfig"
)

// Command is one run of `nexus install` or `nexus uninstall` as the user
// sees it: the diff of a dry run and the --list table go to Stdout, what
// was done (and what is left to do, such as restarting the client) to
// Stderr, so that a dry run's diff can be piped to patch or a pager.
type Command struct {
	Locator        clientconfig.Locator
	Stdout, Stderr io.Writer
	DryRun         bool
	// UnderWSL: this Linux is WSL's, where "Claude Desktop" usually means
	// the Windows one, which reads another file.
	UnderWSL bool
}

// NewCommand is a Command for this user and machine: the home directory,
// the working directory as the project, the process's stdout and stderr.
func NewCommand(dryRun bool) (*Command, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("no home directory: %w", err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return &Command{
		Locator: clientconfig.Locator{GOOS: runtime.GOOS, Home: home, Getenv: os.Getenv, Project: cwd},
		Stdout:  os.Stdout, Stderr: os.Stderr, DryRun: dryRun, UnderWSL: clientconfig.UnderWSL(),
	}, nil
}

// Install adds r's server to its client's file, or with DryRun prints the
// diff that would.
func (c *Command) Install(r Request) error {
	if r.Client.Name == "claude-desktop" && c.UnderWSL {
		fmt.Fprintln(c.Stderr, "nexus: this is WSL: this installs into a Linux Claude Desktop; Claude Desktop on Windows needs the entry of `nexus run TARGET --mcp-config --wsl` in %APPDATA%\\Claude\\claude_desktop_config.json")
	}
	p, err := Install(c.Locator, r)
	if err != nil {
		return err
	}
	return c.finish(r, p)
}

// Uninstall takes r's server out of its client's file, or with DryRun
// prints the diff that would.
func (c *Command) Uninstall(r Request) error {
	p, err := Uninstall(c.Locator, r)
	if err != nil {
		return err
	}
	return c.finish(r, p)
}

// finish prints a dry run's diff, or applies the plan and says what it did.
func (c *Command) finish(r Request, p *Plan) error {
	where := fmt.Sprintf("%s (%s)", r.Client.Title, p.Path)
	if c.DryRun {
		if !p.Changed() {
			fmt.Fprintf(c.Stderr, "nexus: %s: no change (%s)\n", where, p.Change)
			return nil
		}
		_, err := io.WriteString(c.Stdout, p.Diff())
		return err
	}
	if err := p.Apply(); err != nil {
		return err
	}
	switch p.Change {
	case clientconfig.Unchanged:
		fmt.Fprintf(c.Stderr, "nexus: %s is already in %s: nothing changed\n", r.Server.Name, where)
	case clientconfig.Absent:
		fmt.Fprintf(c.Stderr, "nexus: no server named %s in %s: nothing changed\n", r.Server.Name, where)
	default:
		prep := map[clientconfig.Change]string{clientconfig.Added: "to", clientconfig.Removed: "from"}[p.Change]
		if prep == "" {
			prep = "in"
		}
		fmt.Fprintf(c.Stderr, "nexus: %s %s %s %s (the file as it was: %s%s)\n", p.Change, r.Server.Name, prep, where, p.Path, BackupSuffix)
		if p.Change != clientconfig.Removed {
			fmt.Fprintf(c.Stderr, "nexus: restart %s to load it", r.Client.Title)
			if r.Client.Name == "claude-code" && r.Scope == clientconfig.ScopeProject {
				fmt.Fprint(c.Stderr, "; Claude Code asks you to approve a project's servers the first time it starts there")
			}
			fmt.Fprintln(c.Stderr)
		}
	}
	return nil
}

// List prints the clients found on this machine (WriteList) and, given a
// program's name, whether each has it (nexus's entry for manifest, when
// manifest is not ""). A file that cannot be read is named on Stderr too;
// one that does not parse says so in the table alone.
func (c *Command) List(name, manifest string) error {
	found := List(c.Locator, name, manifest)
	err := WriteList(c.Stdout, found, name)
	for _, f := range found {
		if f.Err != nil && !errors.Is(f.Err, clientconfig.ErrParse) {
			fmt.Fprintf(c.Stderr, "nexus: %s: %v\n", f.Path, f.Err)
		}
	}
	return err
}
