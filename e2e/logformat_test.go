package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// --log-format json: nexus's stderr is JSON lines, one record a line, for
// log collectors; what a pool prints comes as records too ("pool output",
// pool, text), so that no raw line breaks the stream.
func TestLogFormatJSON(t *testing.T) {
	s := startServer(t, program("shapes"), "--log-format", "json", "--log-level", "debug")
	s.handshake()
	if text, isErr := s.callTool(2, "chatty", map[string]any{}); isErr || text != `"done"` {
		t.Fatalf("chatty: %q (isError %v)", text, isErr)
	}
	if err := s.closeAndWait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	var outputs []string
	excluded := false // docs/spec.md §4.6's note, as a record
	lines := strings.Split(strings.TrimSuffix(s.stderr.String(), "\n"), "\n")
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("stderr line %d is not a JSON object: %q", i+1, line)
			continue
		}
		if rec["time"] == nil || rec["level"] == nil || rec["msg"] == nil {
			t.Errorf("stderr line %d lacks time, level or msg: %s", i+1, line)
		}
		if rec["msg"] == "excluding command from the tool surface" && rec["command"] == "readStdin" && rec["reason"] == "reads from @stdin" {
			excluded = true
		}
		if rec["msg"] == "pool output" {
			if rec["pool"] != "py" {
				t.Errorf("pool output from pool %v, want py: %s", rec["pool"], line)
			}
			text, _ := rec["text"].(string)
			outputs = append(outputs, text)
		}
	}
	for _, want := range []string{"chatty: print() from the pool", "from-child"} {
		found := false
		for _, o := range outputs {
			found = found || o == want
		}
		if !found {
			t.Errorf("no pool output record with text %q among %q", want, outputs)
		}
	}
	if !excluded {
		t.Errorf("no record says readStdin is excluded (docs/spec.md §4.6's note)")
	}
	if len(lines) < 3 {
		t.Errorf("%d stderr lines at debug level: %q", len(lines), lines)
	}
}

// A bad --log-format is a usage error naming what is allowed.
func TestLogFormatBad(t *testing.T) {
	_, errOut, code := runNexus(t, "mcp", program("shapes"), "--log-format", "xml")
	if code != 2 || !strings.Contains(errOut, `--log-format: expected text or json, got "xml"`) {
		t.Errorf("--log-format xml: code %d, stderr %q", code, errOut)
	}
}
