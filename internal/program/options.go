package program

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/pool"
)

// DefaultCallTimeout bounds a tool call whose command sets no timeout. A
// hung function should not hold a worker, and its client, forever; five
// minutes is long for an interactive tool yet leaves room for real work.
// Functions known to take longer say so in their metadata. MCP clients
// usually give up sooner (and cancel, which nexus honours the same way).
const DefaultCallTimeout = 5 * time.Minute

// DefaultStartTimeout is how long a pool may take to start and say it is
// ready, unless --start-timeout says otherwise.
const DefaultStartTimeout = 30 * time.Second

// Options are nexus's global flags, as cmd/nexus fills them from the
// command line, and the logging they set up.
type Options struct {
	LogLevel     string
	LogFormat    string // text or json
	Workers      int    // per pool, for pools whose manifest entry sets none; 0: the language's default
	Timeout      time.Duration
	StartTimeout time.Duration
	OutputDir    string // --output-dir; settled by prepareOutputDir
	Command      string // the subcommand running ("mcp", "run", ...)
	TimeoutGiven bool   // --timeout was on the command line
	Version      string // nexus's own, naming a server of several programs

	// poolEvents feeds nexus serve's /metrics, when it is on.
	poolEvents func(lang string, e pool.Event)
	// jsonLog is the stderr logger under --log-format json: pool output
	// goes to it as records too (pool.Options.OutputLog), and so does the
	// error nexus exits with.
	jsonLog *slog.Logger
}

// SetupLogging makes slog's default logger write to stderr at the level
// and in the format the options name.
func (o *Options) SetupLogging() error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(o.LogLevel)); err != nil {
		return Usagef("--log-level: expected debug, info, warn or error, got %q", o.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch o.LogFormat {
	case "text":
		o.jsonLog = nil
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, opts)))
	case "json":
		o.jsonLog = slog.New(slog.NewJSONHandler(os.Stderr, opts))
		slog.SetDefault(o.jsonLog)
	default:
		return Usagef("--log-format: expected text or json, got %q", o.LogFormat)
	}
	return nil
}

// Fail writes the error nexus exits with to stderr and returns the exit
// status.
func (o *Options) Fail(err error) int {
	code := ExitStatus(err)
	if o.jsonLog != nil && !isUsage(err) {
		o.jsonLog.Error("nexus failed", "err", err.Error(), "exit", code)
		return code
	}
	writeFailure(os.Stderr, err)
	return code
}

// noteExclusion writes docs/spec.md §4.6's note that a command is not a
// tool: its text as the spec gives it, or a record under --log-format json.
func (o *Options) noteExclusion(e argmap.Exclusion) {
	if o.jsonLog != nil {
		o.jsonLog.Info("excluding command from the tool surface", "command", e.Command, "reason", e.Reason)
		return
	}
	fmt.Fprintln(os.Stderr, e.String())
}

// prepareOutputDir settles the output directory (o.OutputDir), where
// functions write the files they return (NEXUS_OUTPUT_DIR in their pools):
// --output-dir when given (made if missing); for a server, else, a fresh
// temporary directory that the function returned removes; for nexus run,
// else, the current directory, where a person running a command expects
// its files.
func (o *Options) prepareOutputDir() (func(), error) {
	switch {
	case o.OutputDir != "":
		if err := os.MkdirAll(o.OutputDir, 0o755); err != nil {
			return nil, fmt.Errorf("--output-dir: %w", err)
		}
		abs, err := filepath.Abs(o.OutputDir)
		if err != nil {
			return nil, fmt.Errorf("--output-dir: %w", err)
		}
		o.OutputDir = abs
		return func() {}, nil
	case o.Command == "run":
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		o.OutputDir = wd
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("", "nexus-output-")
	if err != nil {
		return nil, fmt.Errorf("making nexus's output directory: %w", err)
	}
	o.OutputDir = dir
	return func() { os.RemoveAll(dir) }, nil
}
