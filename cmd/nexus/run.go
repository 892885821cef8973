package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
		Use:   "run TARGET [NEXUS_OPTIONS] [GROUP] COMMAND ARGS... | run TARGET --mcp-tools | --mcp-resources | --mcp-prompts | --mcp-config [--wsl] | --explain | --help",
		Short: "Run one of a program's commands as a CLI, as morloc's nexus does (what a launcher script calls)",
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
			return runProgram(g, cmd, args[0], args[1:])
		},
	}
}

// runOptions are the nexus options of one run, given before the command.
type runOptions struct {
	keepNull     bool
	formExplicit bool // -f given: a @default projection does not apply
	outputFile   string
	leading      string // --mcp-tools, --mcp-resources, --mcp-prompts, --mcp-config or --explain given among them
	wsl          bool
	help         bool
}

// nexusOptions are the options nexus takes before a program's command
// (morloc's <nexus_options>): those of morloc's (cli.rs DispatchOptions)
// that nexus has, then nexus's own. Help lists them under "Nexus Options".
var nexusOptions = []argmap.NexusOption{
	{Short: "o", Long: "output-file", Value: "FILE", Help: "Output file (default: stdout)"},
	{Short: "f", Long: "output-form", Value: "FORM", Help: "Output form for the result: json (the one form nexus writes)"},
	{Long: "keep-null", Help: "Print top-level () / None as \"null\" instead of suppressing it"},
	{Short: "q", Long: "quiet", Help: "Log only errors on stderr (--log-level error)"},
	{Long: "mcp-tools", Help: "Print an MCP tools/list definition for every command (name, description, JSON Schema inputSchema/outputSchema) and exit"},
	{Long: "mcp-resources", Help: "Print the MCP resources/list definition of the program's resources, with its resource templates, and exit"},
	{Long: "mcp-prompts", Help: "Print the MCP prompts/list definition of the program's prompts and exit"},
	{Long: "mcp-config", Help: "Print a client MCP server config for this program (a `mcpServers` JSON entry, stdio transport, with the environment its pools need) and exit"},
	{Long: "wsl", Help: "With --mcp-config: the entry for Claude Desktop on Windows, nexus running under WSL"},
	{Long: "explain", Help: "Print one line for each manifest field nexus reads but does not honour, and exit"},
	{Long: "timeout", Value: "DURATION", Help: "How long a call may run (default: no limit on the CLI)"},
	{Long: "start-timeout", Value: "DURATION", Help: "How long a pool may take to start and say it is ready (default: 30s)"},
	{Long: "workers", Value: "N", Help: "Worker processes per pool, for pools whose manifest entry sets none"},
	{Long: "output-dir", Value: "DIR", Help: "Where functions write the files they return (NEXUS_OUTPUT_DIR; default: the current directory)"},
	{Long: "log-level", Value: "LEVEL", Help: "stderr log level: debug, info, warn or error (default: info)"},
	{Long: "log-format", Value: "FORMAT", Help: "stderr log format: text or json (default: text)"},
}

// morlocOnlyOptions are morloc's nexus options that nexus does not have:
// known, so that the split finds the command after their values, and
// refused with a clear error.
var morlocOnlyOptions = []argmap.NexusOption{
	{Short: "p", Long: "print"},
	{Short: "z", Long: "compression-level", Value: "N"},
	{Long: "log-dir", Value: "DIR"},
	{Long: "summary", Value: "PATH"},
	{Long: "json-help"},
}

// programName is how help names the program: the launcher's $0 when a
// launcher ran nexus (MORLOC_PROG_NAME, as morloc's launchers export it),
// else the module's name.
func programName(m *manifest.Manifest) string {
	if p := os.Getenv("MORLOC_PROG_NAME"); p != "" {
		return p
	}
	return m.Name
}

