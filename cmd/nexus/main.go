// Command nexus serves a compiled morloc program's functions as MCP tools
// (over stdio and HTTP) and runs them as a CLI. This package is cobra
// wiring only: its flags fill program.Options and the like, and the work
// lives in internal/ (program above all).
package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/pool"
	"github.com/nexus-mcp/nexus/internal/program"
)

// version is set by the build (-ldflags "-X main.version=...").
var version = "0.1.0-dev"

func main() {
	pool.RunReaperIfAsked() // when this process is another nexus's reaper, it serves and exits here
	tuneRuntime()
	stopProfile := startProfile()
	o := &program.Options{Version: version}
	err := newRootCmd(o).Execute()
	stopProfile()
	if err != nil {
		os.Exit(o.Fail(err))
	}
}

func newRootCmd(o *program.Options) *cobra.Command {
	root := &cobra.Command{
		Use:           "nexus",
		Short:         "Serve a compiled polyglot program's functions as MCP tools and as a CLI",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			o.Command = cmd.Name()
			if o.Timeout < 0 || o.StartTimeout <= 0 {
				return program.Usagef("--timeout must be 0 (none) or positive, --start-timeout positive")
			}
			return o.SetupLogging()
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&o.LogLevel, "log-level", "info", "stderr log level: debug, info, warn or error")
	f.StringVar(&o.LogFormat, "log-format", "text", "stderr log format: text, or json (one JSON object a line, pool output included, for log collectors)")
	f.DurationVar(&o.Timeout, "timeout", program.DefaultCallTimeout, "how long a tool call may run, for commands whose manifest entry sets no metadata.timeout (0: no limit; nexus run has none by default)")
	f.DurationVar(&o.StartTimeout, "start-timeout", program.DefaultStartTimeout, "how long a pool may take to start and say it is ready")
	f.StringVar(&o.OutputDir, "output-dir", "", "where functions write the files they return (NEXUS_OUTPUT_DIR in their pools; default: a temporary directory removed at exit, or the current directory for nexus run)")
	f.IntVar(&o.Workers, "workers", 0, "worker processes per pool, for pools whose manifest entry sets no metadata.workers (0: the language's default: 1 for py and cpp, min(4, CPUs) for r); for a morloc program, instances of it (0: one per CPU)")
	root.AddCommand(newMCPCmd(o), newRunCmd(o), newLauncherCmd(), newRuntimeDirCmd())
	root.AddCommand(newServeCmd(o), newBundleCmd(o), newInstallCmd(o), newUninstallCmd(o))
	return root
}

// oneProgram takes exactly one TARGET; anything else is a usage error
// (exit 2) that shows usage.
func oneProgram(usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return program.Usagef("missing program: usage: %s", usage)
		}
		return nil
	}
}
