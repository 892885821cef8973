package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
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
		{"TestChildMorlocAbsent", true, "--- SKIP: TestChildMorlocAbsent"},
		{"TestChildMorlocAbsent", false, "--- FAIL: TestChildMorlocAbsent"},
	} {
		args := []string{"-test.run", "^" + tc.test + "$", "-test.v"}
		if tc.short {
			args = append(args, "-test.short")
		}
		cmd := exec.Command(os.Args[0], args...)
		// A home without morloc's runtime: morloc is absent there.
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "HOME="+t.TempDir())
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

func TestChildMorlocAbsent(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "" {
		t.Skip("run by TestRules")
	}
	Morloc(t)
	t.Log("morloc found")
}

// Morloc names every file it looked for when one is missing, and how to
// install them.
func TestMorlocSaysWhatIsMissing(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestChildMorlocAbsent$", "-test.v", "-test.short")
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "HOME="+home)
	out, _ := cmd.CombinedOutput()
	for _, want := range []string{home + "/.local/bin/morloc-nexus", home + "/.local/share/morloc/lib/libmorloc.so", "scripts/install-morloc.sh"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
}

func TestMain(m *testing.M) { os.Exit(RunInScratchCache(m, "testenv")) }

// The tests run with a cache directory of their own, not the one they were
// given, and it is gone once they end.
func TestScratchCache(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		return
	}
	given := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestChildCache$", "-test.v")
	cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "XDG_CACHE_HOME="+given)
	out, err := cmd.CombinedOutput()
	_, logged, found := strings.Cut(string(out), "cache=")
	if err != nil || !found {
		t.Fatalf("child: %v\n%s", err, out)
	}
	cache := strings.Fields(logged)[0]
	if cache == given || !strings.HasPrefix(filepath.Base(cache), "nexus-testenv-test-cache-") {
		t.Errorf("the tests ran with XDG_CACHE_HOME=%s, want a fresh nexus-testenv-test-cache-* (given %s)", cache, given)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("%s is left behind (%v)", cache, err)
	}
}

func TestChildCache(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "" {
		t.Skip("run by TestScratchCache")
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if st, err := os.Stat(cache); err != nil || !st.IsDir() {
		t.Fatalf("XDG_CACHE_HOME=%s: %v", cache, err)
	}
	t.Log("cache=" + cache)
}
