package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The corpus of programs compiled by the real morloc 0.98.2 compiler
// (testdata/morloc/README.md): nexus's binary against what morloc's nexus
// prints for each, derived from its code.

func morlocCorpus(t *testing.T) []string {
	t.Helper()
	manifests, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "morloc", "*", "manifest.json"))
	if err != nil || len(manifests) < 10 {
		t.Fatalf("the corpus: %d manifests (%v)", len(manifests), err)
	}
	var progs []string
	for _, m := range manifests {
		progs = append(progs, filepath.Base(filepath.Dir(m)))
	}
	return progs
}

func corpusProgram(name string) string { return filepath.Join(repoRoot, "testdata", "morloc", name) }

// `nexus run PROG --mcp-tools`, for every program of the corpus, is what
// morloc's --mcp-tools prints (morloc.mcp-tools.json, derived from
// json_help.rs) byte for byte once the README's deliberate differences are
// mapped back; the commands it leaves out are morloc's, each note giving
// morloc's reason, and those it deliberately leaves out besides (README
// difference 3: "streams to stdout") are morloc's tools less those.
func TestMorlocCorpusMCPTools(t *testing.T) {
	for _, prog := range morlocCorpus(t) {
		t.Run(prog, func(t *testing.T) {
			dir := corpusProgram(prog)
			out, errOut, code := runNexus(t, "run", dir, "--mcp-tools")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			doc, err := decodeOrdered([]byte(out))
			if err != nil {
				t.Fatalf("--mcp-tools is not JSON: %v", err)
			}
			wantRaw, err := os.ReadFile(filepath.Join(dir, "morloc.mcp-tools.json"))
			if err != nil {
				t.Fatal(err)
			}
			wantDoc, err := decodeOrdered(wantRaw)
			if err != nil {
				t.Fatal(err)
			}
			if encodeOrdered(wantDoc) != string(wantRaw) {
				t.Fatalf("re-encoding morloc.mcp-tools.json changes it")
			}
			wantNotes, err := os.ReadFile(filepath.Join(dir, "morloc.excluded.txt"))
			if err != nil {
				t.Fatal(err)
			}
			var gotLines, wantLines []string
			leftOut := map[string]bool{}
			for _, l := range strings.Split(errOut, "\n") {
				if !strings.Contains(l, "excluding command") {
					continue
				}
				if name, ok := deliberateExclusion(l); ok {
					leftOut[name] = true
					continue
				}
				gotLines = append(gotLines, strings.Replace(l, "nexus mcp:", "morloc mcp:", 1))
			}
			for _, l := range strings.Split(string(wantNotes), "\n") {
				if l != "" {
					wantLines = append(wantLines, l)
				}
			}
			want := encodeOrdered(withoutTools(t, wantDoc, leftOut))
			got := encodeOrdered(collapseRefs(narrowReals(unboundInts(unpath(t, dir, doc, wantDoc)))))
			if got != want {
				t.Errorf("--mcp-tools, deliberate differences mapped back, differs from morloc's\n--- nexus\n%s\n--- morloc\n%s", got, want)
			}
			sort.Strings(gotLines)
			sort.Strings(wantLines)
			if len(gotLines) != len(wantLines) {
				t.Fatalf("notes %q, want %q", gotLines, wantLines)
			}
			for i := range gotLines {
				if !strings.HasPrefix(gotLines[i], strings.TrimSuffix(wantLines[i], ")")) {
					t.Errorf("note %q does not give morloc's reason: %q", gotLines[i], wantLines[i])
				}
			}
		})
	}
}

// deliberateExclusion reports whether an exclusion note gives one of the
// reasons for which nexus leaves out a command that morloc serves
// (testdata/morloc/README.md, "Deliberate differences" 3), exactly, and
// the command's name. The corpus shows one: writing to nexus's own stdout.
func deliberateExclusion(note string) (string, bool) {
	const prefix, suffix = "nexus mcp: excluding command '", "' from the tool surface (streams to stdout)"
	if !strings.HasPrefix(note, prefix) || !strings.HasSuffix(note, suffix) {
		return "", false
	}
	return strings.TrimSuffix(strings.TrimPrefix(note, prefix), suffix), true
}

