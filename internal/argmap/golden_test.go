package argmap

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

var update = flag.Bool("update", false, "rewrite argmap's own golden files (never the morloc reference)")

// toolsPayload is the tools/list payload as `--mcp-tools` prints it.
func toolsPayload(t *testing.T, tools []*Tool) []byte {
	t.Helper()
	if tools == nil {
		tools = []*Tool{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Tools []*Tool `json:"tools"`
	}{tools}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func loadManifest(t testing.TB, path string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestJSONHelpGolden: for morloc's json-help program nexus prints exactly
// the tool objects morloc prints.
func TestJSONHelpGolden(t *testing.T) {
	m := loadManifest(t, "../../testdata/json-help/manifest.json")
	tools, excluded := Tools(m)
	if len(excluded) != 0 {
		t.Fatalf("unexpected exclusions: %v", excluded)
	}
	got := toolsPayload(t, tools)
	want, err := os.ReadFile("testdata/json-help.tools.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tools payload differs from morloc's\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// TestShapesGolden pins the tool surface of the shapes example program: the
// tools/list payload and the exclusion notes.
func TestShapesGolden(t *testing.T) {
	path := "../../testdata/shapes/manifest.json"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not present yet", path)
	}
	m := loadManifest(t, path)
	tools, excluded := Tools(m)
	var notes bytes.Buffer
	for _, e := range excluded {
		notes.WriteString(e.String() + "\n")
	}
	checkGolden(t, "shapes.tools.golden.json", toolsPayload(t, tools))
	checkGolden(t, "shapes.excluded.golden.txt", notes.Bytes())
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", golden, got, want)
	}
}
