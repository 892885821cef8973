package argmap

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
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

// The port reads a manifest as lib.rs's serde derive does: the argument
// fields (source, form, checks, list_*, format) and the top-level fields
// load or refuse the manifest as there, and change no tool: a `source:
// file` positional is still its value's schema (command_to_tool_shape
// reads none of them).
func TestMorlocRefReads(t *testing.T) {
	manifestWith := func(top, arg string) []byte {
		return []byte(`{"name":"m","build":{"path":".","time":0,"morloc_version":"0.98.2"}` + top +
			`,"commands":[{"name":"f","type":"pure","args":[{"kind":"pos","schema":"aj"` + arg + `}],"return":{"schema":"j"}}]}`)
	}
	const tool = `{"tools":[{"name":"f","description":"","inputSchema":{"type":"object","properties":{"_1":{"type":"array","items":{"type":"integer"}}},"required":["_1"],"additionalProperties":false}}]}`
	for _, c := range []struct {
		name, top, arg string
		ok             bool
	}{
		{"no fields", "", "", true},
		{"every field", "", `,"source":"file","form":"list","checks":[{"kind":"path","value":"r"}],"list_source":"file","list_form":"packet","list_checks":[],"format":"path to a text file"`, true},
		{"bytes-only", "", `,"form":"bytes-only"`, true},
		{"unknown source", "", `,"source":"stdin"`, false},
		{"null source", "", `,"source":null`, false},
		{"snake-case form", "", `,"form":"bytes_only"`, false},
		{"unknown list_form", "", `,"list_form":"table"`, false},
		{"unknown check", "", `,"checks":[{"kind":"regex","value":"x"}]`, false},
		{"check value not a string", "", `,"checks":[{"kind":"path","value":1}]`, false},
		{"format not a string", "", `,"format":1`, false},
		{"constraint without its type", "", `,"constraints":[{"value":1}]`, false},
		{"top-level fields", `,"epilogues":[["a"]],"unsafe_skip_null_check":true,"inline_size":4096,"no_shm":true,"tmpdir":"/t","run_log":{"prologue":"p"},"capabilities":["log"]`, "", true},
		{"inline_size as text", `,"inline_size":"4k"`, "", false},
		{"capabilities not a list", `,"capabilities":"log"`, "", false},
		{"run_log template not a string", `,"run_log":{"prologue":1}`, "", false},
	} {
		out, _, err := morlocMCPTools(manifestWith(c.top, c.arg))
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: morloc reads it, the port refuses it: %v", c.name, err)
		case !c.ok && err == nil:
			t.Errorf("%s: morloc refuses it, the port reads it", c.name)
		case c.ok && strings.Join(strings.Fields(out), "") != tool:
			t.Errorf("%s: %s, want %s", c.name, out, tool)
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
//     {"type":"object"} (issue 20 §5): collapseRefs maps it back;
//  3. (commands nexus leaves out: TestMorlocCorpus, deliberateExclusions);
//  4. a sized integer's schema carries its range (issue 10 §4):
//     unboundInts drops a minimum/maximum pair that is exactly one sized
//     integer type's range;
//  5. a `source: file` argument's property is the path of the file on
//     nexus's machine, {"type":"string"} with pathSentence at the end of
//     its description, where morloc writes the value's schema (issue 20
//     §2): unpath maps exactly that form back, for those arguments only.
func morlocView(t *Tool) Object {
	o := unpath(t, t.Object(FullView).clone())
	v, _ := narrowReals(o)
	return collapseRefs(unboundInts(v)).(Object)
}

// pathSentence is what nexus appends to a `source: file` argument's
// description: the value is a path on nexus's machine, with the
// compiler's format hint unless it says only that.
func pathSentence(a *manifest.Arg) string {
	s := "Path of a file on the machine nexus runs on; nexus reads it, and its content is the value"
	if a.Format != nil && *a.Format != "" && *a.Format != "read the value from the file at this path" {
		s += " (" + *a.Format + ")"
	}
	return s + "."
}

// unpath maps each `source: file` argument's property (a positional or an
// option, or an unrolled group's entry) back to morloc's: the value's
// schema, and the description without pathSentence. A property not in
// exactly nexus's path form is left as it is, for the comparison to show.
func unpath(t *Tool, tool Object) Object {
	in, _ := tool.Get("inputSchema")
	pv, _ := in.(Object).Get("properties")
	props := pv.(Object)
	back := func(prop string, a *manifest.Arg, value, surface *manifest.Type) {
		v, ok := props.Get(prop)
		if !ok {
			return
		}
		p := v.(Object)
		desc, hasDesc := p.Get("description")
		text, _ := desc.(string)
		var rest Object
		for _, m := range p {
			if m.Key != "description" {
				rest = append(rest, m)
			}
		}
		if !hasDesc || !reflect.DeepEqual(rest, typeSchema(surface)) {
			return
		}
		sentence := pathSentence(a)
		out := typeSchema(value)
		switch {
		case text == sentence:
		case strings.HasSuffix(text, " "+sentence):
			out = append(out, Member{"description", strings.TrimSuffix(text, " "+sentence)})
		default:
			return
		}
		props.set(prop, out)
	}
	for _, sl := range t.plan.slots {
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

// sizedRanges are the ranges of morloc's sized integers (i1..i8, u1..u8),
// written out here rather than taken from schema.go.
var sizedRanges = map[[2]string]bool{
	{"-128", "127"}: true, {"-32768", "32767"}: true,
	{"-2147483648", "2147483647"}: true, {"-9223372036854775808", "9223372036854775807"}: true,
	{"0", "255"}: true, {"0", "65535"}: true, {"0", "4294967295"}: true, {"0", "18446744073709551615"}: true,
}

// unboundInts drops "minimum" and "maximum" from an integer schema (or an
// optional one) whose pair is one sized integer type's range.
func unboundInts(v any) any {
	switch x := v.(type) {
	case Object:
		lo, hasLo := x.Get("minimum")
		hi, hasHi := x.Get("maximum")
		typ, _ := x.Get("type")
		integer := typ == "integer" || reflect.DeepEqual(typ, []any{"integer", "null"})
		drop := integer && hasLo && hasHi && sizedRanges[[2]string{fmt.Sprint(lo), fmt.Sprint(hi)}]
		out := Object{}
		for _, m := range x {
			if drop && (m.Key == "minimum" || m.Key == "maximum") {
				continue
			}
			out = append(out, Member{m.Key, unboundInts(m.Value)})
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unboundInts(e)
		}
		return out
	}
	return v
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

// deliberateExclusions are the reasons for which nexus leaves out a
// command that morloc serves (testdata/morloc/README.md, "Deliberate
// differences" 3), by Exclusion.Reason exactly. Only those a corpus
// program shows are here: a command that writes to nexus's stdout, which
// is the protocol's (issue 20 §4). The README's others (an option whose
// default nexus cannot read, a pure expression nexus cannot evaluate)
// join when a program has one.
var deliberateExclusions = map[string]bool{reasonStdout: true}

// morlocServed is morloc's --mcp-tools output less the tools of the
// commands nexus deliberately leaves out, each of which must be among
// them, in the encoding of payloadOf (which, with nothing left out,
// must give morloc's bytes back).
func morlocServed(t *testing.T, morlocTools []byte, leftOut map[string]bool) []byte {
	t.Helper()
	var doc struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(morlocTools, &doc); err != nil {
		t.Fatal(err)
	}
	var all, kept []any
	seen := map[string]bool{reasonStdout: true}
	for _, raw := range doc.Tools {
		var tool struct{ Name string }
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		all = append(all, raw)
		if leftOut[tool.Name] {
			seen[tool.Name] = true
			continue
		}
		kept = append(kept, raw)
	}
	if got := payloadOf(t, all); !bytes.Equal(got, morlocTools) {
		t.Fatalf("re-encoding morloc's tools changes them\n--- re-encoded\n%s\n--- morloc\n%s", got, morlocTools)
	}
	for name := range leftOut {
		if !seen[name] {
			t.Errorf("nexus deliberately leaves out %q, which morloc does not serve either: the note must give morloc's reason", name)
		}
	}
	return payloadOf(t, kept)
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
			var gotNotes []string
			deliberate := map[string]bool{reasonStdout: true}
			for _, e := range excluded {
				if deliberateExclusions[e.Reason] {
					deliberate[e.Command] = true
					continue
				}
				gotNotes = append(gotNotes, strings.Replace(e.String(), "nexus mcp:", "morloc mcp:", 1))
			}
			if got, want := payloadOf(t, objects), morlocServed(t, wantTools, deliberate); !bytes.Equal(got, want) {
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
