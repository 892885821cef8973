// Command nexus serves a compiled morloc program's functions as MCP tools
// (over stdio, later HTTP) and runs them as a CLI. This package is cobra
// wiring only: the work lives in internal/.
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/pool"
)

// version is set by the build (-ldflags "-X main.version=...").
var version = "0.1.0-dev"

// exitError carries the process exit status of a failed command; plain
// ones are written "Error: <message>", as morloc writes them.
type exitError struct {
	code  int
	err   error
	plain bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	pool.RunReaperIfAsked() // when this process is another nexus's reaper, it serves and exits here
	tuneRuntime()
	stopProfile := startProfile()
	root := newRootCmd()
	err := root.Execute()
	stopProfile()
	if err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if errors.Is(err, manifest.ErrNotFound) || isUsage(err) {
			code = 2
		}
		if jsonLog != nil && !isUsage(err) {
			jsonLog.Error("nexus failed", "err", err.Error(), "exit", code)
		} else if ee != nil && ee.plain {
			fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		} else {
			fmt.Fprintf(os.Stderr, "nexus: %v\n", err)
		}
		os.Exit(code)
	}
}

type globalFlags struct {
	logLevel     string
	logFormat    string // text or json
	workers      int
	timeout      time.Duration                   // a call's timeout when its command sets none; 0: none
	startTimeout time.Duration                   // how long a pool may take to become ready
	command      string                          // the subcommand running ("mcp", "run", ...)
	timeoutGiven bool                            // --timeout was on the command line
	poolEvents   func(lang string, e pool.Event) // nexus serve's /metrics, when on
	outputDir    string                          // --output-dir; settled by prepareOutputDir
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "nexus",
		Short:         "Serve a compiled polyglot program's functions as MCP tools and as a CLI",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			g.command = cmd.Name()
			if g.timeout < 0 || g.startTimeout <= 0 {
				return usageErrorf("--timeout must be 0 (none) or positive, --start-timeout positive")
			}
			return setupLogging(g)
		},
	}
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "stderr log level: debug, info, warn or error")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "text", "stderr log format: text, or json (one JSON object a line, pool output included, for log collectors)")
	root.PersistentFlags().DurationVar(&g.timeout, "timeout", defaultCallTimeout, "how long a tool call may run, for commands whose manifest entry sets no metadata.timeout (0: no limit; nexus run has none by default)")
	root.PersistentFlags().DurationVar(&g.startTimeout, "start-timeout", 30*time.Second, "how long a pool may take to start and say it is ready")
	root.PersistentFlags().StringVar(&g.outputDir, "output-dir", "", "where functions write the files they return (NEXUS_OUTPUT_DIR in their pools; default: a temporary directory removed at exit, or the current directory for nexus run)")
	root.PersistentFlags().IntVar(&g.workers, "workers", 0, "worker processes per pool, for pools whose manifest entry sets no metadata.workers (0: the language's default: 1 for py and cpp, min(4, CPUs) for r)")
	root.AddCommand(newMCPCmd(g), newRunCmd(g), newLauncherCmd(), newRuntimeDirCmd())
	root.AddCommand(newServeCmd(g), newBundleCmd(), newInstallCmd(), newUninstallCmd())
	return root
}

// jsonLog is the stderr logger when --log-format json is on: pool output
// goes to it as records too (pool.Options.OutputLog), and so does the
// error nexus exits with.
var jsonLog *slog.Logger

// noteExclusion writes SPEC §4.6's note that a command is not a tool: its
// text as the SPEC gives it, or a record under --log-format json.
func noteExclusion(e argmap.Exclusion) {
	if jsonLog != nil {
		jsonLog.Info("excluding command from the tool surface", "command", e.Command, "reason", e.Reason)
		return
	}
	fmt.Fprintln(os.Stderr, e.String())
}

func setupLogging(g *globalFlags) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(g.logLevel)); err != nil {
		return usageErrorf("--log-level: expected debug, info, warn or error, got %q", g.logLevel)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch g.logFormat {
	case "text":
		jsonLog = nil
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, opts)))
	case "json":
		jsonLog = slog.New(slog.NewJSONHandler(os.Stderr, opts))
		slog.SetDefault(jsonLog)
	default:
		return usageErrorf("--log-format: expected text or json, got %q", g.logFormat)
	}
	return nil
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}