// parseNexusOptions applies the nexus options given before the command.
func parseNexusOptions(cmd *cobra.Command, g *globalFlags, tokens []string) (runOptions, error) {
	var o runOptions
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		name, value, hasValue := tok, "", false
		if strings.HasPrefix(tok, "--") {
			name, value, hasValue = strings.Cut(tok[2:], "=")
		} else if len(tok) >= 2 && tok[0] == '-' {
			name = tok[1:2]
			if len(tok) > 2 {
				value, hasValue = strings.TrimPrefix(tok[2:], "="), true
			}
		} else {
			return o, usageErrorf("unexpected argument '%s' before the command", tok)
		}
		opt, known := findOption(nexusOptions, name)
		if !known {
			if _, morlocs := findOption(morlocOnlyOptions, name); morlocs {
				return o, usageErrorf("%s is an option of morloc's nexus that nexus does not have", tok)
			}
			if name == "h" || name == "help" {
				o.help = true
				continue
			}
			return o, usageErrorf("unknown nexus option %s (the options before the command are listed by --help)", tok)
		}
		if opt.Value != "" && !hasValue {
			if i+1 >= len(tokens) {
				return o, usageErrorf("nexus option --%s needs a value", opt.Long)
			}
			i++
			value = tokens[i]
		} else if opt.Value == "" && hasValue {
			return o, usageErrorf("nexus option --%s takes no value", opt.Long)
		}
		switch opt.Long {
		case "output-file":
			o.outputFile = value
		case "output-form":
			if value != "json" {
				return o, usageErrorf("--output-form %s: nexus writes JSON only (json)", value)
			}
			o.formExplicit = true
		case "keep-null":
			o.keepNull = true
		case "quiet":
			g.logLevel = "error"
		case "mcp-tools", "mcp-resources", "mcp-prompts", "mcp-config", "explain":
			o.leading = "--" + opt.Long
		case "wsl":
			o.wsl = true
		default: // nexus's own flags
			if err := cmd.Flags().Set(opt.Long, value); err != nil {
				return o, usageErrorf("--%s: %v", opt.Long, err)
			}
		}
	}
	g.timeoutGiven = cmd.Flags().Changed("timeout")
	return o, setupLogging(g)
}

func findOption(opts []argmap.NexusOption, name string) (argmap.NexusOption, bool) {
	for _, o := range opts {
		if name == o.Long || (len(name) == 1 && name == o.Short) {
			return o, true
		}
	}
	return argmap.NexusOption{}, false
}

