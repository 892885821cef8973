package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// requireCppPool skips when the example C++ pool could not be built (no
// g++ or nlohmann-json on this machine); .ci/run installs both.
func requireCppPool(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(program("numeric"), "pools", "cpp", "pool-cpp.out")); err != nil {
		testenv.MissingTool(t, "testdata/numeric's C++ pool is not built (needs g++ and nlohmann-json3-dev; run make deps)")
	}
}

// The C++ program testdata/numeric served over MCP: exact 64-bit integers,
// a record return, a thrown exception, and a segfault that costs one call only.
func TestCppProgramOverMCP(t *testing.T) {
	requireCppPool(t)
	s := startServer(t, program("numeric"))
	s.handshake()
	call := func(id int, name string, args map[string]any) (string, bool, msg) {
		r := s.request(id, "tools/call", map[string]any{"name": name, "arguments": args})
		text, isErr := toolText(t, r)
		return text, isErr, r
	}
	if text, isErr, _ := call(1, "factorial", map[string]any{"_1": 20}); isErr || text != "2432902008176640000" {
		t.Errorf("factorial 20 = %q (isError %v), want 2432902008176640000", text, isErr)
	}
	if text, isErr, _ := call(2, "factorial", map[string]any{"_1": -1}); !isErr || text == "" {
		t.Errorf("factorial -1 = %q (isError %v), want an isError with the exception text", text, isErr)
	}
	text, isErr, r := call(3, "stats", map[string]any{"_1": []float64{1, 2, 3.5}})
	sc, _ := json.Marshal(r["result"].(map[string]any)["structuredContent"])
	if isErr || text != `{"mean":2.1666666666666665,"min":1,"max":3.5}` || string(sc) != `{"max":3.5,"mean":2.1666666666666665,"min":1}` {
		t.Errorf("stats: text %q structuredContent %s (isError %v)", text, sc, isErr)
	}
	if text, isErr, _ := call(4, "dot", map[string]any{"_1": []float64{1, 2}, "_2": []float64{3}}); !isErr || !strings.Contains(text, "2 and 1") {
		t.Errorf("dot of mismatched vectors = %q (isError %v), want the exception's message", text, isErr)
	}
	text, isErr, _ = call(5, "crash", map[string]any{})
	if !isErr || !strings.Contains(text, "died") || !strings.Contains(text, "segmentation fault") {
		t.Errorf("crash = %q (isError %v), want isError saying the pool died of a segfault", text, isErr)
	}
	if text, isErr, _ := call(6, "mean", map[string]any{"_1": []float64{1, 2}}); isErr || text != "1.5" {
		t.Errorf("mean after a crash = %q (isError %v), want 1.5 from a restarted pool", text, isErr)
	}
	if text, isErr, _ := call(7, "chatty", map[string]any{}); isErr {
		t.Errorf("chatty: %s", text)
	}
	s.closeExpectingNoMore()
	if !strings.Contains(s.stderr.String(), "from-cpp-child") {
		t.Errorf("the C++ pool's child output did not reach stderr")
	}
}
