package program

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/clientconfig"
	"github.com/nexus-mcp/nexus/internal/eval"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// Run is `nexus run TARGET ARGV...`, what a launcher runs: one command of
// the program run as a CLI, as morloc's nexus runs it (docs/spec.md §3),
// or one of the leading options (--mcp-tools, --mcp-config, ...). setFlag
// sets one of nexus's own flags given among the nexus options before the
// command (--timeout, --workers, ...), so that it lands in o.
func Run(o *Options, target string, argv []string, setFlag func(name, value string) error) error {
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
			return &ExitError{Code: 2, Err: fmt.Errorf("%s: a command is needed", m.Name), Plain: true}
		}
		return Usagef("%s: %s", m.Name, he.Msg)
	case errors.As(err, &ue):
		return Usagef("%s: %s", m.Name, ue.Msg)
	case err != nil:
		return err
	}
	opts, err := parseNexusOptions(o, inv.Nexus, setFlag)
	if err != nil {
		return err
	}
	if opts.help {
		fmt.Print(argmap.ProgramHelp(m, h, true))
		return nil
	}
	leading := inv.Leading
	if leading == "" {
		leading = opts.leading
	}
	if leading != "" {
		return o.runLeading(target, m, leading, opts, inv.Rest)
	}
	if inv.Help != "" {
		fmt.Print(inv.Help)
		return nil
	}
	return o.runCommand(m, inv, opts)
}

// runLeading prints what a leading option asks for; none starts a pool.
func (o *Options) runLeading(target string, m *manifest.Manifest, leading string, opts runOptions, rest []string) error {
	switch leading {
	case "--json-help":
		return Usagef("--json-help is an option of morloc's nexus that nexus does not have (--mcp-tools describes every command)")
	case "--explain":
		for _, line := range explain(m) {
			fmt.Println(line)
		}
		return nil
	case "--mcp-config":
		return o.printMCPConfig(m, opts.wsl, rest)
	}
	// docs/spec.md §3: the tools/list payload (or resources/list, with the
	// templates, or prompts/list), two-space indented, every entry, with
	// §4.6's exclusion notes on stderr.
	p, err := Load(target, o)
	if err != nil {
		return err
	}
	srv := mcp.NewServerFor(p.Surface(nil), mcp.Options{})
	switch leading {
	case "--mcp-tools":
		return printJSON(os.Stdout, srv.ToolsPayload())
	case "--mcp-prompts":
		return printJSON(os.Stdout, srv.PromptsPayload())
	}
	return printJSON(os.Stdout, srv.ResourcesPayload())
}

// printMCPConfig prints docs/spec.md §3's client entry, with the
// environment the pools need: clients start servers with a minimal PATH.
func (o *Options) printMCPConfig(m *manifest.Manifest, wsl bool, rest []string) error {
	cfg := StdioConfig(m)
	switch {
	case wsl || len(rest) > 0 && rest[0] == "--wsl":
		_, err := os.Stdout.Write(cfg.WSLJSON())
		return err
	case len(rest) > 0:
		return Usagef("%s --mcp-config: unknown option %q (the one option is --wsl)", m.Name, rest[0])
	}
	if clientconfig.UnderWSL() && o.jsonLog == nil {
		fmt.Fprintf(os.Stderr, "nexus: this is WSL: for Claude Desktop on Windows, use --mcp-config --wsl\n")
	}
	_, err := os.Stdout.Write(cfg.JSON())
	return err
}

// runCommand runs the invocation's command and prints its result.
func (o *Options) runCommand(m *manifest.Manifest, inv *argmap.Invocation, opts runOptions) (err error) {
	c := inv.Command
	call, err := argmap.CLICall(m, c, inv.Args)
	if err != nil {
		return Usagef("%v", err)
	}
	call = call.WithDefaultProjection(m, c, opts.formExplicit)
	entry := call.Command        // the command itself, or a terminal's entry (--lines, ...)
	rl := beginRunLog(m, c.Name) // the program's run_log, if it has one
	defer func() { rl.end(err) }()
	// Keep stdout for the result alone, as in MCP mode (docs/spec.md §4.1).
	out, err := mcp.RehomeStdout()
	if err != nil {
		return err
	}
	ctx, stop := notifyStop(context.Background(), stopSignals()...)
	defer stop()
	raw, stop, err := o.callOnce(ctx, m, c.Name, call, out)
	defer stop() // once the result is out: nothing waits for the pools to exit
	if err != nil {
		return err
	}
	return writeResult(out, m, c.Name, &entry.Return, raw, opts)
}

