package argmap

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var updateMorloc = flag.Bool("update-morloc", false, "rewrite testdata/morloc/*/morloc.*: morloc's derived --mcp-tools output and exclusion notes")

// corpusDir holds programs compiled by the real morloc 0.98.2 compiler
// (testdata/morloc/README.md).
const corpusDir = "../../testdata/morloc"

func corpusPrograms(t *testing.T) []string {
	t.Helper()
	manifests, err := filepath.Glob(filepath.Join(corpusDir, "*", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var progs []string
	for _, m := range manifests {
		progs = append(progs, filepath.Base(filepath.Dir(m)))
	}
	if len(progs) < 10 {
		t.Fatalf("%d programs in %s, want the corpus", len(progs), corpusDir)
	}
	return progs
}

// TestMorlocRefCalibration: the port of morloc's --mcp-tools
// (morlocref_test.go) prints, for json-help's manifest, what morloc 0.98.2
// itself printed (json-help.tools.golden.json), byte for byte. This is
// what makes the port's output for the corpus an expectation to trust.
func TestMorlocRefCalibration(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/json-help/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	out, notes, err := morlocMCPTools(raw)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/json-help.tools.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) || notes != "" {
		t.Errorf("the port of morloc's --mcp-tools differs from morloc's own output (notes %q)\n--- port\n%s\n--- morloc\n%s", notes, out, want)
	}
}

// A port that ignores what it should read would pass the calibration by
// luck only on json-help's shapes: each rule it ports shows here.
func TestMorlocRefRules(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{"?j", `{"type":["integer","null"]}`},
		{"<dict>m21af81b?s", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":["string","null"]}},"required":["a"],"additionalProperties":false}`},
		{"t2sj", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2,"maxItems":2}`},
		{"&4Treem23valj8childrena^4Tree", `{"type":"object","properties":{"val":{"type":"integer"},"children":{"type":"array","items":{"type":"object"}}},"required":["val","children"],"additionalProperties":false}`},
		{"&5Chainm24words4next?^5Chain", `{"type":"object","properties":{"word":{"type":"string"},"next":{"type":["object","null"]}},"required":["word"],"additionalProperties":false}`},
		{"T:21xj1ys", `{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x","y"],"additionalProperties":false}}`},
		{"I", `{"type":"string"}`},
	} {
		s, err := refParseSchema(c.schema)
		if err != nil {
			t.Errorf("%s: %v", c.schema, err)
			continue
		}
		got := strings.Join(strings.Fields(refPretty(refSchemaToJSONSchema(s))), "")
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.schema, got, c.want)
		}
	}
}

// Deliberate differences between nexus's tool surface and morloc's
// (testdata/morloc/README.md, "Deliberate differences"), mapped back here:
//
//  1. a Real's schema admits "NaN", "Infinity" and "-Infinity" (issue 18):
//     narrowReals maps it back to {"type":"number"};
//  2. a recursive record's back-reference is {"$ref":"#/$defs/T"}, with the
//     record under the schema's "$defs", where morloc writes
//     {"type":"object"} (issue 20 §5): collapseRefs maps it back.
func morlocView(t *Tool) Object {
	o, _ := narrowReals(t.Object(FullView).clone())
	return collapseRefs(o).(Object)
}

// collapseRefs replaces each {"$ref":...} with {"type":"object"}, an
// optional one ({"anyOf":[{"$ref":...},{"type":"null"}]}) with
// {"type":["object","null"]}, and drops "$defs".
func collapseRefs(v any) any {
	switch x := v.(type) {
	case Object:
		if _, ok := x.Get("$ref"); ok && len(x) == 1 {
			return Object{{"type", "object"}}
		}
		out := Object{}
		for _, m := range x {
			if m.Key == "$defs" {
				continue
			}
			if m.Key == "anyOf" {
				if alts, _ := m.Value.([]any); len(alts) == 2 {
					ref, _ := alts[0].(Object)
					null, _ := alts[1].(Object)
					if _, isRef := ref.Get("$ref"); isRef && len(null) == 1 && null[0].Key == "type" && null[0].Value == "null" {
						out = append(out, Member{"type", []any{"object", "null"}})
						continue
					}
				}
			}
			out = append(out, Member{m.Key, collapseRefs(m.Value)})
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = collapseRefs(e)
		}
		return out
	}
	return v
}

// TestMorlocCorpus: for every program of the corpus, (1) the checked-in
// expectation is what the port of morloc's code derives from its manifest
// (-update-morloc rewrites it); (2) nexus's tools, with the deliberate
// differences mapped back, are morloc's byte for byte; (3) nexus leaves
// out the commands morloc leaves out, and its note gives morloc's reason.
func TestMorlocCorpus(t *testing.T) {
	for _, prog := range corpusPrograms(t) {
		t.Run(prog, func(t *testing.T) {
			dir := filepath.Join(corpusDir, prog)
			raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			out, notes, err := morlocMCPTools(raw)
			if err != nil {
				t.Fatal(err)
			}
			toolsFile := filepath.Join(dir, "morloc.mcp-tools.json")
			notesFile := filepath.Join(dir, "morloc.excluded.txt")
			if *updateMorloc {
				if err := os.WriteFile(toolsFile, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(notesFile, []byte(notes), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wantTools, err := os.ReadFile(toolsFile)
			if err != nil {
				t.Fatalf("%v (derive it: go test ./internal/argmap -run TestMorlocCorpus -update-morloc)", err)
			}
			wantNotes, err := os.ReadFile(notesFile)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(wantTools) || notes != string(wantNotes) {
				t.Fatalf("%s or %s is not what morloc's code derives from the manifest: rerun with -update-morloc", toolsFile, notesFile)
			}

			tools, excluded := Tools(loadManifest(t, filepath.Join(dir, "manifest.json")))
			var objects []any
			for _, tl := range tools {
				objects = append(objects, morlocView(tl))
			}
			if got := payloadOf(t, objects); !bytes.Equal(got, wantTools) {
				t.Errorf("nexus's tools, deliberate differences mapped back, differ from morloc's\n--- nexus\n%s\n--- morloc\n%s", got, wantTools)
			}
			var gotNotes []string
			for _, e := range excluded {
				gotNotes = append(gotNotes, strings.Replace(e.String(), "nexus mcp:", "morloc mcp:", 1))
			}
			wantLines := strings.Split(strings.TrimSuffix(string(wantNotes), "\n"), "\n")
			if string(wantNotes) == "" {
				wantLines = nil
			}
			if len(gotNotes) != len(wantLines) {
				t.Fatalf("nexus excludes %q, morloc %q", gotNotes, wantLines)
			}
			sort.Strings(gotNotes)
			sort.Strings(wantLines)
			for i := range gotNotes {
				// morloc's words first; nexus may say which argument after them.
				if !strings.HasPrefix(gotNotes[i], strings.TrimSuffix(wantLines[i], ")")) {
					t.Errorf("note %q does not give morloc's reason %q", gotNotes[i], wantLines[i])
				}
			}
		})
	}
}
