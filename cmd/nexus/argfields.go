package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// prepareCall does what a call needs before it runs, over MCP and HTTP
// (the CLI does the same in argmap.CLICall and runProgram): the files of
// `source: file` arguments read and the given paths checked (argmap.Resolve),
// then morloc's NUL check. A failure is the call's error (isError over
// MCP), naming the command, the argument and the check.
func prepareCall(m *manifest.Manifest, call argmap.Call) (argmap.Call, error) {
	resolved, err := argmap.Resolve(call)
	if err != nil {
		return argmap.Call{}, fmt.Errorf("%s: %w", call.Command.Name, err)
	}
	call = resolved
	if err := nulCheck(m, call); err != nil {
		return argmap.Call{}, err
	}
	return call, nil
}

// nulCheck refuses a Str holding a NUL byte on its way to a morloc pool
// whose language cannot hold one (allow_string_null false), unless the
// program was built with --unsafe-skip-null-check, as morloc's nexus does
// (dispatch.rs dispatch_command_parsed, MORLOC_SKIP_NULL_CHECK=1 too).
// nexus's own runtimes check their strings themselves.
func nulCheck(m *manifest.Manifest, call argmap.Call) error {
	c := call.Command
	if m == nil || c == nil || c.Type != manifest.Remote || c.Pool < 0 || c.Pool >= len(m.Pools) {
		return nil
	}
	p := m.Pools[c.Pool]
	if p.AllowStringNull || p.Runtime != manifest.RuntimeMorloc || m.UnsafeSkipNullCheck || skipNullCheckEnv() {
		return nil
	}
	for i, a := range call.Args {
		if at, ok := argmap.FirstNul(a); ok {
			return &argmap.InputError{Msg: fmt.Sprintf("%s does not support embedded NUL bytes in strings (at args[%d]%s)", p.Lang, i, at)}
		}
	}
	return nil
}

// skipNullCheckEnv is MORLOC_SKIP_NULL_CHECK, which turns the check off as
// morloc's runtime reads it (null_check.rs env_skip_null_check).
func skipNullCheckEnv() bool {
	switch os.Getenv("MORLOC_SKIP_NULL_CHECK") {
	case "1", "true", "TRUE", "yes":
		return true
	}
	return false
}

// runLog emits a program's run-scope log lines (manifest run_log) around
// one CLI run, as morloc's nexus does (runlog.rs): the prologue once the
// arguments are read, the ok or fail epilogue when the run ends, on stderr,
// with the runtime placeholders filled. Colour codes are kept only for a
// terminal without NO_COLOR (log.rs color_enabled); MORLOC_QUIET silences
// both. {run_id} is empty: nexus has no --log-dir run directory.
type runLog struct {
	tmpl    *manifest.RunLog
	name    string
	started time.Time
}

func beginRunLog(m *manifest.Manifest, name string) *runLog {
	if m.RunLog == nil || os.Getenv("MORLOC_QUIET") != "" {
		return nil
	}
	rl := &runLog{tmpl: m.RunLog, name: name, started: time.Now()}
	if t := rl.tmpl.Prologue; t != nil {
		rl.emit(rl.render(*t, "", nil, ""))
	}
	return rl
}

// end emits the epilogue for a run that ended with err (nil: success).
func (rl *runLog) end(err error) {
	if rl == nil {
		return
	}
	code, t, msg := 0, rl.tmpl.EpilogueOK, ""
	if err != nil {
		code, t, msg = 1, rl.tmpl.EpilogueFail, err.Error()
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
	}
	if t != nil {
		rl.emit(rl.render(*t, rfc3339(time.Now()), &code, msg))
	}
}

func rfc3339(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999999-07:00")
}

func (rl *runLog) render(t, finished string, code *int, errMsg string) string {
	host, _ := os.Hostname()
	runtime := 0.0
	exit := ""
	if code != nil {
		runtime = time.Since(rl.started).Seconds()
		exit = strconv.Itoa(*code)
	}
	return strings.NewReplacer(
		"{name}", rl.name,
		"{run_id}", "",
		"{started_at}", rfc3339(rl.started),
		"{finished_at}", finished,
		"{runtime}", strconv.FormatFloat(runtime, 'f', 6, 64),
		"{pid}", strconv.Itoa(os.Getpid()),
		"{hostname}", host,
		"{exit_code}", exit,
		"{error}", errMsg,
	).Replace(t)
}

var csi = regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]")

func (rl *runLog) emit(line string) {
	if os.Getenv("NO_COLOR") != "" || !isTerminal(os.Stderr) {
		line = csi.ReplaceAllString(line, "")
	}
	fmt.Fprintln(os.Stderr, line)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