// withoutTools is a --mcp-tools document less the named tools, each of
// which it must hold (else morloc leaves it out too, for its own reason).
func withoutTools(t *testing.T, doc any, names map[string]bool) any {
	t.Helper()
	tools, _ := doc.(object).get("tools")
	kept := []any{}
	seen := map[string]bool{}
	for _, tl := range tools.([]any) {
		name, _ := tl.(object).get("name")
		if n, _ := name.(string); names[n] {
			seen[n] = true
			continue
		}
		kept = append(kept, tl)
	}
	for n := range names {
		if !seen[n] {
			t.Errorf("nexus deliberately leaves out %q, which morloc does not serve either", n)
		}
	}
	return object{{"tools", kept}}
}

// pathSentence ends a `source: file` argument's description in nexus's
// tools (README difference 7), with the compiler's format hint.
func pathSentence(format string) string {
	s := "Path of a file on the machine nexus runs on; nexus reads it, and its content is the value"
	if format != "" && format != "read the value from the file at this path" {
		s += " (" + format + ")"
	}
	return s + "."
}

// corpusArg is what a manifest says of an argument that unpath needs.
type corpusArg struct {
	Kind     string          `json:"kind"`
	Name     *string         `json:"name"`
	Short    *string         `json:"short"`
	Long     *string         `json:"long"`
	Source   string          `json:"source"`
	Format   *string         `json:"format"`
	GroupOpt json.RawMessage `json:"group_opt"`
	Entries  []struct {
		Key string    `json:"key"`
		Arg corpusArg `json:"arg"`
	} `json:"entries"`
}

