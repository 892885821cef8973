package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/morlocwire"
)

// Programs the real morloc 0.98.2 compiler built (testdata/morloc/args-* and
// write-*): every argument field the compiler writes applied on the CLI and
// over MCP, the top-level fields, and pure commands that write. The pure
// programs run whole; the Python and R ones cannot (their pools are not
// kept), so what they show is what happens before a pool is needed.

func morlocProgram(name string) string {
	return filepath.Join(repoRoot, "testdata", "morloc", name, "manifest.json")
}

// dataPacket is a morloc data packet holding msgpack bytes, as morloc's
// `-f packet` writes one for a small value (packet.rs make_mesg_data_packet).
func dataPacket(schema string, msgpack []byte) []byte {
	meta := []byte{'m', 'm', 'h', 1}
	meta = binary.LittleEndian.AppendUint32(meta, uint32(len(schema)+1))
	meta = append(append(meta, schema...), 0)
	for len(meta)%32 != 0 {
		meta = append(meta, 0)
	}
	b := binary.LittleEndian.AppendUint32(nil, 0x0707f86d)
	b = append(b, make([]byte, 8)...)
	b = append(b, 0, 0, 1, 0, 0, 0, 0, 0) // DATA, MESG, MSGPACK
	b = binary.LittleEndian.AppendUint32(b, uint32(len(meta)))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(msgpack)))
	return append(append(b, meta...), msgpack...)
}

