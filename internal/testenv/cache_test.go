package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

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
	m := regexp.MustCompile(`cache=(\S+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	cache := string(m[1])
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
