package argmap

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/morloccorpus"
)

var updateMorloc = flag.Bool("update-morloc", false, "rewrite testdata/morloc/*/morloc.*: morloc's derived --mcp-tools output and exclusion notes")

// corpusDir holds programs compiled by the real morloc 0.98.2 compiler
// (testdata/morloc/README.md).
const corpusDir = "../../testdata/morloc"

func corpusPrograms(t *testing.T) []string {
	t.Helper()
	progs, err := morloccorpus.Programs(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	return progs
}

// TestMorlocRefCalibration: the port of morloc's --mcp-tools
// (package morloccorpus) prints, for json-help's manifest, what morloc 0.98.2
// itself printed (json-help.tools.golden.json), byte for byte. This is
// what makes the port's output for the corpus an expectation to trust.
func TestMorlocRefCalibration(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/json-help/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	out, notes, err := morloccorpus.MCPTools(raw)
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

// Deliberate differences between nexus's tool surface and morloc's
// (testdata/morloc/README.md, "Deliberate differences"), mapped back here:
//
//  1. a Real's schema in an outputSchema admits "NaN", "Infinity" and
//     "-Infinity": morloccorpus.NarrowReals maps it back to
//     {"type":"number"} (an inputSchema's Real is morloc's already);
//  2. a recursive record's back-reference is {"$ref":"#/$defs/T"}, with the
//     record under the schema's "$defs", where morloc writes
//     {"type":"object"}: morloccorpus.CollapseRefs maps it back;
//  3. (commands nexus leaves out: TestMorlocCorpus, deliberateExclusions);
//  4. a sized integer's schema carries its range: morloccorpus.UnboundInts
//     drops a minimum/maximum pair that is exactly one sized integer
//     type's range;
//  5. a `source: file` argument's property is the path of the file on
//     nexus's machine, {"type":"string"} with morloccorpus.PathSentence at
//     the end of its description, where morloc writes the value's schema:
//     unpath maps exactly that form back, for those arguments only.
func morlocView(t *testing.T, tl *Tool) any {
	return morloccorpus.MorlocView(unpath(t, tl, corpusValue(t, tl.Object(FullView))))
}

// corpusValue is v as morloccorpus reads JSON: ordered objects, numbers as
// their text.
func corpusValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d, err := morloccorpus.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// unpath maps each `source: file` argument's property (a positional or an
// option, or an unrolled group's entry) of tool, a tool object as
// corpusValue gives it, back to morloc's: the value's schema, and the
// description without the path sentence.
func unpath(t *testing.T, tl *Tool, tool any) any {
	in, _ := tool.(morloccorpus.Object).Get("inputSchema")
	pv, _ := in.(morloccorpus.Object).Get("properties")
	props := pv.(morloccorpus.Object)
	back := func(prop string, a *manifest.Arg, value, surface *manifest.Type) {
		p, ok := props.Get(prop)
		if !ok {
			return
		}
		format := ""
		if a.Format != nil {
			format = *a.Format
		}
		surfaceSchema := corpusValue(t, inputTypeSchema(surface)).(morloccorpus.Object)
		valueSchema := corpusValue(t, inputTypeSchema(value)).(morloccorpus.Object)
		if out, ok := morloccorpus.UnpathProperty(p.(morloccorpus.Object), surfaceSchema, valueSchema, format); ok {
			props.Insert(prop, out)
		}
	}
	for _, sl := range tl.plan.slots {
		switch {
		case (sl.kind == manifest.KindPos || sl.kind == manifest.KindOpt) && sl.arg.IsPath():
			back(sl.prop, sl.arg, argType(sl.arg), surfaceType(sl.arg))
		case sl.kind == manifest.KindGrp && !sl.whole:
			for _, f := range sl.fields {
				if f.entry != nil && f.entry.IsPath() {
					back(f.key, f.entry, f.t, f.surface())
				}
			}
		}
	}
	return tool
}

// deliberateExclusions are the reasons for which nexus leaves out a
// command that morloc serves (testdata/morloc/README.md, "Deliberate
// differences" 3), by Exclusion.Reason exactly. Only those a corpus
// program shows are here: a command that writes to nexus's stdout, which
// is the protocol's. The README's others (an option whose default nexus
// cannot read, a pure expression nexus cannot evaluate) join when a
// program has one.
var deliberateExclusions = map[string]bool{reasonStdout: true}

// morlocServed is morloc's --mcp-tools output less the tools of the
// commands nexus deliberately leaves out, each of which must be among
// them, printed again (which, with nothing left out, must give morloc's
// bytes back).
func morlocServed(t *testing.T, morlocTools []byte, leftOut map[string]bool) string {
	t.Helper()
	doc, err := morloccorpus.Decode(morlocTools)
	if err != nil {
		t.Fatal(err)
	}
	if got := morloccorpus.Pretty(doc); got != string(morlocTools) {
		t.Fatalf("re-encoding morloc's tools changes them\n--- re-encoded\n%s\n--- morloc\n%s", got, morlocTools)
	}
	kept, notServed := morloccorpus.WithoutTools(doc, leftOut)
	for _, name := range notServed {
		t.Errorf("nexus deliberately leaves out %q, which morloc does not serve either: the note must give morloc's reason", name)
	}
	return morloccorpus.Pretty(kept)
}

// TestMorlocCorpus: for every program of the corpus, (1) the checked-in
// expectation is what the port of morloc's code derives from its manifest
// (-update-morloc rewrites it); (2) nexus's tools, with the deliberate
// differences mapped back, are morloc's byte for byte, less the commands
// nexus deliberately leaves out (deliberateExclusions); (3) nexus leaves
// out the commands morloc leaves out, and its note gives morloc's reason.
func TestMorlocCorpus(t *testing.T) {
	for _, prog := range corpusPrograms(t) {
		t.Run(prog, func(t *testing.T) {
			dir := filepath.Join(corpusDir, prog)
			raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			out, notes, err := morloccorpus.MCPTools(raw)
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
			objects := []any{}
			for _, tl := range tools {
				objects = append(objects, morlocView(t, tl))
			}
			var gotNotes []string
			deliberate := map[string]bool{}
			for _, e := range excluded {
				if deliberateExclusions[e.Reason] {
					deliberate[e.Command] = true
					continue
				}
				gotNotes = append(gotNotes, strings.Replace(e.String(), "nexus mcp:", "morloc mcp:", 1))
			}
			if got, want := morloccorpus.Pretty(morloccorpus.Object{{Key: "tools", Value: objects}}), morlocServed(t, wantTools, deliberate); got != want {
				t.Errorf("nexus's tools, deliberate differences mapped back, differ from morloc's\n--- nexus\n%s\n--- morloc\n%s", got, want)
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

// inputTypeSchema is typeSchema as an input schema shows t: a Real is
// {"type":"number"}.
func inputTypeSchema(t *manifest.Type) Object {
	d := &schemaDefs{input: true}
	return d.root(d.schema(t))
}
