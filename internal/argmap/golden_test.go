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
// the tool objects morloc prints (json-help has no Real, the one place
// where nexus's surface differs: TestSurfaceIsMorlocsButForReals).
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

// TestSurfaceIsMorlocsButForReals: nexus's tool surface is morloc's (SPEC
// §4.5's table, which morloc's --mcp-tools prints) but for one widening: a
// Real's {"type":"number"} is {"anyOf":[{"type":"number"},{"enum":["NaN",
// "Infinity","-Infinity"]}]} (issue 18 §3). Mapped back, the surface is the
// table's byte for byte: morloc's own output for json-help (which has no
// Real), and for shapes and scientific nexus's output from before the
// widening (*.spectable.golden.json, frozen: never -update them). And no
// number is left unwidened.
func TestSurfaceIsMorlocsButForReals(t *testing.T) {
	for _, c := range []struct {
		program, golden string
		reals           bool
	}{
		{"json-help", "json-help.tools.golden.json", false},
		{"shapes", "shapes.tools.spectable.golden.json", true},
		{"scientific", "scientific.tools.spectable.golden.json", true},
	} {
		t.Run(c.program, func(t *testing.T) {
			tools, _ := Tools(loadManifest(t, "../../testdata/"+c.program+"/manifest.json"))
			var objects []any
			widened := 0
			for _, tl := range tools {
				o, n := narrowReals(tl.Object(FullView).clone())
				objects = append(objects, o)
				widened += n
			}
			want, err := os.ReadFile(filepath.Join("testdata", c.golden))
			if err != nil {
				t.Fatal(err)
			}
			got := payloadOf(t, objects)
			if !bytes.Equal(got, want) {
				t.Errorf("the surface with Reals mapped back differs from %s\n--- got\n%s", c.golden, got)
			}
			if c.reals != (widened > 0) {
				t.Errorf("%d Real schemas widened", widened)
			}
			if left := bytes.Count(got, []byte(`"number"`)); left != widened {
				t.Errorf("%d numbers in the mapped-back surface, %d of them widened: a Real's schema was left as it was", left, widened)
			}
		})
	}
}

// narrowReals maps every Real schema in v back to SPEC §4.5's
// {"type":"number"} (["number","null"] when optional), keeping the members
// beside it, and counts them.
func narrowReals(v any) (any, int) {
	switch x := v.(type) {
	case Object:
		n := 0
		if alts, ok := x.Get("anyOf"); ok {
			if branches, _ := alts.([]any); len(branches) == 2 {
				number, _ := branches[0].(Object)
				enum, _ := branches[1].(Object)
				if isNonFiniteEnum(enum) && len(number) == 1 && number[0].Key == "type" {
					out := Object{}
					for _, m := range x {
						if m.Key == "anyOf" {
							out = append(out, number[0])
						} else {
							out = append(out, m)
						}
					}
					return out, 1
				}
			}
		}
		out := make(Object, len(x))
		for i, m := range x {
			var k int
			out[i].Key = m.Key
			out[i].Value, k = narrowReals(m.Value)
			n += k
		}
		return out, n
	case []any:
		n := 0
		out := make([]any, len(x))
		for i, e := range x {
			var k int
			out[i], k = narrowReals(e)
			n += k
		}
		return out, n
	}
	return v, 0
}

// payloadOf is toolsPayload for tool objects.
func payloadOf(t *testing.T, objects []any) []byte {
	t.Helper()
	if objects == nil {
		objects = []any{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Tools []any `json:"tools"`
	}{objects}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
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