// argFiles writes the input files of the CLI cases into dir.
func argFiles(t *testing.T, dir string) {
	t.Helper()
	f32 := func(vs ...int32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	f64 := []byte{}
	for _, v := range []uint64{0x3ff8000000000000, 0x4002000000000000} { // 1.5, 2.25
		f64 = binary.LittleEndian.AppendUint64(f64, v)
	}
	files := map[string][]byte{
		"text.txt":    []byte("hello\nworld\n"),
		"bytes.bin":   {1, 2, 3},
		"ints.i32":    f32(10, -20, 30),
		"odd.i32":     {1, 2, 3},
		"reals.f64":   f64,
		"flags.bin":   {0, 1, 1},
		"badflag.bin": {0, 2},
		"ints.txt":    []byte("1\n2\n3\n"),
		"strs.txt":    []byte("a b\r\nc\n"),
		"pairs.tsv":   []byte("1\tone\n2\ttwo\n"),
		"pairs.csv":   []byte("3,three\n4,four\n"),
		"pairs.jsonl": []byte("[5,\"five\"]\n"),
		"seven.pkt":   dataPacket("j", []byte{0x07}),
		"eight.pkt":   dataPacket("j", []byte{0x08}),
		"str.pkt":     dataPacket("s", []byte{0xa1, 'x'}),
		"bytes.pkt":   dataPacket("au1", []byte{0x92, 0x09, 0x08}),
	}
	files["paths.txt"] = []byte(filepath.Join(dir, "text.txt") + "\n" + filepath.Join(dir, "ints.txt") + "\n")
	files["badpaths.txt"] = []byte(filepath.Join(dir, "text.txt") + "\n" + filepath.Join(dir, "nope") + "\n")
	files["packets.txt"] = []byte(filepath.Join(dir, "seven.pkt") + "\n" + filepath.Join(dir, "eight.pkt") + "\n")
	files["wrongpackets.txt"] = []byte(filepath.Join(dir, "str.pkt") + "\n")
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestArgFieldsCLI(t *testing.T) {
	prog := morlocProgram("args-pure")
	dir := t.TempDir()
	argFiles(t, dir)
	in := func(name string) string { return filepath.Join(dir, name) }
	cases := []struct {
		argv  []string
		stdin string
		out   string // stdout, when the run succeeds
		err   string // else what stderr says
	}{
		// source: file
		{argv: []string{"fileText", in("text.txt")}, out: `"hello\nworld"`},
		{argv: []string{"fileText", in("nope.txt")}, err: "fileText: argument STR: source: file: cannot open '" + in("nope.txt") + "': no such file or directory"},
		{argv: []string{"fileText", dir}, err: "source: file: cannot open '" + dir + "': is a directory"},
		{argv: []string{"optionText", "--from", in("text.txt")}, out: `"hello\nworld"`},
		{argv: []string{"fileList", in("paths.txt")}, out: `["hello\nworld","1\n2\n3"]`},
		// checks
		{argv: []string{"readablePath", in("text.txt")}, out: `"` + in("text.txt") + `"`},
		{argv: []string{"readablePath", in("nope")}, err: "readablePath: argument STR: check.path: r requires path '" + in("nope") + "' to exist and be readable"},
		{argv: []string{"readablePath", "-"}, out: `"/dev/stdin"`},
		{argv: []string{"writablePath", in("new.txt")}, out: `"` + in("new.txt") + `"`},
		{argv: []string{"writablePath", "/no/such/dir/x"}, err: "check.path: w requires parent directory of '/no/such/dir/x' to be writable"},
		{argv: []string{"freshPath", in("fresh.txt")}, out: `"` + in("fresh.txt") + `"`},
		{argv: []string{"freshPath", in("text.txt")}, err: "check.path: x requires path '" + in("text.txt") + "' to not yet exist"},
		// form: bytes, bytes-only, inline bytes
		{argv: []string{"packedBytes", in("bytes.bin")}, out: `[1,2,3]`},
		{argv: []string{"packedBytes", in("bytes.pkt")}, out: `[9,8]`},
		{argv: []string{"rawBytes", in("bytes.bin")}, out: `[1,2,3]`},
		{argv: []string{"dnaBytes", `GA\x54\0\n`}, out: `[71,65,84,0,10]`},
		{argv: []string{"dnaBytes", `A\q`}, err: "unrecognized escape: `\\q`"},
		{argv: []string{"packedInts", in("ints.i32")}, out: `[10,-20,30]`},
		{argv: []string{"packedInts", in("odd.i32")}, err: "form: bytes: input has 3 bytes, expected a multiple of 4 (the element width for `[I32]`)"},
		{argv: []string{"packedReals", in("reals.f64")}, out: `[1.5,2.25]`},
		{argv: []string{"packedFlags", in("flags.bin")}, out: `[false,true,true]`},
		{argv: []string{"packedFlags", in("badflag.bin")}, err: "form: bytes: byte at offset 1 is 0x02; [Bool] requires 0 or 1"},
		{argv: []string{"packedBytes", in("missing.bin")}, err: "file '" + in("missing.bin") + "' not found"},
		// form: list and its per-element fields
		{argv: []string{"intLines", in("ints.txt")}, out: `[1,2,3]`},
		{argv: []string{"intLines", "[4,5]"}, out: `[4,5]`},
		{argv: []string{"intLines", "-"}, stdin: "7\n8\n", out: `[7,8]`},
		{argv: []string{"strLines", in("strs.txt")}, out: `["a b","c"]`},
		{argv: []string{"pairRows", in("pairs.tsv")}, out: `[[1,"one"],[2,"two"]]`},
		{argv: []string{"pairRows", in("pairs.csv")}, out: `[[3,"three"],[4,"four"]]`},
		{argv: []string{"pairRows", in("pairs.jsonl")}, out: `[[5,"five"]]`},
		{argv: []string{"checkedLines", in("paths.txt")}, out: `["` + in("text.txt") + `","` + in("ints.txt") + `"]`},
		{argv: []string{"checkedLines", in("badpaths.txt")}, err: "form: list: element 2: path check :r: '" + in("nope") + "' is not readable"},
		{argv: []string{"packetInts", in("packets.txt")}, out: `[7,8]`},
		{argv: []string{"packetInts", in("wrongpackets.txt")}, err: "form: list: element 1: schema mismatch: file has schema `s`, requested `j`"},
		// many: each token an element
		{argv: []string{"tokens", "a", "b c", "d"}, out: `["a","b c","d"]`},
		// a record's fields
		{argv: []string{"settings", "--values", in("ints.txt"), "--tag", "AB", "--input", in("text.txt")}, out: `{"values":[1,2,3],"tag":[65,66],"input":"` + in("text.txt") + `"}`},
		{argv: []string{"settings"}, out: `{"values":[],"tag":[],"input":"/dev/null"}`},
		{argv: []string{"settings", "--input", in("nope")}, err: "settings: option --input: check.path: r requires path '" + in("nope") + "' to exist and be readable"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.argv, " "), func(t *testing.T) {
			cmd := exec.Command(nexusBin, append([]string{"run", prog}, c.argv...)...)
			cmd.Stdin = strings.NewReader(c.stdin)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			err := cmd.Run()
			if c.err == "" {
				if err != nil || o.String() != c.out+"\n" {
					t.Errorf("stdout %q (%v, stderr %q), want %q", o.String(), err, e.String(), c.out)
				}
				return
			}
			if err == nil || o.Len() != 0 || !strings.Contains(e.String(), c.err) || strings.Count(e.String(), "\n") != 1 {
				t.Errorf("exit %v, stdout %q, stderr %q; want one error line holding %q", err, o.String(), e.String(), c.err)
			}
		})
	}
}

// callTool sends tools/call and returns the result's first text and isError.
func callTool(t *testing.T, s *server, id int, name string, args map[string]any) (string, bool, msg) {
	t.Helper()
	r := s.request(id, "tools/call", map[string]any{"name": name, "arguments": args})
	text, isErr := toolText(t, r)
	return text, isErr, r
}

func TestArgFieldsMCP(t *testing.T) {
	dir := t.TempDir()
	argFiles(t, dir)
	in := func(name string) string { return filepath.Join(dir, name) }
	s := startServer(t, morlocProgram("args-pure"))
	s.handshake()
	list := s.request(1, "tools/list", nil)
	tools := map[string]map[string]any{}
	for _, tl := range list["result"].(map[string]any)["tools"].([]any) {
		tm := tl.(map[string]any)
		tools[tm["name"].(string)] = tm
	}
	prop := func(tool, p string) map[string]any {
		return tools[tool]["inputSchema"].(map[string]any)["properties"].(map[string]any)[p].(map[string]any)
	}
	// A source: file argument is a path, said so in its description.
	for _, tp := range [][2]string{{"fileText", "_1"}, {"fileList", "_1"}, {"optionText", "from"}} {
		p := prop(tp[0], tp[1])
		d, _ := p["description"].(string)
		if p["type"] != "string" || !strings.Contains(d, "Path of a file on the machine nexus runs on") {
			t.Errorf("%s.%s = %v: want a string described as a path", tp[0], tp[1], p)
		}
	}
	if p := prop("intLines", "_1"); p["type"] != "array" {
		t.Errorf("intLines._1 = %v: a form: list argument is its list over MCP", p)
	}
	id := 10
	call := func(name string, args map[string]any) (string, bool) {
		id++
		text, isErr, _ := callTool(t, s, id, name, args)
		return text, isErr
	}
	cases := []struct {
		tool string
		args map[string]any
		want string
		err  bool
	}{
		{"fileText", map[string]any{"_1": in("text.txt")}, `"hello\nworld"`, false},
		{"fileText", map[string]any{"_1": in("nope.txt")}, "fileText: argument '_1': source: file: cannot open '" + in("nope.txt") + "': no such file or directory", true},
		{"fileText", map[string]any{"_1": dir}, "is a directory", true},
		{"fileList", map[string]any{"_1": in("paths.txt")}, `["hello\nworld","1\n2\n3"]`, false},
		{"optionText", map[string]any{"from": in("text.txt")}, `"hello\nworld"`, false},
		{"readablePath", map[string]any{"_1": in("text.txt")}, `"` + in("text.txt") + `"`, false},
		{"readablePath", map[string]any{"_1": in("nope")}, "readablePath: argument '_1': check.path: r requires path '" + in("nope") + "' to exist and be readable", true},
		{"freshPath", map[string]any{"_1": in("text.txt")}, "check.path: x requires path '" + in("text.txt") + "' to not yet exist", true},
		{"checkedLines", map[string]any{"_1": []string{in("text.txt"), in("nope")}}, "checkedLines: argument '_1': element 2: path check :r: '" + in("nope") + "' is not readable", true},
		{"checkedLines", map[string]any{"_1": []string{in("text.txt")}}, `["` + in("text.txt") + `"]`, false},
		{"intLines", map[string]any{"_1": []int{4, 5}}, `[4,5]`, false},
		{"settings", map[string]any{"input": in("nope")}, "settings: field 'input' of 'settings': check.path: r requires path '" + in("nope") + "' to exist and be readable", true},
		{"settings", map[string]any{}, `{"values":[],"tag":[],"input":"/dev/null"}`, false},
	}
	for _, c := range cases {
		text, isErr := call(c.tool, c.args)
		if isErr != c.err || (c.err && !strings.Contains(text, c.want)) || (!c.err && text != c.want) {
			t.Errorf("%s %v: %q (isError %v), want %q (isError %v)", c.tool, c.args, text, isErr, c.want, c.err)
		}
	}
	// Every failure above left the server serving.
	if text, isErr := call("fileText", map[string]any{"_1": in("text.txt")}); isErr || text != `"hello\nworld"` {
		t.Errorf("after the failures: %q %v", text, isErr)
	}
}

// A value nexus does not know in an argument field refuses that command
// alone, naming the field: off the tool surface with a note, an error on
// the CLI, a line of --explain; the other commands serve.
func TestArgFieldsUnknownValue(t *testing.T) {
	data, err := os.ReadFile(morlocProgram("args-pure"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	cmds := m["commands"].([]any)
	var at int
	for i, c := range cmds {
		cm := c.(map[string]any)
		if cm["name"] == "intLines" {
			cm["args"].([]any)[0].(map[string]any)["form"] = "zip"
			at = i
		}
		if cm["name"] == "readablePath" {
			cm["args"].([]any)[0].(map[string]any)["checks"] = []any{map[string]any{"kind": "path", "value": "rwx"}}
		}
	}
	m["capabilities"] = []any{"log", "telepathy"}
	dir := t.TempDir()
	prog := filepath.Join(dir, "manifest.json")
	b, _ := json.Marshal(m)
	if err := os.WriteFile(prog, b, 0o644); err != nil {
		t.Fatal(err)
	}
	field := "commands[" + strconv.Itoa(at) + "].args[0].form"
	want := `unknown form "zip" (nexus knows "auto", "packet", "bytes", "bytes-only", "list")`

	_, stderr, code := runNexus(t, "run", prog, "intLines", "[1]")
	if code == 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, field) {
		t.Errorf("CLI: exit %d, stderr %q; want the field and the value named", code, stderr)
	}
	if out, _, code := runNexus(t, "run", prog, "tokens", "x"); code != 0 || out != "[\"x\"]\n" {
		t.Errorf("another command: %q, exit %d", out, code)
	}
	out, _, _ := runNexus(t, "run", prog, "--explain")
	for _, w := range []string{field + `: command 'intLines' is refused`, `capabilities "telepathy": not honoured: a capability nexus does not know`, `path mode "rwx"`} {
		if !strings.Contains(out, w) {
			t.Errorf("--explain lacks %q:\n%s", w, out)
		}
	}

	s := startServer(t, prog)
	s.handshake()
	names := strings.Join(s.toolNames(1), " ") + " "
	if strings.Contains(names, "intLines ") || strings.Contains(names, "readablePath ") || !strings.Contains(names, "fileText ") {
		t.Errorf("tools: %s", names)
	}
	if text, isErr, _ := callTool(t, s, 2, "tokens", map[string]any{"_1": []string{"y"}}); isErr || text != `["y"]` {
		t.Errorf("tokens: %q %v", text, isErr)
	}
	s.closeAndWait()
	if note := s.stderr.String(); !strings.Contains(note, "excluding command 'intLines'") || !strings.Contains(note, want) {
		t.Errorf("stderr lacks the exclusion note naming the field:\n%s", note)
	}
}

// The Python program: its arguments are read, and checked, before any
// pool is needed, on the CLI and over MCP; its tool surface describes its
// file arguments.
func TestArgFieldsRemote(t *testing.T) {
	prog := morlocProgram("args-py")
	dir := t.TempDir()
	argFiles(t, dir)
	for _, c := range []struct {
		argv []string
		err  string
	}{
		{[]string{"headOf", filepath.Join(dir, "nope")}, "headOf: argument FILE: check.path: r requires path '" + filepath.Join(dir, "nope") + "' to exist and be readable"},
		{[]string{"wordCount", filepath.Join(dir, "nope")}, "wordCount: argument TEXT: source: file: cannot open"},
		{[]string{"saveTo", filepath.Join(dir, "text.txt"), "x"}, "check.path: x requires path"},
		{[]string{"meanOf", filepath.Join(dir, "odd.i32")}, "form: bytes: input has 3 bytes, expected a multiple of 8"},
		{[]string{"loadAll", filepath.Join(dir, "badpaths.txt")}, "form: list: element 2: path check :r:"},
		{[]string{"summarize", "--log", "/no/such/dir/job.log"}, "option --log: check.path: w requires parent directory of '/no/such/dir/job.log' to be writable"},
	} {
		out, stderr, code := runNexus(t, append([]string{"run", prog}, c.argv...)...)
		if code == 0 || out != "" || !strings.Contains(stderr, c.err) || strings.Contains(stderr, "pool") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q and no pool", c.argv, code, out, stderr, c.err)
		}
	}
	out, _, code := runNexus(t, "run", prog, "--mcp-tools")
	if code != 0 {
		t.Fatalf("--mcp-tools: exit %d", code)
	}
	var payload struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &payload); err != nil {
		t.Fatal(err)
	}
	for _, tl := range payload.Tools {
		switch tl.Name {
		case "wordCount", "meanOf", "scale":
			p := tl.InputSchema.Properties["_1"]
			d, _ := p["description"].(string)
			if p["type"] != "string" || !strings.Contains(d, "Path of a file") {
				t.Errorf("%s: %v, want a path", tl.Name, p)
			}
		case "byteSum":
			if p := tl.InputSchema.Properties["_1"]; p["type"] != "array" {
				t.Errorf("byteSum: %v", p)
			}
		}
	}
	s := startServer(t, prog)
	s.handshake()
	text, isErr, _ := callTool(t, s, 1, "headOf", map[string]any{"_1": filepath.Join(dir, "nope")})
	if !isErr || !strings.Contains(text, "check.path: r requires path") {
		t.Errorf("headOf: %q %v", text, isErr)
	}
	text, isErr, _ = callTool(t, s, 2, "wordCount", map[string]any{"_1": filepath.Join(dir, "nope")})
	if !isErr || !strings.Contains(text, "wordCount: argument '_1': source: file: cannot open") {
		t.Errorf("wordCount: %q %v", text, isErr)
	}
	if r := s.request(3, "tools/list", nil); r["result"] == nil {
		t.Errorf("tools/list after the failures: %v", r)
	}
}

