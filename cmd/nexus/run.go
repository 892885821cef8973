package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nexus-mcp/nexus/internal/clientconfig"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/eval"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/pool"
)

func newRunCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "run TARGET [--mcp-tools | --mcp-config [--wsl] | --explain | --help | CMD ARGS...]",
		Short: "Run one of a program's commands as a CLI (what a launcher script calls)",
		// The program's own commands and options follow TARGET: parse them ourselves.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := takeGlobalFlags(cmd, args)
			if err != nil {
				return err
			}
			g.timeoutGiven = cmd.Flags().Changed("timeout")
			if err := setupLogging(g); err != nil {
				return err
			}
			if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
				return cmd.Help()
			}
			return runProgram(g, args[0], args[1:])
		},
	}
}

func runProgram(g *globalFlags, target string, argv []string) (err error) {
	m, err := manifest.Load(target)
	if err != nil {
		return err
	}
	if len(argv) == 0 || argv[0] == "--help" || argv[0] == "-h" {
		fmt.Print(argmap.ProgramUsage(m))
		return nil
	}
	switch argv[0] {
	case "--mcp-tools":
		// SPEC §3: the tools/list payload, two-space indented, no pool started,
		// with the §4.6 exclusion notes on stderr.
		prog, err := loadProgram(target)
		if err != nil {
			return err
		}
		srv := mcp.NewServer(serverInfo(m), prog.tools, nil, mcp.Options{})
		return printJSON(os.Stdout, srv.ToolsPayload())
	case "--explain":
		// Issue 20 §2: each manifest field nexus does not honour, one line each.
		for _, line := range explain(m) {
			fmt.Println(line)
		}
		return nil
	case "--mcp-config":
		// SPEC §3's form, with the environment the pools need (issue 12):
		// clients start servers with a minimal PATH.
		cfg := mcpConfig(m)
		switch {
		case len(argv) > 1 && argv[1] == "--wsl":
			_, err := os.Stdout.Write(cfg.WSLJSON())
			return err
		case len(argv) > 1:
			return usageErrorf("%s --mcp-config: unknown option %q (the one option is --wsl)", m.Name, argv[1])
		}
		if clientconfig.UnderWSL() && jsonLog == nil {
			fmt.Fprintf(os.Stderr, "nexus: this is WSL: for Claude Desktop on Windows, use --mcp-config --wsl\n")
		}
		_, err := os.Stdout.Write(cfg.JSON())
		return err
	}
	c := m.Command(argv[0])
	if c == nil || c.Internal {
		return usageErrorf("%s: unknown command '%s' (run with --help to list commands)", m.Name, argv[0])
	}
	for _, a := range argv[1:] {
		if a == "--" {
			break
		}
		if a == "--help" || a == "-h" {
			fmt.Print(argmap.CLIUsage(c))
			return nil
		}
	}
	call, err := argmap.CLICall(m, c, argv[1:])
	if err != nil {
		return usageErrorf("%v", err)
	}
	entry := call.Command        // the command itself, or a terminal's entry (--lines, ...)
	rl := beginRunLog(m, c.Name) // the program's run_log, if it has one
	defer func() { rl.end(err) }()
	// Keep stdout for the result alone, as in MCP mode (SPEC §4.1).
	out, err := mcp.RehomeStdout()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var raw ndarray.Value
	if entry.Type == manifest.Pure {
		// PURE.md §4: evaluated by nexus, no pool started; its failures
		// in morloc's words.
		prog, cerr := eval.CompileCommand(entry, &eval.Options{Dir: m.Dir})
		if cerr != nil {
			return &exitError{code: 1, err: fmt.Errorf("failed to build expression: %v", cerr), plain: true}
		}
		if why := prog.Refusal(); why != "" {
			return &exitError{code: 1, err: fmt.Errorf("pure command '%s' %s", entry.Name, why), plain: true}
		}
		args, aerr := call.JSONArgs()
		if aerr != nil {
			return aerr
		}
		// Its output streams: files in morloc's format, @stdout as JSON
		// on the CLI's stdout (issue 20 §3).
		raw.JSON, err = prog.RunWith(ctx, args, eval.RunOptions{Streams: &runStreams{stdout: out}})
		if err != nil {
			return evalFailure(err)
		}
	} else {
		if err := nulCheck(m, call); err != nil {
			return &exitError{code: 1, plain: true, err: err} // in morloc's words
		}
		set := startPools(m, g, entry.NeededPools)
		defer set.Close()
		raw, err = set.CallWith(ctx, entry.Pool, entry.Mid, call.Args, pool.CallOptions{Arrays: call.Arrays, Ret: call.Ret})
		if err != nil {
			return &exitError{code: 1, err: fmt.Errorf("%s: %w", c.Name, err)}
		}
	}
	value, err := argmap.CLIResultValue(&entry.Return, raw)
	var tm *argmap.TypeMismatch
	switch {
	case errors.As(err, &tm):
		return &exitError{code: 1, err: fmt.Errorf("'%s' returned %s", c.Name, tm)}
	case err != nil:
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	_, err = out.Write(append(value, '\n'))
	return err
}

// mcpConfig is SPEC §3's Claude Desktop-style entry: absolute paths, since
// MCP clients start servers with a minimal PATH.
func mcpConfig(m *manifest.Manifest) clientconfig.Stdio {
	self, err := os.Executable()
	if err == nil {
		if p, err2 := filepath.EvalSymlinks(self); err2 == nil {
			self = p
		}
	}
	return clientconfig.Stdio{Name: m.Name, Nexus: self, Manifest: m.Path, Env: clientconfig.Env(os.LookupEnv)}
}

func printJSON(f *os.File, v any) error {
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// takeGlobalFlags applies nexus's own flags (--workers, --timeout, ...) given
// before TARGET, as `nexus run --workers 2 prog cmd` or `nexus --workers 2 run
// prog cmd`: run parses no flags itself, since everything after TARGET belongs
// to the program.
func takeGlobalFlags(cmd *cobra.Command, args []string) ([]string, error) {
	for len(args) > 0 && strings.HasPrefix(args[0], "--") && args[0] != "--help" {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(args[0], "--"), "=")
		f := cmd.Flags().Lookup(name)
		if f == nil {
			return nil, usageErrorf("run: unknown nexus flag --%s before the program (program options go after TARGET CMD)", name)
		}
		args = args[1:]
		if !hasValue {
			if f.Value.Type() == "bool" {
				value = "true"
			} else if len(args) == 0 {
				return nil, usageErrorf("run: flag --%s needs a value", name)
			} else {
				value, args = args[0], args[1:]
			}
		}
		if err := cmd.Flags().Set(name, value); err != nil {
			return nil, usageErrorf("run: --%s: %v", name, err)
		}
	}
	return args, nil
}
