package program

import (
	"os"
	"testing"

	"github.com/nexus-mcp/nexus/internal/pool"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

func TestMain(m *testing.M) {
	// Pools started with a reaper run this test binary as it.
	pool.RunReaperIfAsked()
	os.Exit(testenv.RunInScratchCache(m, "program"))
}