func runProgram(g *globalFlags, cmd *cobra.Command, target string, argv []string) (err error) {
	m, err := manifest.Load(target)
	if err != nil {
		return err
	}
	// Help lists only what nexus has; the split knows morloc's others too.
	h := argmap.HelpContext{Prog: programName(m), Options: nexusOptions, Unlisted: morlocOnlyOptions}
	inv, err := argmap.SplitInvocation(m, argv, h)
	var he *argmap.HelpError
	var ue *argmap.UsageError
	switch {
	case errors.As(err, &he):
		// A program or group without its command: its help on stderr, as
		// morloc's clap does, and status 2.
		os.Stderr.WriteString(he.Text)
		if he.Msg == "" {
			return &exitError{code: 2, err: fmt.Errorf("%s: a command is needed", m.Name), plain: true}
		}
		return usageErrorf("%s: %s", m.Name, he.Msg)
	case errors.As(err, &ue):
		return usageErrorf("%s: %s", m.Name, ue.Msg)
	case err != nil:
		return err
	}
	opts, err := parseNexusOptions(cmd, g, inv.Nexus)
	if err != nil {
		return err
	}
	if opts.help {
		fmt.Print(argmap.ProgramHelp(m, h, true))
		return nil
	}
	leading, rest := inv.Leading, inv.Rest
	if leading == "" {
		leading = opts.leading
	}
	switch leading {
	case "--json-help":
		return usageErrorf("--json-help is an option of morloc's nexus that nexus does not have (--mcp-tools describes every command)")
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
	case "--mcp-resources", "--mcp-prompts":
		// As --mcp-tools: the resources/list (with the templates) or
		// prompts/list payload, every entry, no pool started.
		prog, err := loadProgram(target)
		if err != nil {
			return err
		}
		srv := mcp.NewServerFor(prog.surface(nil), mcp.Options{})
		if leading == "--mcp-prompts" {
			return printJSON(os.Stdout, srv.PromptsPayload())
		}
		return printJSON(os.Stdout, srv.ResourcesPayload())
	case "--mcp-config":
		// SPEC §3's form, with the environment the pools need (issue 12):
		// clients start servers with a minimal PATH.
		cfg := mcpConfig(m)
		switch {
		case opts.wsl || len(rest) > 0 && rest[0] == "--wsl":
			_, err := os.Stdout.Write(cfg.WSLJSON())
			return err
		case len(rest) > 0:
			return usageErrorf("%s --mcp-config: unknown option %q (the one option is --wsl)", m.Name, rest[0])
		}
		if clientconfig.UnderWSL() && jsonLog == nil {
			fmt.Fprintf(os.Stderr, "nexus: this is WSL: for Claude Desktop on Windows, use --mcp-config --wsl\n")
		}
		_, err := os.Stdout.Write(cfg.JSON())
		return err
	}
	if inv.Help != "" {
		fmt.Print(inv.Help)
		return nil
	}
	c := inv.Command
	call, err := argmap.CLICall(m, c, inv.Args)
	if err != nil {
		return usageErrorf("%v", err)
	}
	call = call.WithDefaultProjection(m, c, opts.formExplicit)
	entry := call.Command        // the command itself, or a terminal's entry (--lines, ...)
	rl := beginRunLog(m, c.Name) // the program's run_log, if it has one
	defer func() { rl.end(err) }()
	// Keep stdout for the result alone, as in MCP mode (SPEC §4.1).
	out, err := mcp.RehomeStdout()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
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
			return evalFailure(stoppedBy(ctx, err))
		}
	} else {
		if err := nulCheck(m, call); err != nil {
			return &exitError{code: 1, plain: true, err: err} // in morloc's words
		}
		if _, err := prepareOutputDir(g); err != nil { // the current directory, or --output-dir: kept
			return err
		}
		set := startPools(m, g, entry.NeededPools)
		defer set.Close()
		raw, err = set.CallWith(ctx, entry.Pool, entry.Mid, call.Args, pool.CallOptions{Arrays: call.Arrays, Ret: call.Ret})
		if err != nil {
			return &exitError{code: 1, err: fmt.Errorf("%s: %w", c.Name, stoppedBy(ctx, err))}
		}
	}
	if opts.outputFile == "" {
		// A large list of numbers is written a piece at a time.
		if ok, err := argmap.WriteCLIResult(out, &entry.Return, raw); ok {
			if err != nil {
				return fmt.Errorf("%s: writing the result: %w", c.Name, err)
			}
			return nil
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
	// morloc prints nothing for a top-level () or absent optional unless
	// --keep-null (dispatch.rs print_result_c, json.rs is_top_null); a
	// null inside a value prints as ever. morloc 0.69's C nexus, whose
	// programs carry a version-1 manifest, always printed it: such a
	// program prints what its own nexus printed.
	if string(value) == "null" && !opts.keepNull && m.Format != manifest.FormatV1 {
		return nil
	}
	if opts.outputFile != "" {
		if err := os.WriteFile(opts.outputFile, append(value, '\n'), 0o644); err != nil {
			return fmt.Errorf("%s: --output-file: %w", c.Name, err)
		}
		return nil
	}
	if err := writeLine(out, value); err != nil {
		return fmt.Errorf("%s: writing the result: %w", c.Name, err)
	}
	return nil
}

// writeLine writes value and a newline, with no copy of a large value to
// add the one byte.
func writeLine(w io.Writer, value []byte) error {
	if cap(value) > len(value) {
		_, err := w.Write(append(value, '\n'))
		return err
	}
	if _, err := w.Write(value); err != nil {
		return err
	}
	_, err := w.Write([]byte{'\n'})
	return err
}

// stopSignals are the signals that stop a CLI run, its call cancelled and
// its pools stopped in order: SIGTERM, SIGINT, and SIGHUP (its terminal
// closed), as for nexus mcp. A SIGHUP that was ignored when nexus started
// (nohup) stays ignored: the run was asked to outlive its terminal. Go
// leaves an inherited SIG_IGN alone for a signal no one is notified of,
// which is what keeps it ignored; a run whose SIGHUP was not ignored used
// to die of it at once, leaving its pools to the reaper (issue 18).
func stopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGINT}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// stoppedBy names the signal that stopped the run, if one did ("hangup
// signal received"), rather than a bare "context canceled".
func stoppedBy(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
	}
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
