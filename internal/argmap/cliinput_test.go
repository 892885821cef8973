package argmap

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/jsontext/jsontexttest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// An auto-source argument (a list) that names a file is that file's JSON,
// and "-" is stdin (once per run), as in morloc's nexus; an inline-source
// one (a Str), a quoted argument, a flag and a word that names no regular
// file are themselves.
func TestCLIArgumentFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	list := write("xs.json", "[1.5, 2]\n")
	word := write("word.txt", `"from a file"`)
	write("[7]", "[8]")
	t.Chdir(dir)
	m := manifestOf(t,
		remote("sum", "f8", pos("af8", ``)+","+opt("af8", "more", `"[]"`, ``), ``),
		remote("say", "s", pos("s", ``)+","+pos("s", `,"quoted":true`), ``),
		remote("flag", "b", flagArg("loud", "false", ``), ``))
	cases := []struct {
		cmd   string
		argv  []string
		stdin string
		want  string
		err   string
	}{
		{"sum", []string{list}, "", `[[1.5,2.0],[]]`, ""},
		{"sum", []string{list, "--more", list}, "", `[[1.5,2.0],[1.5,2.0]]`, ""},
		{"sum", []string{"-"}, "[3]", `[[3.0],[]]`, ""},
		{"sum", []string{"/dev/stdin"}, " [4, 5] ", `[[4.0,5.0],[]]`, ""},
		{"sum", []string{"-", "--more", "-"}, "[3]", "", "stdin was already consumed"},
		// A Str's source is inline (manifest fillShape): a file's name is the string.
		{"say", []string{word, word}, "", `["` + word + `","` + word + `"]`, ""},
		{"say", []string{dir, "x"}, "", `["` + dir + `","x"]`, ""}, // a directory is a word
		{"sum", []string{write("bad.json", "[1,")}, "", "", "expected JSON"},
		{"sum", []string{filepath.Join(dir, "nothing.json")}, "", "", "file '" + filepath.Join(dir, "nothing.json") + "' not found"},
		{"flag", []string{"--loud"}, "", `[true]`, ""},
		// A JSON-shaped token is itself, even where a file has its name.
		{"sum", []string{"[7]"}, "", `[[7.0],[]]`, ""},
	}
	for _, c := range cases {
		osFS.stdin = strings.NewReader(c.stdin)
		call, err := CLICall(m, m.Command(c.cmd), c.argv)
		osFS.stdin = os.Stdin
		if !errAsWanted(t, fmt.Sprintf("%s %v", c.cmd, c.argv), err, c.err) {
			continue
		}
		if got := joinArgs(call.Args); got != c.want {
			t.Errorf("%s %v: %s, want %s", c.cmd, c.argv, got, c.want)
		}
	}
}

