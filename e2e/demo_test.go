package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// make demo's transcript (scripts/demo.sh on testdata/plots) is the first
// thing a newcomer sees: every pool of the program answers, the bad argument
// gets its error, and nexus ends cleanly with no pool failing to start.
func TestDemoTranscript(t *testing.T) {
	for _, why := range []string{cppAvailable(), rAvailable()} {
		if why != "" {
			testenv.MissingTool(t, why)
		}
	}
	cmd := exec.Command(filepath.Join(repoRoot, "scripts", "demo.sh"), nexusBin, program("plots"))
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	transcript := string(out)
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, transcript)
	}
	checkSays(t, "the demo's transcript", transcript, []string{
		`"id":3,"result":{"content":[{"type":"text","text":"[10.78,11.32,`,                          // Python
		`"id":4,"result":{"content":[{"type":"text","text":"\"sample control: n=12 mean=10.178`,     // R
		`"id":5,"result":{"content":[{"type":"text","text":"2598960"}],"isError":false}`,            // C++
		`"id":6,"result":{"content":[{"type":"resource_link","uri":"nexus://plots/output/demo.png"`, // R's figure
		`"id":7,"error":{"code":-32602,"message":"argument 'n' of 'binomial': expected integer, got string"`,
		"exited with status 0",
	}, []string{"failed to start", "not installed", "panic"})
}