// pathProps maps each command of a program to its `source: file`
// arguments' properties (positionals, options, an unrolled record's
// entries) and their format hints.
func pathProps(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Commands []struct {
			Name string      `json:"name"`
			Args []corpusArg `json:"args"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	format := func(a corpusArg) string {
		if a.Format == nil {
			return ""
		}
		return *a.Format
	}
	out := map[string]map[string]string{}
	for _, c := range m.Commands {
		props := map[string]string{}
		pos := 0
		for _, a := range c.Args {
			switch a.Kind {
			case "pos":
				pos++
				if a.Source == "file" {
					name := fmt.Sprintf("_%d", pos)
					if a.Name != nil && *a.Name != "" {
						name = *a.Name
					}
					props[name] = format(a)
				}
			case "opt":
				if a.Source == "file" {
					name := ""
					if a.Short != nil {
						name = *a.Short
					}
					if a.Long != nil {
						name = *a.Long
					}
					props[name] = format(a)
				}
			case "grp":
				if g := strings.TrimSpace(string(a.GroupOpt)); g != "" && g != "null" {
					break
				}
				for _, e := range a.Entries {
					if e.Arg.Kind == "opt" && e.Arg.Source == "file" {
						props[e.Key] = format(e.Arg)
					}
				}
			}
		}
		out[c.Name] = props
	}
	return out
}

// unpath maps back each `source: file` argument's property of nexus's
// tools (README difference 7) when it is exactly nexus's path form:
// {"type":"string"} (["string","null"] where morloc's is optional) and a
// description ending with pathSentence. The description loses the
// sentence; the value's schema, which nexus does not write, is morloc's
// (the argmap test checks nexus's own schema of the value's type).
func unpath(t *testing.T, dir string, doc, morloc any) any {
	t.Helper()
	morlocProps := map[string]object{}
	mt, _ := morloc.(object).get("tools")
	for _, tl := range mt.([]any) {
		name, _ := tl.(object).get("name")
		in, _ := tl.(object).get("inputSchema")
		props, _ := in.(object).get("properties")
		morlocProps[name.(string)] = props.(object)
	}
	paths := pathProps(t, dir)
	tools, _ := doc.(object).get("tools")
	for _, tl := range tools.([]any) {
		name, _ := tl.(object).get("name")
		in, _ := tl.(object).get("inputSchema")
		props, _ := in.(object).get("properties")
		for i, m := range props.(object) {
			format, isPath := paths[name.(string)][m.key]
			mp, known := morlocProps[name.(string)].get(m.key)
			if !isPath || !known {
				continue
			}
			var value object
			optional := false
			for _, vm := range mp.(object) {
				if vm.key == "description" {
					continue
				}
				if vm.key == "type" {
					if ts, ok := vm.val.([]any); ok && len(ts) == 2 && ts[1] == "null" {
						optional = true
					}
				}
				value = append(value, vm)
			}
			var typ any = "string"
			if optional {
				typ = []any{"string", "null"}
			}
			p := m.val.(object)
			desc, _ := p.get("description")
			text, _ := desc.(string)
			sentence := pathSentence(format)
			if len(p) != 2 || p[0].key != "type" || fmt.Sprint(p[0].val) != fmt.Sprint(typ) || p[1].key != "description" {
				continue
			}
			switch {
			case text == sentence:
			case strings.HasSuffix(text, " "+sentence):
				value = append(value, member{"description", strings.TrimSuffix(text, " "+sentence)})
			default:
				continue
			}
			props.(object)[i].val = value
		}
	}
	return doc
}

// sizedRanges are the ranges of morloc's sized integers (i1..i8, u1..u8).
var sizedRanges = map[[2]string]bool{
	{"-128", "127"}: true, {"-32768", "32767"}: true,
	{"-2147483648", "2147483647"}: true, {"-9223372036854775808", "9223372036854775807"}: true,
	{"0", "255"}: true, {"0", "65535"}: true, {"0", "4294967295"}: true, {"0", "18446744073709551615"}: true,
}

// unboundInts drops "minimum" and "maximum" from an integer schema (or an
// optional one) whose pair is one sized integer type's range (README
// difference 6).
func unboundInts(v any) any {
	switch x := v.(type) {
	case object:
		lo, hasLo := x.get("minimum")
		hi, hasHi := x.get("maximum")
		typ, _ := x.get("type")
		integer := typ == "integer" || fmt.Sprint(typ) == "[integer null]"
		drop := integer && hasLo && hasHi && sizedRanges[[2]string{fmt.Sprint(lo), fmt.Sprint(hi)}]
		out := object{}
		for _, m := range x {
			if drop && (m.key == "minimum" || m.key == "maximum") {
				continue
			}
			out = append(out, member{m.key, unboundInts(m.val)})
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

// Every rule of the command line on a corpus program that needs no pool,
// each output morloc's byte for byte: what dispatch.rs prints for the
// value (print_voidstar: compact JSON and a newline; nothing for a
// top-level () or absent optional without --keep-null), and the exit
// status of clap's errors (2).
func TestMorlocCLI(t *testing.T) {
	for _, c := range []struct {
		prog string
		argv []string
		out  string
		code int
		err  string // in stderr
	}{
		// Groups: GROUP COMMAND; ungrouped commands stand alone.
		{"groups-pure", []string{"pairs", "dup", "5"}, "[5,5]\n", 0, ""},
		{"groups-pure", []string{"pairs", "swap", `["a",1]`}, "[1,\"a\"]\n", 0, ""},
		{"groups-pure", []string{"lists", "wrap", "w"}, "[\"w\"]\n", 0, ""},
		{"groups-pure", []string{"lists", "twice", "-s", "+", "hi"}, "[\"hi\",\"+\",\"hi\"]\n", 0, ""},
		{"groups-pure", []string{"lists", "twice", "hi"}, "[\"hi\",\"-\",\"hi\"]\n", 0, ""},
		{"groups-pure", []string{"answer"}, "42\n", 0, ""},
		// Nexus options before the command (or group), or before @.
		{"groups-pure", []string{"--timeout", "5s", "pairs", "dup", "1"}, "[1,1]\n", 0, ""},
		{"groups-pure", []string{"--start-timeout", "5s", "@", "answer"}, "42\n", 0, ""},
		// A grouped command without its group names the group.
		{"groups-pure", []string{"dup", "5"}, "", 2, "command 'dup' is in the group 'pairs'"},
		// A group without its command: the group's help on stderr, and its commands named.
		{"groups-pure", []string{"pairs"}, "", 2, "Usage: main <nexus_options> pairs <command> <command_options>"},
		{"groups-pure", []string{"pairs"}, "", 2, "the group 'pairs' needs one of its commands: dup, swap"},
		{"groups-pure", []string{"lists", "dup", "5"}, "", 2, "the group 'lists' has no command 'dup'"},
		{"groups-pure", []string{"dupe", "5"}, "", 2, "no such command 'dupe'. Did you mean 'dup'?"},
		// No command at all: the program's help on stderr, status 2 (clap's arg_required_else_help).
		{"groups-pure", nil, "", 2, "Usage: main <nexus_options> <command> <command_options>"},
		{"groups-r", []string{"mean", "1", "2"}, "", 2, "command 'mean' is in the group 'stats': call it as `stats mean ...`"},
		{"groups-r", []string{"counts"}, "", 2, "the group 'counts' needs one of its commands: tally"},
		// One command: its name may be left out.
		{"single-pure", []string{"5"}, "[\"item\",false,5]\n", 0, ""},
		{"single-pure", []string{"tagged", "5"}, "[\"item\",false,5]\n", 0, ""},
		{"single-pure", []string{"-t", "x", "--checked", "-5"}, "[\"x\",true,-5]\n", 0, ""},
		{"single-pure", []string{"--checked", "--unchecked", "5"}, "[\"item\",false,5]\n", 0, ""},
		{"single-pure", []string{"--keep-null", "@", "5"}, "[\"item\",false,5]\n", 0, ""},
		{"single-pure", []string{"--keep-null", "5"}, "", 2, "hint: `--keep-null` is a nexus option, not a command option"},
		// many as a positional and as an option: --xs 1 2 3, or -x 1 -x 2.
		{"many-pure", []string{"collect", "1", "2", "3"}, "[1,2,3]\n", 0, ""},
		{"many-pure", []string{"gather", "--xs", "1", "2", "3"}, "[1,2,3]\n", 0, ""},
		{"many-pure", []string{"gather", "-x", "1", "-x", "2"}, "[1,2]\n", 0, ""},
		{"many-pure", []string{"gather", "--xs", "1", "-x", "2", "3"}, "[1,2,3]\n", 0, ""},
		{"many-pure", []string{"gather", "--xs", "-1", "-2"}, "[-1,-2]\n", 0, ""},
		{"many-pure", []string{"gather"}, "[]\n", 0, ""},
		{"many-pure", []string{"both", "-w", "a", "b", "--", "1", "2"}, "[[\"a\",\"b\"],[1,2]]\n", 0, ""},
		{"many-pure", []string{"both", "1", "2", "-w", "a", "b"}, "[[\"a\",\"b\"],[1,2]]\n", 0, ""},
		{"many-pure", []string{"firstOf", "a", "b", "c"}, "[\"a\",[\"b\",\"c\"]]\n", 0, ""},
		// Top-level null and unit print nothing unless --keep-null; a null inside prints.
		{"nulls-pure", []string{"nothing"}, "", 0, ""},
		{"nulls-pure", []string{"--keep-null", "nothing"}, "null\n", 0, ""},
		{"nulls-pure", []string{"absent"}, "", 0, ""},
		{"nulls-pure", []string{"--keep-null", "absent"}, "null\n", 0, ""},
		{"nulls-pure", []string{"present"}, "11\n", 0, ""},
		{"nulls-pure", []string{"passMaybe", "null"}, "", 0, ""},
		{"nulls-pure", []string{"passMaybe", "4"}, "4\n", 0, ""},
		{"nulls-pure", []string{"withNull", "3"}, "[3,null]\n", 0, ""},
		{"nulls-pure", []string{"nothing", "--keep-null"}, "", 2, "hint: `--keep-null` is a nexus option"},
		// Recursive records, an option's default among them.
		{"recursive-pure", []string{"rootOf"}, "1\n", 0, ""},
		{"recursive-pure", []string{"rootOf", "-t", `{"val":9,"children":[]}`}, "9\n", 0, ""},
		{"recursive-pure", []string{"leaf", "3"}, "{\"val\":3,\"children\":[]}\n", 0, ""},
		{"recursive-pure", []string{"childrenOf", `{"val":1,"children":[{"val":2,"children":[]}]}`}, "[{\"val\":2,\"children\":[]}]\n", 0, ""},
		{"recursive-pure", []string{"grow", "a", `{"word":"b","next":null}`}, "{\"word\":\"a\",\"next\":{\"word\":\"b\",\"next\":null}}\n", 0, ""},
		{"recursive-pure", []string{"headOf", `{"word":"w","next":{"word":"x","next":null}}`}, "\"w\"\n", 0, ""},
	} {
		name := c.prog + " " + strings.Join(c.argv, " ")
		out, errOut, code := runNexus(t, append([]string{"run", corpusProgram(c.prog)}, c.argv...)...)
		if out != c.out || code != c.code || !strings.Contains(errOut, c.err) {
			t.Errorf("%s: stdout %q exit %d, stderr %q; want %q exit %d, stderr with %q", name, out, code, errOut, c.out, c.code, c.err)
		}
	}
	// -o FILE: the result goes to the file, nothing to stdout.
	file := filepath.Join(t.TempDir(), "out.json")
	out, errOut, code := runNexus(t, "run", corpusProgram("groups-pure"), "-o", file, "pairs", "dup", "7")
	written, _ := os.ReadFile(file)
	if out != "" || code != 0 || string(written) != "[7,7]\n" {
		t.Errorf("-o: stdout %q exit %d (stderr %q), file %q; want the file to hold [7,7]", out, code, errOut, written)
	}
	// A morloc option nexus does not have is refused, clearly.
	if _, errOut, code := runNexus(t, "run", corpusProgram("groups-pure"), "--log-dir", "x", "answer"); code != 2 || !strings.Contains(errOut, "--log-dir is an option of morloc's nexus that nexus does not have") {
		t.Errorf("--log-dir: exit %d, stderr %q", code, errOut)
	}
}

// -h as morloc lays it out (internal/argmap/testdata/help has the whole
// texts): through a launcher, the program is named as the user typed it
// (MORLOC_PROG_NAME, which nexus's launcher exports as morloc's does).
func TestMorlocHelpThroughLauncher(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	if _, errOut, code := runNexus(t, "launcher", corpusProgram("groups-py"), "-o", prog); code != 0 {
		t.Fatalf("launcher: %s", errOut)
	}
	for _, c := range []struct {
		argv   []string
		golden string
	}{
		{[]string{"-h"}, "groups-py.-h.txt"},
		{[]string{"arith", "-h"}, "groups-py.arith_-h.txt"},
		{[]string{"arith", "scale", "-h"}, "groups-py.arith_scale_-h.txt"},
	} {
		cmd := exec.Command("./prog", c.argv...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("./prog %v: %v: %s", c.argv, err, stderr.String())
		}
		want, err := os.ReadFile(filepath.Join(repoRoot, "internal", "argmap", "testdata", "help", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(want) {
			t.Errorf("./prog %v:\n%s\nwant (%s):\n%s", c.argv, out, c.golden, want)
		}
	}
	// --help adds the Nexus Options block: morloc's options nexus has, and
	// its own; never morloc's that nexus refuses.
	cmd := exec.Command("./prog", "--help")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: ./prog <nexus_options> <command> <command_options>\n", "\nNexus Options:\n", "      --keep-null\n", "  -o, --output-file <FILE>\n", "      --timeout <DURATION>\n", "      --workers <N>\n",
		"      --explain\n          Print one line for each manifest field nexus reads but does not honour, and exit\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("./prog --help lacks %q:\n%s", want, out)
		}
	}
	for _, refused := range []string{"--print", "--compression-level", "--log-dir", "--summary", "--json-help"} {
		if strings.Contains(string(out), refused) {
			t.Errorf("./prog --help lists %s, a morloc option nexus does not have:\n%s", refused, out)
		}
	}
}

// ---- ordered JSON, to compare documents byte for byte ----

type member struct {
	key string
	val any
}

type object []member

func (o object) get(k string) (any, bool) {
	for _, m := range o {
		if m.key == k {
			return m.val, true
		}
	}
	return nil, false
}

func decodeOrdered(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return decodeValue(dec)
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := tok.(type) {
	case json.Delim:
		switch d {
		case '{':
			o := object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o = append(o, member{k.(string), v})
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
	}
	return tok, nil
}

// encodeOrdered writes v two-space indented, as morloc's serde_json does.
func encodeOrdered(v any) string {
	var b strings.Builder
	var write func(any, string)
	write = func(v any, indent string) {
		switch x := v.(type) {
		case object:
			if len(x) == 0 {
				b.WriteString("{}")
				return
			}
			b.WriteString("{\n")
			for i, m := range x {
				if i > 0 {
					b.WriteString(",\n")
				}
				k, _ := json.Marshal(m.key)
				fmt.Fprintf(&b, "%s  %s: ", indent, k)
				write(m.val, indent+"  ")
			}
			b.WriteString("\n" + indent + "}")
		case []any:
			if len(x) == 0 {
				b.WriteString("[]")
				return
			}
			b.WriteString("[\n")
			for i, e := range x {
				if i > 0 {
					b.WriteString(",\n")
				}
				b.WriteString(indent + "  ")
				write(e, indent+"  ")
			}
			b.WriteString("\n" + indent + "]")
		case json.Number:
			b.WriteString(x.String())
		default:
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(x)
			b.WriteString(strings.TrimSuffix(buf.String(), "\n"))
		}
	}
	write(v, "")
	return b.String() + "\n"
}

// narrowReals maps a Real's widened schema (issue 18: {"anyOf":[{"type":
// "number"},{"enum":["NaN","Infinity","-Infinity"]}]}) back to its type.
func narrowReals(v any) any {
	switch x := v.(type) {
	case object:
		out := object{}
		for _, m := range x {
			if m.key == "anyOf" {
				if alts, _ := m.val.([]any); len(alts) == 2 {
					num, _ := alts[0].(object)
					enum, _ := alts[1].(object)
					if e, ok := enum.get("enum"); ok && len(enum) == 1 && fmt.Sprint(e) == "[NaN Infinity -Infinity]" && len(num) == 1 && num[0].key == "type" {
						out = append(out, num[0])
						continue
					}
				}
			}
			out = append(out, member{m.key, narrowReals(m.val)})
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = narrowReals(e)
		}
		return out
	}
	return v
}

// collapseRefs maps nexus's $defs/$ref for a recursive record back to
// morloc's {"type":"object"} ({"type":["object","null"]} when optional).
func collapseRefs(v any) any {
	switch x := v.(type) {
	case object:
		if _, ok := x.get("$ref"); ok && len(x) == 1 {
			return object{{"type", "object"}}
		}
		out := object{}
		for _, m := range x {
			if m.key == "$defs" {
				continue
			}
			if m.key == "anyOf" {
				if alts, _ := m.val.([]any); len(alts) == 2 {
					ref, _ := alts[0].(object)
					null, _ := alts[1].(object)
					if _, isRef := ref.get("$ref"); isRef && len(null) == 1 && null[0].key == "type" && null[0].val == "null" {
						out = append(out, member{"type", []any{"object", "null"}})
						continue
					}
				}
			}
			out = append(out, member{m.key, collapseRefs(m.val)})
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
