package argmap

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
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

// TestSurfaceIsMorlocsButForReals: nexus's tool surface is morloc's
// (--mcp-tools: {"type":"number"} for a Real) but for one widening: a Real
// in an outputSchema is {"anyOf":[{"type":"number"},{"enum":["NaN",
// "Infinity","-Infinity"]}]}, so that a client checking a result accepts a
// NaN (docs/spec.md §4.5). Mapped back, the surface is morloc's byte for
// byte: morloc's own output for json-help (which has no Real), and for
// shapes and scientific nexus's output from before any widening
// (*.spectable.golden.json, frozen: never -update them). No input Real is
// widened, and no output Real is left unwidened.
func TestSurfaceIsMorlocsButForReals(t *testing.T) {
	for _, c := range []struct {
		program, golden string
		reals, outReals bool // a Real anywhere; one in an outputSchema
	}{
		{"json-help", "json-help.tools.golden.json", false, false},
		{"shapes", "shapes.tools.spectable.golden.json", true, false},
		{"scientific", "scientific.tools.spectable.golden.json", true, true},
	} {
		t.Run(c.program, func(t *testing.T) {
			tools, _ := Tools(loadManifest(t, "../../testdata/"+c.program+"/manifest.json"))
			var objects []any
			widened, outNumbers := 0, 0
			for _, tl := range tools {
				o := tl.Object(FullView).clone()
				for i, m := range o {
					v, n := narrowReals(m.Value)
					switch m.Key {
					case "inputSchema":
						if n > 0 {
							t.Errorf("%s: %d Reals of the inputSchema widened, where morloc writes {\"type\":\"number\"}", tl.Name, n)
						}
					case "outputSchema":
						o[i].Value = v
						widened += n
						outNumbers += strings.Count(mustJSON(t, v), `"number"`)
					}
				}
				objects = append(objects, o)
			}
			want, err := os.ReadFile(filepath.Join("testdata", c.golden))
			if err != nil {
				t.Fatal(err)
			}
			got := payloadOf(t, objects)
			if !bytes.Equal(got, want) {
				t.Errorf("the surface with output Reals mapped back differs from %s\n--- got\n%s", c.golden, got)
			}
			if has := bytes.Contains(got, []byte(`"number"`)); c.reals != has {
				t.Errorf("Reals in the surface: %v, want %v", has, c.reals)
			}
			if c.outReals != (widened > 0) {
				t.Errorf("%d output Reals widened", widened)
			}
			if outNumbers != widened {
				t.Errorf("%d numbers in the mapped-back outputSchemas, %d of them widened: an output Real's schema was left as it was", outNumbers, widened)
			}
		})
	}
}

// narrowReals maps every widened Real schema in v back to morloc's
// {"type":"number"} (["number","null"] when optional), keeping the members
// beside it, and counts them.
func narrowReals(v any) (any, int) {
	n := 0
	out := rewriteObjects(v, func(o Object) Object {
		alts, _ := o.Get("anyOf")
		branches, _ := alts.([]any)
		if len(branches) != 2 {
			return o
		}
		number, _ := branches[0].(Object)
		enum, _ := branches[1].(Object)
		if !isNonFiniteEnum(enum) || len(number) != 1 || number[0].Key != "type" {
			return o
		}
		n++
		out := Object{}
		for _, m := range o {
			if m.Key == "anyOf" {
				m = number[0]
			}
			out = append(out, m)
		}
		return out
	})
	return out, n
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

// morlocLaunchers are the launcher scripts of internal/manifest's fixtures
// (see its testdata/launchers/README.md): real ones morloc 0.69 compiled,
// real ones from morloc's repository, and the 0.75 and 0.96 translations of
// one 0.69 program. Each name is the file's path below launchers/.
func morlocLaunchers(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "manifest", "testdata", "launchers")
	found := map[string]string{}
	for _, pattern := range []string{"*/nexus", "morloc-repo/*"} {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(root, f)
			found[strings.ReplaceAll(rel, string(filepath.Separator), "_")] = f
		}
	}
	if len(found) < 10 {
		t.Fatalf("found %d launchers under %s, want the 10 fixtures", len(found), root)
	}
	return found
}

// TestMorlocLaunchersGolden pins the tool surface of every program morloc
// wrote a launcher for, from 0.69 on: the tools/list payload.
func TestMorlocLaunchersGolden(t *testing.T) {
	for name, path := range morlocLaunchers(t) {
		t.Run(name, func(t *testing.T) {
			tools, excluded := Tools(loadManifest(t, path))
			if len(tools) == 0 {
				t.Fatal("no tools")
			}
			if len(excluded) != 0 {
				t.Errorf("exclusions: %v", excluded) // none of these programs has a type MCP cannot carry
			}
			checkGolden(t, filepath.Join("launchers", name+".tools.golden.json"), toolsPayload(t, tools))
		})
	}
}

// One program compiled by morloc 0.69 and written out as 0.75 and 0.96
// would write it has one tool surface (nexus reads every format,
// docs/spec.md §2.7): 0.75 still writes Int
// as i4, so its surface is the same to the byte; 0.96 writes j, so the
// same but for the ranges of 0.69's 32-bit Int.
func TestLauncherEraSurfacesAgree(t *testing.T) {
	payload := func(path string) []byte {
		tools, excluded := Tools(loadManifest(t, path))
		if len(excluded) != 0 {
			t.Fatalf("%s: exclusions %v", path, excluded)
		}
		return toolsPayload(t, tools)
	}
	dir := filepath.Join("..", "manifest", "testdata", "launchers")
	v069 := payload(filepath.Join(dir, "v0.69-py", "nexus"))
	v075 := payload(filepath.Join(dir, "written-v0.75-py", "nexus"))
	v096 := payload(filepath.Join(dir, "written-v0.96-py", "nexus"))
	if !bytes.Equal(v069, v075) {
		t.Errorf("0.69 and 0.75 surfaces differ\n--- 0.69\n%s\n--- 0.75\n%s", v069, v075)
	}
	if !bytes.Contains(v069, []byte(`"maximum": 2147483647`)) {
		t.Errorf("0.69's Int (i4) has no range in\n%s", v069)
	}
	if bytes.Contains(v096, []byte(`"maximum"`)) {
		t.Errorf("0.96's Int (j) has a range in\n%s", v096)
	}
	if a, b := stripRanges(t, v069), stripRanges(t, v096); a != b {
		t.Errorf("0.69 and 0.96 surfaces differ beyond the ranges\n--- 0.69\n%s\n--- 0.96\n%s", a, b)
	}
}

// stripRanges re-encodes a JSON document without its "minimum" and
// "maximum" members.
func stripRanges(t *testing.T, doc []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "minimum")
			delete(x, "maximum")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	out, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