// callOnce runs a CLI call of the command name through the Caller: a pure
// command evaluated, its @stdout stream on the CLI's stdout, and no pool
// started; any other checked first, then run with only the pools it needs,
// its files written to the output directory (the current one, or
// --output-dir: kept). stop, called once the result is written, ends the
// pools without waiting for morloc's to exit (pool.Set.Abandon: the reaper
// has the rest), as morloc's nexus exits as it prints.
func (o *Options) callOnce(ctx context.Context, m *manifest.Manifest, name string, call argmap.Call, stdout io.Writer) (raw ndarray.Value, stop func(), err error) {
	entry := call.Command
	c := &Caller{m: m, stdout: stdout}
	stop = func() {}
	if entry.Type == manifest.Pure {
		pc := compilePure(m, entry)
		if pc.refused != nil {
			return ndarray.Value{}, stop, &ExitError{Code: 1, Err: pc.refused, Plain: true}
		}
		c.pure = map[*manifest.Command]pureCommand{entry: pc}
	} else {
		var err error
		if call, err = prepareCall(m, call); err != nil {
			return ndarray.Value{}, stop, &ExitError{Code: 1, Err: err, Plain: true} // in morloc's words
		}
		if _, err := o.prepareOutputDir(); err != nil {
			return ndarray.Value{}, stop, err
		}
		set := startPools(m, o, entry.NeededPools)
		stop = set.Abandon
		c.pools = set
	}
	raw, err = c.dispatch(ctx, call, mcp.CallHooks{})
	if err != nil {
		return raw, stop, runFailure(ctx, name, entry, err)
	}
	return raw, stop, nil
}

// runFailure words a failed call as the CLI prints it: a pure command's
// evaluation error in morloc's words (docs/spec.md §7.4: "Error:
// evaluation failed: ..."), a pool's failure after the command's name;
// both exit 1. A signal that stopped the run is named rather than a bare
// "context canceled".
func runFailure(ctx context.Context, name string, entry *manifest.Command, err error) error {
	err = stoppedBy(ctx, err)
	if entry.Type != manifest.Pure {
		return &ExitError{Code: 1, Err: fmt.Errorf("%s: %w", name, err)}
	}
	var evalErr *eval.Error
	if errors.As(err, &evalErr) {
		return &ExitError{Code: 1, Err: fmt.Errorf("evaluation failed: %s", evalErr.Msg), Plain: true}
	}
	return err
}

// writeResult prints a command's result as morloc's nexus does: JSON on
// out (or in --output-file), a line.
func writeResult(out io.Writer, m *manifest.Manifest, name string, ret *manifest.Return, raw ndarray.Value, opts runOptions) error {
	if opts.outputFile == "" {
		// A large list of numbers is written a piece at a time.
		if ok, err := argmap.WriteCLIResult(out, ret, raw); ok {
			if err != nil {
				return fmt.Errorf("%s: writing the result: %w", name, err)
			}
			return nil
		}
	}
	value, err := argmap.CLIResultValue(ret, raw)
	var tm *argmap.TypeMismatch
	switch {
	case errors.As(err, &tm):
		return &ExitError{Code: 1, Err: fmt.Errorf("'%s' returned %s", name, tm)}
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
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
			return fmt.Errorf("%s: --output-file: %w", name, err)
		}
		return nil
	}
	if err := writeLine(out, value); err != nil {
		return fmt.Errorf("%s: writing the result: %w", name, err)
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
// which is what keeps it ignored; a run that did not take SIGHUP would die
// of it at once, leaving its pools to the reaper.
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

// StdioConfig is docs/spec.md §3's Claude Desktop-style entry for a
// program: absolute paths, since MCP clients start servers with a minimal
// PATH.
func StdioConfig(m *manifest.Manifest) clientconfig.Stdio {
	self, _ := Executable()
	return clientconfig.Stdio{Name: m.Name, Nexus: self, Manifest: m.Path, Env: clientconfig.Env(os.LookupEnv)}
}

// Executable is this nexus's executable, links resolved: what a client
// config, a launcher or a bundle names to start nexus again.
func Executable() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the nexus executable: %w", err)
	}
	if p, err := filepath.EvalSymlinks(self); err == nil {
		self = p
	}
	return self, nil
}

func printJSON(f *os.File, v any) error {
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
