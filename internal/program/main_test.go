package program

import (
	"fmt"
	"os"
	"testing"

	"github.com/nexus-mcp/nexus/internal/pool"
)

func TestMain(m *testing.M) {
	// Pools started with a reaper run this test binary as it.
	pool.RunReaperIfAsked()
	// The runtimes pools import are extracted into a cache: a fresh one,
	// not the developer's.
	cache, err := os.MkdirTemp("", "nexus-program-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}
