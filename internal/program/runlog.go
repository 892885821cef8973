package program

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

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
	out     io.Writer
	color   bool // keep the template's colour codes
}

func beginRunLog(m *manifest.Manifest, name string) *runLog {
	if m.RunLog == nil || os.Getenv("MORLOC_QUIET") != "" {
		return nil
	}
	rl := &runLog{tmpl: m.RunLog, name: name, started: time.Now(), out: os.Stderr,
		color: os.Getenv("NO_COLOR") == "" && isTerminal(os.Stderr)}
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
		code, t, msg = ExitStatus(err), rl.tmpl.EpilogueFail, err.Error()
	}
	if t != nil {
		rl.emit(rl.render(*t, rfc3339(time.Now()), &code, msg))
	}
}

func rfc3339(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999999-07:00")
}

// render fills a template's placeholders; code is nil for the prologue,
// written before the run has a status.
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

// csi matches a terminal's escape sequences, compiled when a run log is
// first written without colour.
var csi = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]") })

func (rl *runLog) emit(line string) {
	if !rl.color {
		line = csi().ReplaceAllString(line, "")
	}
	fmt.Fprintln(rl.out, line)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