// A large numeric list on the command line reaches the pool as an array,
// as over MCP; a small one stays JSON.
func TestCLIArrays(t *testing.T) {
	m := manifestOf(t,
		remote("echo", "af8", pos("af8", ``)+","+pos("ai4", ``), ``),
		remote("many", "aj", pos("j", `,"many":true`), ``),
		remote("opt", "af8", pos("j", ``)+","+opt("af8", "xs", `"[]"`, ``), ``))
	var reals, ints strings.Builder
	want := make([]float64, 1000)
	reals.WriteString("[")
	ints.WriteString("[")
	for i := range want {
		if i > 0 {
			reals.WriteString(",")
			ints.WriteString(",")
		}
		want[i] = float64(i) + 0.25
		reals.WriteString(strconv.FormatFloat(want[i], 'g', -1, 64))
		ints.WriteString(strconv.Itoa(i - 500))
	}
	reals.WriteString("]")
	ints.WriteString("]")

	call, err := CLICall(m, m.Command("echo"), []string{reals.String(), ints.String()})
	if err != nil {
		t.Fatal(err)
	}
	if got := joinArgs(call.Args); got != `[null,null]` {
		t.Fatalf("args %s, want both in arrays", got)
	}
	if len(call.Arrays) != 2 {
		t.Fatalf("%d arrays, want 2", len(call.Arrays))
	}
	a := call.Arrays[0]
	if a.DType != ndarray.F8 || len(a.Shape) != 1 || a.Shape[0] != 1000 || len(a.Path) != 1 || a.Path[0] != 0 {
		t.Fatalf("array 0: %s %v at %v", a.DType, a.Shape, a.Path)
	}
	for i, w := range want {
		if got := math.Float64frombits(binary.LittleEndian.Uint64(a.Data[8*i:])); got != w {
			t.Fatalf("element %d is %v, want %v", i, got, w)
		}
	}
	b := call.Arrays[1]
	if b.Path[0] != 1 || b.Shape[0] != 1000 || int64(binary.LittleEndian.Uint64(b.Data[8*999:])) != 499 {
		t.Fatalf("array 1: %s %v at %v", b.DType, b.Shape, b.Path)
	}
	js, err := call.JSONArgs()
	if err != nil || !strings.HasPrefix(string(js[0]), `[0.25,1.25,`) || !strings.HasSuffix(string(js[0]), `,999.25]`) {
		t.Fatalf("JSONArgs: %.80s, %v", js[0], err)
	}

	small, err := CLICall(m, m.Command("echo"), []string{"[1,2]", "[3]"})
	if err != nil || joinArgs(small.Args) != `[[1.0,2.0],[3]]` || len(small.Arrays) != 0 {
		t.Fatalf("small lists: %s, %d arrays, %v", joinArgs(small.Args), len(small.Arrays), err)
	}
	// A variadic argument's tokens are read one by one: they stay JSON.
	toks := make([]string, 600)
	for i := range toks {
		toks[i] = strconv.Itoa(i)
	}
	mc, err := CLICall(m, m.Command("many"), toks)
	if err != nil || !strings.HasPrefix(joinArgs(mc.Args), `[[0,1,2,`) || len(mc.Arrays) != 0 {
		t.Fatalf("many: %.80s, %d arrays, %v", joinArgs(mc.Args), len(mc.Arrays), err)
	}
	// An option's value read from a file becomes an array at its argument.
	file := filepath.Join(t.TempDir(), "xs.json")
	if err := os.WriteFile(file, []byte(reals.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	oc, err := CLICall(m, m.Command("opt"), []string{"--xs", file, "2"})
	if err != nil || joinArgs(oc.Args) != `[2,null]` || len(oc.Arrays) != 1 || oc.Arrays[0].Path[0] != 1 || oc.Arrays[0].Shape[0] != 1000 {
		t.Fatalf("opt: %.80s, %+v, %v", joinArgs(oc.Args), oc.Arrays, err)
	}
}

// The fast path of a numeric list's CLI text writes what the generic path
// (decode, then toPool) writes.
func TestFastNumericTextAgrees(t *testing.T) {
	m := manifestOf(t, remote("f", "f8", pos("af8", ``)+","+pos("aai4", ``)+","+pos("aj", ``), ``))
	c := m.Command("f")
	for _, tc := range []struct {
		arg  int
		text string
	}{
		{0, `[1, 2.5, -3e2, 1E-5, 0]`},
		{0, `[]`},
		{1, `[[1,2],[3,-4]]`},
		{1, `[[2147483647]]`},
		{2, `[1, 20000000000, -3]`},
		{2, `[1.0, 2e3]`},
	} {
		ty := argType(&c.Args[tc.arg])
		fast, ok := fastNumericText([]byte(tc.text), ty)
		if !ok {
			t.Errorf("%s: the fast path declined it", tc.text)
			continue
		}
		generic, verr := toPool(ty, jsontexttest.Decode(t, []byte(tc.text)))
		if verr != nil {
			t.Errorf("%s: %v", tc.text, verr)
			continue
		}
		if string(fast) != string(generic) {
			t.Errorf("%s: fast %s, generic %s", tc.text, fast, generic)
		}
	}
	// Out of range or malformed: the fast path declines, the generic path explains.
	for _, text := range []string{`[[2147483648]]`, `[1,]`, `[[1],2]`, `["x"]`, `[1,"NaN"]`} {
		ty := argType(&c.Args[1])
		if !strings.HasPrefix(text, "[[") {
			ty = argType(&c.Args[0])
		}
		if _, ok := fastNumericText([]byte(text), ty); ok {
			t.Errorf("%s: the fast path took it", text)
		}
	}
}