// The top-level fields: --explain names each one nexus does not honour;
// run_log's lines frame a CLI run; the NUL check guards a morloc R pool
// unless the program skips it.
func TestTopLevelFields(t *testing.T) {
	prog := morlocProgram("args-toplevel")
	out, _, code := runNexus(t, "run", prog, "--explain")
	if code != 0 {
		t.Fatalf("--explain: exit %d", code)
	}
	for _, w := range []string{
		"epilogues (2 block(s)): not honoured",
		"inline_size 4096: partly honoured",
		"no_shm true: partly honoured",
		`tmpdir "/tmp/args-toplevel-files": partly honoured`,
		"run_log: honoured",
		"unsafe_skip_null_check true: honoured",
		`capabilities "log": partly honoured: nexus has -q/--quiet (its log level error), not --log-dir or --summary`,
		`capabilities "debug_trace": not honoured`,
	} {
		if !strings.Contains(out, w+":") && !strings.Contains(out, w) {
			t.Errorf("--explain lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 8 {
		t.Errorf("--explain has %d lines, want 8:\n%s", n, out)
	}
	stdout, stderr, code := runNexus(t, "run", prog, "answer")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 0 || stdout != "42\n" || len(lines) != 2 || !strings.HasPrefix(lines[0], "[run] answer starts (pid ") ||
		!strings.HasPrefix(lines[1], "[run] answer done in ") || !strings.HasSuffix(lines[1], "s exit 0") {
		t.Errorf("answer: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// A NUL in a string for R: refused before the pool starts, unless
	// the program was built with --unsafe-skip-null-check.
	nul := filepath.Join(t.TempDir(), "nul.txt")
	os.WriteFile(nul, []byte("abc\x00def"), 0o644)
	_, stderr, code = runNexus(t, "run", morlocProgram("args-r"), "echo", nul)
	if code != 1 || stderr != "Error: r does not support embedded NUL bytes in strings (at args[0] (byte 3 of 7))\n" {
		t.Errorf("args-r echo: exit %d, stderr %q", code, stderr)
	}
	m, err := manifest.Load(morlocProgram("args-toplevel"))
	if err != nil || !m.UnsafeSkipNullCheck || m.Pools[1].AllowStringNull {
		t.Fatalf("args-toplevel: %v, skip %v", err, m != nil && m.UnsafeSkipNullCheck)
	}
	_, stderr, _ = runNexus(t, "run", prog, "echoR", `"a`+"\x01"+`b"`)
	if strings.Contains(stderr, "NUL") {
		t.Errorf("the NUL check ran on a program that skips it: %q", stderr)
	}
	if !strings.Contains(stderr, "[run] echoR failed: ") || !strings.Contains(stderr, "(exit 1)") {
		t.Errorf("no failure epilogue: %q", stderr)
	}
}

// Pure commands that write: @stdout on the CLI is one JSON array, as a
// returned list prints; @open writes morloc's stream file, which a tool
// names in its result; a tool writing to stdout is left off the surface.
func TestWritersPure(t *testing.T) {
	prog := morlocProgram("write-pure")
	for _, c := range []struct {
		argv []string
		out  string
	}{
		{[]string{"streamInts"}, "[1,2,3,4,5]\n"},
		{[]string{"streamPairs"}, `[["a",1],["bb",2]]` + "\n"},
		{[]string{"streamEmpty"}, "[]\n"},
		{[]string{"streamStrs", `["x","y z"]`}, `["x","y z"]` + "\n"},
	} {
		out, stderr, code := runNexus(t, append([]string{"run", prog}, c.argv...)...)
		// The unit result after the stream prints nothing, or null (§1).
		if code != 0 || (out != c.out && out != c.out+"null\n") {
			t.Errorf("%v: %q (exit %d, stderr %q), want %q", c.argv, out, code, stderr, c.out)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ints.stream")
	if _, stderr, code := runNexus(t, "run", prog, "writeInts", path); code != 0 {
		t.Fatalf("writeInts: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runNexus(t, "run", prog, "appendInts", path, "[60,70]"); code != 0 {
		t.Fatalf("appendInts: exit %d, %s", code, stderr)
	}
	checkStream(t, path, "aj", []string{"[10,20,30]", "[40,50]", "[60,70]"})
	_, stderr, code := runNexus(t, "run", prog, "errInts")
	if code != 0 || !strings.HasPrefix(stderr, "\x6d\xf8\x07\x07") {
		t.Errorf("errInts: exit %d, stderr %q, want a morloc stream", code, stderr)
	}

	s := startServer(t, prog)
	s.handshake()
	names := strings.Join(s.toolNames(1), " ") + " "
	if names != "writeInts appendInts writeTwice errInts " {
		t.Errorf("tools %q: the stdout writers must be left out, the others served", names)
	}
	out := filepath.Join(dir, "tool.stream")
	r := s.request(2, "tools/call", map[string]any{"name": "writeTwice", "arguments": map[string]any{"_1": out}})
	res, _ := r["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if res == nil || res["isError"] == true || len(content) != 2 {
		t.Fatalf("writeTwice: %v", r)
	}
	if b := content[0].(map[string]any); b["text"] != "2" {
		t.Errorf("value block %v", b)
	}
	if b := content[1].(map[string]any); b["type"] != "resource_link" || b["uri"] != "file://"+out || !strings.Contains(b["description"].(string), "2 element(s)") {
		t.Errorf("file block %v", b)
	}
	checkStream(t, out, "as", []string{`["x","y"]`})
	text, isErr, _ := callTool(t, s, 3, "writeInts", map[string]any{"_1": "/no/such/dir/x.stream"})
	if !isErr || !strings.Contains(text, "@open '/no/such/dir/x.stream'") {
		t.Errorf("writeInts to a missing directory: %q %v", text, isErr)
	}
	r = s.request(4, "tools/call", map[string]any{"name": "writeInts", "arguments": map[string]any{"_1": filepath.Join(dir, "again.stream")}})
	if res, _ := r["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Errorf("writeInts after a failure: %v", r)
	}
	s.closeAndWait()
	if note := s.stderr.String(); !strings.Contains(note, "excluding command 'streamInts' from the tool surface (streams to stdout)") {
		t.Errorf("no note for the stdout writer:\n%s", note)
	}
}

// checkStream reads a stream file and compares its sub-packets.
func checkStream(t *testing.T, path, schema string, want []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	typ, _ := manifest.ParseType(schema)
	h, err := morlocwire.ParseHeader(b)
	if err != nil || h.Type() != morlocwire.TypeStream {
		t.Fatalf("%s: not a stream file", path)
	}
	pos := morlocwire.HeaderSize + int(h.Offset)
	var got []string
	for pos+morlocwire.HeaderSize <= len(b) {
		ph, err := morlocwire.ParseHeader(b[pos:])
		if err != nil || ph.Type() != morlocwire.TypeData {
			break
		}
		end := pos + morlocwire.HeaderSize + int(ph.Offset) + int(ph.Length)
		v, err := morlocwire.DataPacketJSON(b[pos:end], typ, morlocwire.Rust)
		if err != nil {
			t.Fatalf("%s: sub-packet at %d: %v", path, pos, err)
		}
		got = append(got, string(v))
		pos = end
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: sub-packets %v, want %v", path, got, want)
	}
	if fh, err := morlocwire.ParseHeader(b[pos:]); err != nil || fh.Type() != morlocwire.TypeFooter || !bytes.HasSuffix(b, []byte{7, 7, 0xf8, 0x6d}) {
		t.Errorf("%s: no final footer after the sub-packets", path)
	}
}

// Over HTTP's plain API a file argument is read, or refused with 400 as
// the caller's input; the server serves on.
func TestArgFieldsHTTP(t *testing.T) {
	dir := t.TempDir()
	argFiles(t, dir)
	srv := startHTTP(t, nil, "serve", "--port", "0", morlocProgram("args-pure"))
	post := func(cmd string, values ...any) (int, string) {
		body, _ := json.Marshal(values)
		resp, err := http.Post(srv.base+"/call/main/"+cmd, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("fileText", filepath.Join(dir, "nope")); code != 400 || !strings.Contains(body, "source: file: cannot open") {
		t.Errorf("missing file: %d %s", code, body)
	}
	if code, body := post("readablePath", filepath.Join(dir, "nope")); code != 400 || !strings.Contains(body, "check.path: r requires path") {
		t.Errorf("failed check: %d %s", code, body)
	}
	if code, body := post("fileText", filepath.Join(dir, "text.txt")); code != 200 || !strings.Contains(body, `"result":"hello\nworld"`) {
		t.Errorf("a readable file: %d %s", code, body)
	}
}
