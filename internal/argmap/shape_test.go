package argmap

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// memFS is a dataFS over a map of files; stdin is given.
func memFS(files map[string]string, stdin string) dataFS {
	return dataFS{
		readFile: func(p string) ([]byte, error) {
			b, ok := files[p]
			if !ok {
				return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
			}
			return []byte(b), nil
		},
		exists: func(p string) bool { _, ok := files[p]; return ok },
		stdin:  strings.NewReader(stdin),
	}
}

func typeOf(t *testing.T, s string) *manifest.Type {
	t.Helper()
	ty, err := manifest.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// packetOf is a MESG+MSGPACK data packet (as morloc's `-f packet` writes).
func packetOf(schema string, msgpack ...byte) string {
	meta := []byte{'m', 'm', 'h', 1, byte(len(schema) + 1), 0, 0, 0}
	meta = append(append(meta, schema...), 0)
	for len(meta)%32 != 0 {
		meta = append(meta, 0)
	}
	h := []byte{0x6d, 0xf8, 0x07, 0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, byte(len(meta)), 0, 0, 0, byte(len(msgpack)), 0, 0, 0, 0, 0, 0, 0}
	return string(h) + string(meta) + string(msgpack)
}

// loadData reads a file as morloc's load_morloc_data_file does.
func TestLoadData(t *testing.T) {
	cases := []struct {
		data, path, schema, want, err string
	}{
		{data: "hello\n", schema: "s", want: `"hello"`},
		{data: "two\nlines\r\n", schema: "s", want: `"two\nlines"`},
		{data: `"quoted"`, schema: "s", want: `"quoted"`},
		{data: "text", schema: "?s", want: `"text"`},
		{data: "nan\n", schema: "f8", want: `"NaN"`},
		{data: `\-inf`, schema: "f8", want: `"-Infinity"`},
		{data: "[1, 2]", schema: "aj", want: `[1,2]`},
		{data: " {\"a\":1}", path: "x.json", schema: "m11aj", want: `{"a":1}`},
		{data: "\x92\x01\x02", path: "x.mpk", schema: "aj", want: `[1,2]`},
		{data: "\x92\x01\x02", schema: "aj", want: `[1,2]`}, // not JSON: msgpack
		{data: packetOf("aj", 0x92, 0x03, 0x04), schema: "aj", want: `[3,4]`},
		{data: packetOf("s", 0xa1, 'x'), schema: "s", want: `"x"`},
		{data: packetOf("s", 0xa1, 'x'), schema: "aj", err: "schema mismatch: file has schema `s`, requested `aj`"},
		{data: "", schema: "aj", err: "cannot parse 0-length data"},
		{data: "[1,", schema: "aj", err: "not valid JSON"},
		{data: `["x"]`, schema: "aj", err: "expected integer"},
	}
	for _, c := range cases {
		got, err := loadData([]byte(c.data), c.path, typeOf(t, c.schema))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q as %s: %s, %v; want error %q", c.data, c.schema, got, err, c.err)
		case c.err == "" && (err != nil || string(got) != c.want):
			t.Errorf("%q as %s: %s, %v; want %s", c.data, c.schema, got, err, c.want)
		}
	}
}

func TestBytesForms(t *testing.T) {
	le := func(b ...byte) []byte { return b }
	cases := []struct {
		data         []byte
		form, schema string
		want, err    string
	}{
		{le(1, 2, 255), "bytes-only", "au1", `[1,2,255]`, ""},
		{le(0xff, 0x80), "bytes-only", "ai1", `[-1,-128]`, ""},
		{le(1, 0, 0xff, 0xff), "bytes-only", "ai2", `[1,-1]`, ""},
		{le(1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff), "bytes-only", "au4", `[1,4294967295]`, ""},
		{le(0, 0, 0xc0, 0x3f), "bytes-only", "af4", `[1.5]`, ""},
		{le(0, 0, 0, 0, 0, 0, 0xf8, 0x7f), "bytes-only", "af8", `["NaN"]`, ""},
		{le(1, 0), "bytes-only", "ab", `[true,false]`, ""},
		{le(1, 2, 3), "bytes-only", "ai2", "", "input has 3 bytes, expected a multiple of 2 (the element width for `[I16]`)"},
		{le(1), "bytes-only", "aj", "", "form: bytes requires a fixed-width scalar element"},
		{le(1), "bytes-only", "s", "", "form: bytes requires the wire schema to be a<scalar>"},
		{[]byte(packetOf("au1", 0x92, 0x07, 0x08)), "bytes", "au1", `[7,8]`, ""},
		{[]byte(packetOf("au1", 0x92, 0x07, 0x08)), "bytes-only", "au1", "", ""}, // the packet's bytes themselves
		{[]byte(packetOf("j", 0x07)), "packet", "j", `7`, ""},
		{le(1, 2, 3, 4), "packet", "j", "", "form: packet requires the input to begin with the morloc packet magic"},
		{le(1), "packet", "j", "", "at least 4 bytes"},
	}
	for _, c := range cases {
		a := &manifest.Arg{Kind: manifest.KindPos, Source: manifest.SourceFile, Form: c.form, ListSource: manifest.SourceInline, ListForm: manifest.FormAuto}
		got, err := readForm(c.data, "f", a, typeOf(t, c.schema), memFS(nil, ""))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%x %s %s: %s, %v; want error %q", c.data, c.form, c.schema, got, err, c.err)
		case c.err == "" && c.want != "" && (err != nil || string(got) != c.want):
			t.Errorf("%x %s %s: %s, %v; want %s", c.data, c.form, c.schema, got, err, c.want)
		case c.err == "" && err != nil:
			t.Errorf("%x %s %s: %v", c.data, c.form, c.schema, err)
		}
	}
}

