package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/clientconfig"
	"github.com/nexus-mcp/nexus/internal/install"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/program"
)

type installFlags struct {
	client, scope, name string
	dryRun, force, list bool
}

func (f *installFlags) register(c *cobra.Command, verb string) {
	fl := c.Flags()
	fl.StringVar(&f.client, "client", "", "the client: "+clientconfig.ClientNames())
	fl.StringVar(&f.scope, "scope", "", "user (every project; the default) or project (this directory's project file)")
	fl.StringVar(&f.name, "name", "", "the server's name in the client (default: the program's name)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the change to the client's file as a diff, and change nothing")
	fl.BoolVar(&f.force, "force", false, verb+" even a server of that name that nexus did not write for this program")
}

// newEditCmd is install or uninstall: the flags both take, and run given
// an install.Command for this user.
func newEditCmd(use, short, long, verb string, run func(ic *install.Command, f *installFlags, args []string) error) (*cobra.Command, *installFlags) {
	f := &installFlags{}
	c := &cobra.Command{Use: use, Short: short, Long: long,
		RunE: func(cmd *cobra.Command, args []string) error {
			ic, err := install.NewCommand(f.dryRun)
			if err != nil {
				return err
			}
			return run(ic, f, args)
		},
	}
	f.register(c, verb)
	return c, f
}

func newInstallCmd(o *program.Options) *cobra.Command {
	c, f := newEditCmd("install TARGET --client NAME [--scope user|project] [--name N] [--dry-run] [--force] | install --list [TARGET]",
		"Add a program to an MCP client's configuration (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, Codex)",
		"Add a program to an MCP client's configuration file, with the entry --mcp-config prints\n"+
			"(absolute paths, and the PATH and interpreter variables of this shell). The file is merged,\n"+
			"never overwritten: other servers and settings stay as they were, a backup is kept beside it\n"+
			"("+install.BackupSuffix+"), and running it again changes nothing.",
		"replace", func(ic *install.Command, f *installFlags, args []string) error {
			if f.list {
				return listClients(ic, args)
			}
			if len(args) != 1 {
				return program.Usagef("missing program: usage: nexus install TARGET --client NAME")
			}
			r, err := installRequest(o, f, args[0], true)
			if err != nil {
				return err
			}
			return ic.Install(r)
		})
	c.Flags().BoolVar(&f.list, "list", false, "list the clients found on this machine (and, given TARGET, whether each has the program)")
	return c
}

func newUninstallCmd(o *program.Options) *cobra.Command {
	c, _ := newEditCmd("uninstall [TARGET] --client NAME [--scope user|project] [--name N] [--dry-run] [--force]",
		"Remove a program from an MCP client's configuration",
		"Remove the server nexus installed for a program from a client's configuration file,\n"+
			"leaving everything else as it was. Without TARGET, --name names the server; it is removed\n"+
			"if it runs `nexus mcp` (--force: whatever it runs).",
		"remove", func(ic *install.Command, f *installFlags, args []string) error {
			var r install.Request
			var err error
			switch {
			case len(args) == 1:
				r, err = installRequest(o, f, args[0], false)
			case len(args) == 0 && f.name != "":
				r, err = installRequest(o, f, "", false)
			default:
				return program.Usagef("usage: nexus uninstall TARGET --client NAME, or nexus uninstall --name SERVER --client NAME")
			}
			if err != nil {
				return err
			}
			return ic.Uninstall(r)
		})
	return c
}

// installRequest is the request for a program (target "": the server
// named --name, whatever program it was).
func installRequest(o *program.Options, f *installFlags, target string, needProgram bool) (install.Request, error) {
	if f.client == "" {
		return install.Request{}, program.Usagef("--client is required: one of %s", clientconfig.ClientNames())
	}
	c, err := clientconfig.FindClient(f.client)
	if err != nil {
		return install.Request{}, program.Usagef("--client: %v", err)
	}
	r := install.Request{Client: c, Scope: f.scope, Force: f.force}
	if target != "" {
		m, err := manifest.Load(target)
		if err != nil && !needProgram && errors.Is(err, manifest.ErrNotFound) {
			return r, fmt.Errorf("%w (the entry of a program that is gone: nexus uninstall --name NAME --client %s)", err, f.client)
		}
		if err != nil {
			return r, err
		}
		if needProgram {
			if _, err := program.Load(target, o); err != nil { // a program nexus cannot serve is not installed
				return r, err
			}
		}
		r.Server = program.StdioConfig(m)
	}
	if f.name != "" {
		r.Server.Name = f.name
	}
	return r, nil
}

// listClients is `nexus install --list [TARGET]`.
func listClients(ic *install.Command, args []string) error {
	var name, path string
	switch len(args) {
	case 0:
	case 1:
		m, err := manifest.Load(args[0])
		if err != nil {
			return err
		}
		name, path = m.Name, m.Path
	default:
		return program.Usagef("usage: nexus install --list [TARGET]")
	}
	return ic.List(name, path)
}
