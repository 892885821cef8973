package testenv

import (
	"fmt"
	"os"
	"testing"
)

// RunInScratchCache runs m's tests with XDG_CACHE_HOME at a fresh
// directory, removed afterwards, and returns m.Run's exit status: nexus
// extracts the runtimes pools import into the user's cache, and a test run
// must neither use nor change the developer's own. name tells the
// directory apart (nexus-<name>-test-cache-*).
func RunInScratchCache(m *testing.M, name string) int {
	cache, err := os.MkdirTemp("", "nexus-"+name+"-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(cache)
	os.Setenv("XDG_CACHE_HOME", cache)
	return m.Run()
}
