package program

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// The run log's templates get the run's facts, and its colour codes only
// where colour is on.
func TestRunLog(t *testing.T) {
	str := func(s string) *string { return &s }
	tmpl := &manifest.RunLog{
		Prologue:     str("\x1b[1mstart {name} pid={pid} run={run_id} exit={exit_code}\x1b[0m"),
		EpilogueOK:   str("ok {name} exit={exit_code} at={finished_at}"),
		EpilogueFail: str("fail {name} exit={exit_code} error={error}"),
	}
	pid := strconv.Itoa(os.Getpid())
	tests := []struct {
		name  string
		color bool
		err   error
		want  []string
	}{
		{"success", false, nil, []string{"start cmd pid=" + pid + " run= exit=", "ok cmd exit=0 at=2"}},
		{"failure with its status", false, &ExitError{Code: 3, Err: errors.New("boom")}, []string{"start cmd pid=" + pid + " run= exit=", "fail cmd exit=3 error=boom"}},
		{"colour kept", true, errors.New("x"), []string{"\x1b[1mstart cmd pid=" + pid + " run= exit=\x1b[0m", "fail cmd exit=1 error=x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			rl := &runLog{tmpl: tmpl, name: "cmd", started: time.Now(), out: &out, color: tt.color}
			rl.emit(rl.render(*tmpl.Prologue, "", nil, ""))
			rl.end(tt.err)
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("lines %q, want %d", lines, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d %q, want it to start %q", i, lines[i], w)
				}
			}
		})
	}
	// No run_log, or MORLOC_QUIET: nothing.
	t.Setenv("MORLOC_QUIET", "1")
	if rl := beginRunLog(&manifest.Manifest{RunLog: tmpl}, "cmd"); rl != nil {
		t.Error("MORLOC_QUIET did not silence the run log")
	}
	rl := beginRunLog(&manifest.Manifest{}, "cmd")
	rl.end(nil) // a nil run log ends quietly
}