func TestInlineBytes(t *testing.T) {
	for in, want := range map[string]string{
		`GATTACA`: "GATTACA", `a\\b`: `a\b`, `\n\t\r\0`: "\n\t\r\x00", `\x41\x7a`: "Az", `é`: "é",
	} {
		got, err := inlineBytes(in)
		if err != nil || string(got) != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		`a\`: "trailing backslash", `\x4`: "incomplete", `\xzz`: "must be two hex digits", `\q`: "unrecognized escape: `\\q`",
	} {
		if _, err := inlineBytes(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func TestListLines(t *testing.T) {
	files := map[string]string{
		"/d/a.txt": "alpha\n", "/d/b.txt": "beta", "/d/seven.pkt": packetOf("j", 0x07), "/d/eight.pkt": packetOf("j", 0x08),
		"/d/bytes.bin": "\x01\x02", "/d/n.json": "[9]",
	}
	cases := []struct {
		data, schema, lsrc, lform string
		want, err                 string
	}{
		{"1\n2\n3\n", "aj", "inline", "auto", `[1,2,3]`, ""},
		{"1\r\n\n2\n", "aj", "inline", "auto", "", "not valid JSON"}, // a blank line is kept, and is no Int
		{"a\n\nb", "as", "inline", "auto", `["a","","b"]`, ""},
		{"[1,2]\nxy\n", "aau1", "inline", "auto", `[[1,2],[120,121]]`, ""},
		{"1\tone\n2\ttwo", "at2js", "inline", "auto", `[[1,"one"],[2,"two"]]`, ""},
		{"1,\"o,ne\"\n", "at2js", "inline", "auto", `[[1,"o,ne"]]`, ""},
		{"1 one\n2   two\n", "at2js", "inline", "auto", `[[1,"one"],[2,"two"]]`, ""},
		{"1\tone\n", "am21ij1ks", "inline", "auto", `[{"i":1,"k":"one"}]`, ""},
		{"1\tone\textra\n", "at2js", "inline", "auto", "", "neither JSON nor a table"},
		{"/d/a.txt\n/d/b.txt\n", "as", "file", "auto", `["alpha","beta"]`, ""},
		{"/d/seven.pkt\n/d/eight.pkt\n", "aj", "file", "packet", `[7,8]`, ""},
		{"/d/bytes.bin\n", "aau1", "file", "bytes", `[[1,2]]`, ""},
		{"/d/n.json\n[4]\n", "aaj", "auto", "auto", `[[9],[4]]`, ""},
		{"/d/missing\n", "as", "file", "auto", "", "form: list: element 1: The argument '/d/missing' is a filename, but it can't be read"},
		{"/d/seven.pkt\n/d/missing\n", "aj", "file", "packet", "", "form: list: element 2: cannot open '/d/missing'"},
		{"\xff\n", "as", "inline", "auto", "", "form: list: input is not valid UTF-8"},
		{"1\n", "j", "inline", "auto", "", "form: list requires a list-typed wire schema"},
	}
	for _, c := range cases {
		a := &manifest.Arg{Kind: manifest.KindPos, Source: manifest.SourceAuto, Form: manifest.FormList, ListSource: c.lsrc, ListForm: c.lform}
		got, err := listLines([]byte(c.data), a, typeOf(t, c.schema), memFS(files, ""))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q as %s (%s/%s): %s, %v; want error %q", c.data, c.schema, c.lsrc, c.lform, got, err, c.err)
		case c.err == "" && (err != nil || string(got) != c.want):
			t.Errorf("%q as %s (%s/%s): %s, %v; want %s", c.data, c.schema, c.lsrc, c.lform, got, err, c.want)
		}
	}
}

func TestCheckPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	missing := filepath.Join(dir, "missing")
	cases := []struct{ path, mode, err string }{
		{file, "r", ""},
		{missing, "r", "check.path: r requires path '" + missing + "' to exist and be readable"},
		{file, "w", ""},
		{missing, "w", ""},
		{"/no/such/dir/x", "w", "check.path: w requires parent directory of '/no/such/dir/x' to be writable"},
		{missing, "x", ""},
		{file, "x", "check.path: x requires path '" + file + "' to not yet exist"},
		{file, "rw", ""},
		{missing, "rw", "check.path: r requires path"},
		{"/dev/stdin", "r", ""},
		{file, "c", "check.path: unknown mode 'c'; expected one of: r, w, x, rw"},
		{"a\x00b", "r", "interior NUL"},
	}
	for _, c := range cases {
		err := checkPath(c.path, c.mode)
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("checkPath(%q, %s) = %v, want %q", c.path, c.mode, err, c.err)
		}
	}
	for in, want := range map[[2]string]string{{"-", "r"}: "/dev/stdin", {"-", "w"}: "/dev/stdout", {"-", "x"}: "-", {"-", "rw"}: "-", {"f", "r"}: "f"} {
		if got := stdioSentinel(in[0], in[1]); got != want {
			t.Errorf("stdioSentinel(%q, %s) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

// A source, form or check on a many argument is ignored, as morloc's nexus
// ignores it (its compiler refuses them there): over MCP the argument is
// its list of values, not a path, and its call reads no file.
func TestManyIgnoresShape(t *testing.T) {
	tool := toolOf(t, remote("f", "s", pos("s", `,"many":true,"source":"file","format":"path"`), ""))
	props, _ := tool.InputSchema.Get("properties")
	p1, _ := props.(Object).Get("_1")
	if got := mustJSON(t, p1); got != `{"type":"array","items":{"type":"string"}}` {
		t.Errorf("_1 = %s, want the list of values", got)
	}
	call, err := tool.ToPositional(json.RawMessage(`{"_1":["a","b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, call.Args); got != `[["a","b"]]` || len(call.Inputs) != 0 {
		t.Errorf("args %s, inputs %v: want the values as given, nothing to read", got, call.Inputs)
	}
}

// A tool's source: file argument is a string over MCP; its call carries
// the read as an Input, which Resolve does: the value read, a check run on
// what the client gave and not on a default.
func TestToolInputs(t *testing.T) {
	tool := toolOf(t, remote("f", "s",
		pos("as", `,"source":"file","form":"list","format":"path to a text file"`)+","+
			opt("s", "in", `"\"/dev/null\""`, `,"checks":[{"kind":"path","value":"r"}]`)+","+
			opt("as", "paths", `"[]"`, `,"form":"list","list_checks":[{"kind":"path","value":"r"}]`), ""))
	in := tool.InputSchema
	props, _ := in.Get("properties")
	p1, _ := props.(Object).Get("_1")
	if mustJSON(t, p1) != `{"type":"string","description":"Path of a file on the machine nexus runs on; nexus reads it, and its content is the value (path to a text file)."}` {
		t.Errorf("_1 = %s", mustJSON(t, p1))
	}
	call, err := tool.ToPositional(json.RawMessage(`{"_1":"/d/lines.txt","paths":["/d/a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, call.Args); got != `["/d/lines.txt","/dev/null",["/d/a"]]` {
		t.Errorf("args before Resolve: %s", got)
	}
	var kinds []string
	for _, in := range call.Inputs {
		kinds = append(kinds, in.Label+":"+map[bool]string{true: "given", false: "default"}[in.Given]+map[bool]string{true: ":elements", false: ""}[in.Elements])
	}
	if strings.Join(kinds, " ") != "argument '_1':given option --paths:given:elements" {
		t.Errorf("inputs %v (the default of --in is not checked)", kinds)
	}
	fs := memFS(map[string]string{"/d/lines.txt": "x\ny\n"}, "")
	_, err = resolve(call, fs)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Label != "option --paths" || !strings.Contains(ie.Msg, "element 1: path check :r: '/d/a' is not readable") {
		t.Errorf("resolve: %v", err)
	}
	call, _ = tool.ToPositional(json.RawMessage(`{"_1":"/d/lines.txt"}`))
	got, err := resolve(call, fs)
	if err != nil || mustJSON(t, got.Args) != `[["x","y"],"/dev/null",[]]` || got.Inputs != nil {
		t.Errorf("resolve: %s, %v", mustJSON(t, got.Args), err)
	}
	call, _ = tool.ToPositional(json.RawMessage(`{"_1":"/d/none"}`))
	if _, err := resolve(call, fs); err == nil || err.Error() != "argument '_1': source: file: cannot open '/d/none': file does not exist" {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := tool.ToPositional(json.RawMessage(`{"_1":["x"]}`)); err == nil {
		t.Error("a list given for a path")
	}
}

// The CLI reads each token as morloc's nexus does; stdin once.
func TestCLIShapes(t *testing.T) {
	c := manifestOf(t, remote("f", "s",
		pos("aj", `,"form":"list"`)+","+pos("aj", `,"form":"list"`), "")).Commands[0]
	fs := memFS(map[string]string{"/d/n.txt": "1\n2\n"}, "5\n")
	for _, tc := range []struct {
		argv      []string
		want, err string
	}{
		{[]string{"/d/n.txt", "[3]"}, `[[1,2],[3]]`, ""},
		{[]string{"-", "/d/n.txt"}, `[[5],[1,2]]`, ""},
		{[]string{"-", "-"}, "", "stdin was already consumed by another argument"},
		{[]string{"/d/none.txt", "[1]"}, "", "file '/d/none.txt' not found"},
		{[]string{"word", "[1]"}, "", "argument 'word' is not inline JSON"},
	} {
		fs.stdin = strings.NewReader("5\n")
		args, inputs, _, err := parseCLI(&c, tc.argv, &cliReader{fs: fs})
		if err == nil {
			var call Call
			call, err = resolve(Call{Command: &c, Args: args, Inputs: inputs}, fs)
			args = call.Args
		}
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: %s, %v; want %q", tc.argv, mustJSON(t, args), err, tc.err)
		case tc.err == "" && (err != nil || mustJSON(t, args) != tc.want):
			t.Errorf("%v: %s, %v; want %s", tc.argv, mustJSON(t, args), err, tc.want)
		}
	}
	var _ io.Reader = noStdin{}
}

func TestFirstNul(t *testing.T) {
	for in, want := range map[string]string{
		`"a\u0000b"`:                  " (byte 1 of 3)",
		`["x",{"k":"\u0000"}]`:        "[1].k (byte 0 of 1)",
		`{"a":["ok","\u0000\u0000"]}`: ".a[1] (byte 0 of 2)",
	} {
		if got, ok := FirstNul(json.RawMessage(in)); !ok || got != want {
			t.Errorf("FirstNul(%s) = %q %v, want %q", in, got, ok, want)
		}
	}
	if _, ok := FirstNul(json.RawMessage(`["\\u0000 is text"]`)); ok {
		t.Error("an escaped backslash is no NUL")
	}
}

// Constraints other than kind are shown in the description and help.
func TestConstraintsShown(t *testing.T) {
	tool := toolOf(t, remote("f", "j",
		pos("j", `,"constraints":[{"type":"min","value":0},{"type":"kind","value":"record"}]`)+","+
			opt("j", "num", `"1"`, `,"constraints":[{"type":"max","value":9}]`),
		`,"constraints":[{"type":"equal_length"}]`))
	props, _ := tool.InputSchema.Get("properties")
	p1, _ := props.(Object).Get("_1")
	if mustJSON(t, p1) != `{"type":"integer","description":"(constraints: min 0)"}` {
		t.Errorf("_1 = %s", mustJSON(t, p1))
	}
	if tool.Description != "Does f\nConstraints: equal_length" {
		t.Errorf("description %q", tool.Description)
	}
	m := &manifest.Manifest{Name: "prog", Commands: []manifest.Command{*tool.Command}}
	// In help (morloc's layout, help.go): an argument's as the last line of
	// its help (after its type), the command's as a block after the return.
	u := commandHelp(m, &m.Commands[0], "", HelpContext{Prog: "prog"}, true)
	for _, want := range []string{
		"      --num <arg>\n          type: T\n          constraints: max 9\n",
		"Positional arguments:\n  1:  type: T\n      constraints: min 0\n\nReturn: T\n\nConstraints: equal_length\n",
	} {
		if !strings.Contains(u, want) {
			t.Errorf("help lacks %q:\n%s", want, u)
		}
	}
}
