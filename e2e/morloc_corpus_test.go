package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/morloccorpus"
)

// The corpus of programs compiled by the real morloc 0.98.2 compiler
// (testdata/morloc/README.md): nexus's binary against what morloc's nexus
// prints for each, derived from its code.

func morlocCorpus(t *testing.T) []string {
	t.Helper()
	progs, err := morloccorpus.Programs(filepath.Join(repoRoot, "testdata", "morloc"))
	if err != nil {
		t.Fatal(err)
	}
	return progs
}

func corpusProgram(name string) string { return filepath.Join(repoRoot, "testdata", "morloc", name) }

// `nexus run PROG --mcp-tools`, for every program of the corpus, is what
// morloc's --mcp-tools prints (morloc.mcp-tools.json, derived from
// json_help.rs) byte for byte once the README's deliberate differences are
// mapped back; the commands it leaves out are morloc's, each note giving
// morloc's reason, and those it deliberately leaves out besides
// (testdata/morloc/README.md, "Deliberate differences" 3: "streams to
// stdout") are morloc's tools less those.
func TestMorlocCorpusMCPTools(t *testing.T) {
	for _, prog := range morlocCorpus(t) {
		t.Run(prog, func(t *testing.T) {
			dir := corpusProgram(prog)
			out, errOut, code := runNexus(t, "run", dir, "--mcp-tools")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			doc, err := morloccorpus.Decode([]byte(out))
			if err != nil {
				t.Fatalf("--mcp-tools is not JSON: %v", err)
			}
			wantRaw, err := os.ReadFile(filepath.Join(dir, "morloc.mcp-tools.json"))
			if err != nil {
				t.Fatal(err)
			}
			wantDoc, err := morloccorpus.Decode(wantRaw)
			if err != nil {
				t.Fatal(err)
			}
			if morloccorpus.Pretty(wantDoc) != string(wantRaw) {
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
			served, notServed := morloccorpus.WithoutTools(wantDoc, leftOut)
			for _, n := range notServed {
				t.Errorf("nexus deliberately leaves out %q, which morloc does not serve either", n)
			}
			want := morloccorpus.Pretty(served)
			got := morloccorpus.Pretty(morloccorpus.MorlocView(unpath(t, dir, doc, wantDoc)))
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

// unpath maps back each `source: file` argument's property of nexus's
// tools (testdata/morloc/README.md, "Deliberate differences" 7) when it
// is exactly nexus's path form:
// {"type":"string"} (["string","null"] where morloc's is optional) and a
// description ending with the path sentence. The description loses the
// sentence; the value's schema, which nexus does not write, is morloc's
// (the argmap test checks nexus's own schema of the value's type).
func unpath(t *testing.T, dir string, doc, morloc any) any {
	t.Helper()
	morlocProps := map[string]morloccorpus.Object{}
	mt, _ := morloc.(morloccorpus.Object).Get("tools")
	for _, tl := range mt.([]any) {
		name, _ := tl.(morloccorpus.Object).Get("name")
		in, _ := tl.(morloccorpus.Object).Get("inputSchema")
		props, _ := in.(morloccorpus.Object).Get("properties")
		morlocProps[name.(string)] = props.(morloccorpus.Object)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	paths, err := morloccorpus.PathArguments(raw)
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := doc.(morloccorpus.Object).Get("tools")
	for _, tl := range tools.([]any) {
		name, _ := tl.(morloccorpus.Object).Get("name")
		in, _ := tl.(morloccorpus.Object).Get("inputSchema")
		props, _ := in.(morloccorpus.Object).Get("properties")
		for i, m := range props.(morloccorpus.Object) {
			format, isPath := paths[name.(string)][m.Key]
			mp, known := morlocProps[name.(string)].Get(m.Key)
			if !isPath || !known {
				continue
			}
			var value morloccorpus.Object
			var typ any = "string"
			for _, vm := range mp.(morloccorpus.Object) {
				if vm.Key == "description" {
					continue
				}
				if ts, ok := vm.Value.([]any); vm.Key == "type" && ok && len(ts) == 2 && ts[1] == "null" {
					typ = []any{"string", "null"}
				}
				value = append(value, vm)
			}
			surface := morloccorpus.Object{{Key: "type", Value: typ}}
			if out, ok := morloccorpus.UnpathProperty(m.Value.(morloccorpus.Object), surface, value, format); ok {
				props.(morloccorpus.Object)[i].Value = out
			}
		}
	}
	return doc
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
	prog := writeLauncher(t, corpusProgram("groups-py"), "prog")
	dir := filepath.Dir(prog)
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
