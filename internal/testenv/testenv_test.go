package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Each rule, run in a child test binary with and without -short: skipped
// under -short, failed (MissingTool) or run (Long) without it.
func TestRules(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		return
	}
	for _, tc := range []struct {
		test  string
		short bool
		want  string
	}{
		{"TestChildMissing", true, "--- SKIP: TestChildMissing"},
		{"TestChildMissing", false, "--- FAIL: TestChildMissing"},
		{"TestChildLong", true, "--- SKIP: TestChildLong"},
		{"TestChildLong", false, "--- PASS: TestChildLong"},
	} {
		args := []string{"-test.run", "^" + tc.test + "$", "-test.v"}
		if tc.short {
			args = append(args, "-test.short")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1")
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("%s (short %v): want %q in\n%s", tc.test, tc.short, tc.want, out)
		}
	}
}

func TestChildMissing(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "" {
		t.Skip("run by TestRules")
	}
	MissingTool(t, "frobnicator is not installed")
}

func TestChildLong(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "" {
		t.Skip("run by TestRules")
	}
	Long(t)
}
