package argmap

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

func TestFromCLI(t *testing.T) {
	jh := loadManifest(t, "../../testdata/json-help/manifest.json")
	combat := loadManifest(t, "../../testdata/combat/manifest.json")
	custom := manifestOf(t,
		remote("mixed", "j", pos("j", ``)+","+pos("aj", `,"many":true`)+","+pos("s", ``)+","+opt("f8", "factor", `"2.5"`, `,"short":"f"`)+","+
			flagArg("verbose", "false", `,"short":"v"`)+","+flagArg("quiet", "false", `,"short":"q"`), ``),
		remote("kinds", "j", pos("b", ``)+","+pos("m11xj", ``)+","+pos("s", ``)+","+pos("?j", ``), ``),
		remote("tags", "j", opt("s", "tag", `"\"t\""`, `,"many":true,"quoted":true`), ``),
		remote("maps", "j", pos("<dict>at2sj", ``), ``),
		remote("neg", "j", pos("j", ``)+","+opt("j", "n", `"0"`, `,"short":"n"`), ``),
		remote("intro", "s", pos("s", `,"quoted":true`), ``))
	cases := []struct {
		m    *manifest.Manifest
		cmd  string
		argv []string
		want string
	}{
		{combat, "fighterDamage", []string{"15"}, `[15]`},
		{custom, "intro", []string{"Goblin"}, `["Goblin"]`},
		{custom, "intro", []string{`"quoted"`}, `["\"quoted\""]`}, // quoted: the token is the string
		{jh, "sumMany", []string{"1", "2", "3"}, `[[1,2,3]]`},
		{jh, "countWords", []string{"a b", "15", "--"}, `[["a b","15"]]`},
		{jh, "countWords", []string{"--", "--x", "-y"}, `[["--x","-y"]]`},
		{jh, "mapSize", []string{`[["a",1],["b",2]]`}, `[{"a":1,"b":2}]`},
		{jh, "addOne", []string{"41"}, `[41]`},
		{jh, "addOne", []string{"-41"}, `[-41]`},
		{jh, "addOne", []string{"4.0"}, `[4]`},
		{jh, "maybeDouble", []string{}, `[null]`},
		{jh, "maybeDouble", []string{"null"}, `[null]`},
		{jh, "maybeDouble", []string{"7"}, `[7]`},
		{jh, "configure", []string{}, `[{"tmpDir":"/tmp","numThreads":1,"removeCaches":false}]`},
		{jh, "configure", []string{"-t", "4", "--clean"}, `[{"tmpDir":"/tmp","numThreads":4,"removeCaches":true}]`},
		{jh, "configure", []string{"-t4", "--tmp-dir=/a b"}, `[{"tmpDir":"/a b","numThreads":4,"removeCaches":false}]`},
		{jh, "configure", []string{"--clean", "--no-clean"}, `[{"tmpDir":"/tmp","numThreads":1,"removeCaches":false}]`},
		{jh, "configure", []string{"--threads", "2", "--threads", "3"}, `[{"tmpDir":"/tmp","numThreads":3,"removeCaches":false}]`},
		{jh, "configure", []string{"--sys-config", `{"numThreads":8,"removeCaches":true}`}, `[{"tmpDir":"/tmp","numThreads":8,"removeCaches":true}]`},
		// A field's own option wins over the whole record, wherever it stands.
		{jh, "configure", []string{"-t", "2", "--sys-config", `{"numThreads":8,"tmpDir":"/x"}`}, `[{"tmpDir":"/x","numThreads":2,"removeCaches":false}]`},
		{custom, "mixed", []string{"1", "2", "3", "last"}, `[1,[2,3],"last",2.5,false,false]`},
		{custom, "mixed", []string{"-vq", "1", "2", "last", "-f", "0.5"}, `[1,[2],"last",0.5,true,true]`},
		{custom, "mixed", []string{"1", "--factor=1e3", "2", "--", "-3", "x"}, `[1,[2,-3],"x",1e3,false,false]`},
		{custom, "kinds", []string{"true", `{"x":1}`, "word", "5"}, `[true,{"x":1},"word",5]`},
		{custom, "kinds", []string{"false", `{"x":1}`, `"json string"`}, `[false,{"x":1},"json string",null]`},
		{custom, "kinds", []string{"false", `{"x":1}`, `15`}, `[false,{"x":1},"15",null]`}, // bare word for a Str
		{custom, "tags", []string{}, `["t"]`},
		{custom, "tags", []string{"--tag", "a", "--tag", "b c"}, `[["a","b c"]]`},
		{custom, "maps", []string{`[]`}, `[{}]`},
		{custom, "neg", []string{"-5", "-n", "-6"}, `[-5,-6]`},
	}
	for _, c := range cases {
		t.Run(c.cmd+" "+strings.Join(c.argv, " "), func(t *testing.T) {
			args, err := FromCLI(c.m.Command(c.cmd), c.argv)
			if err != nil {
				t.Fatal(err)
			}
			if got := joinArgs(args); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestFromCLIErrors(t *testing.T) {
	jh := loadManifest(t, "../../testdata/json-help/manifest.json")
	combat := loadManifest(t, "../../testdata/combat/manifest.json")
	custom := manifestOf(t,
		remote("need", "s", `{"kind":"grp","schema":"m21aj1bj","type":"G","group_opt":{"long":"g"},"entries":[
			{"key":"a","arg":{"kind":"opt","long":"a","default":"1","desc":[]}},{"key":"b","arg":{"kind":"opt","long":"b","desc":[]}}]}`, ``),
		remote("two", "j", pos("j", ``)+","+pos("?j", ``), ``),
		remote("sized", "j", pos("u1", ``)+","+opt("b", "on", `"false"`, ``), ``))
	cases := []struct {
		m    *manifest.Manifest
		cmd  string
		argv []string
		want string
	}{
		{combat, "fighterDamage", []string{}, "fighterDamage: expected 1 positional argument(s), got 0 (usage: fighterDamage INT)"},
		{combat, "fighterDamage", []string{"1", "2"}, "fighterDamage: expected 1 positional argument(s), got 2 (usage: fighterDamage INT)"},
		{combat, "fighterDamage", []string{"abc"}, `fighterDamage: argument INT: expected an integer, got "abc"`},
		{combat, "fighterDamage", []string{"2.5"}, `fighterDamage: argument INT: expected an integer, got "2.5"`},
		{combat, "fighterDamage", []string{"--x"}, "fighterDamage: unknown option --x (run with --help for the options)"},
		{combat, "fighterDamage", []string{"-x"}, "fighterDamage: unknown option -x (run with --help for the options)"},
		{jh, "configure", []string{"--threads", "abc"}, `configure: option --threads: expected an integer, got "abc"`},
		{jh, "configure", []string{"--threads"}, "configure: option --threads needs a value"},
		{jh, "configure", []string{"--clean=yes"}, "configure: --clean takes no value"},
		{jh, "configure", []string{"--sys-config", "nope"}, `configure: option --sys-config: expected a JSON object for SysConfig, got "nope"`},
		{jh, "configure", []string{"--sys-config", "[1]"}, `configure: option --sys-config: expected a JSON object for SysConfig, got array`},
		{jh, "configure", []string{"--sys-config", `{"threads":1}`}, "configure: option --sys-config: unexpected field 'threads' (expected: tmpDir, numThreads, removeCaches)"},
		{jh, "configure", []string{"--sys-config", `{"numThreads":"x"}`}, "configure: option --sys-config: field 'numThreads': expected integer, got string"},
		{jh, "configure", []string{"stray"}, "configure: expected 0 positional argument(s), got 1 (usage: configure [OPTIONS])"},
		{jh, "sumMany", []string{}, "sumMany: expected at least 1 positional argument(s), got 0 (usage: sumMany INT...)"},
		{jh, "sumMany", []string{"1", "x"}, `sumMany: argument INT...: expected an integer, got "x"`},
		// form: list (morloc's wording, cli.rs dispatch_shape_core)
		{jh, "mapSize", []string{"{"}, "mapSize: argument JSON: form: list: inline argv is not a JSON array (must start with `[`). Pass a path to a file with one element per line, `-` for stdin, or an inline JSON array like '[1,2,3]'."},
		// check.path: r (dispatch.rs apply_checks)
		{jh, "fileHead", []string{"no/such/file"}, "fileHead: argument FILE: check.path: r requires path 'no/such/file' to exist and be readable"},
		{jh, "mapSize", []string{`[["a","b"]]`}, `mapSize: argument JSON: at [0][1]: expected integer, got string`},
		{jh, "fileHead", []string{"--lines", "f"}, "fileHead: output projection --lines is not available in this mode"},
		{custom, "need", []string{"--a", "2"}, "need: missing --b or a 'b' field in --g (field 'b' has no default)"},
		{custom, "two", []string{}, "two: expected 1 to 2 positional argument(s), got 0 (usage: two INT [INT])"},
		{custom, "sized", []string{"256"}, "sized: argument INT: expected an integer from 0 to 255 (u1), got 256"},
		{custom, "sized", []string{"1", "--on", "yes"}, `sized: option --on: expected true or false, got "yes"`},
	}
	for _, c := range cases {
		t.Run(c.cmd+" "+strings.Join(c.argv, " "), func(t *testing.T) {
			args, err := FromCLI(c.m.Command(c.cmd), c.argv)
			if err == nil {
				t.Fatalf("got %s, want error %q", joinArgs(args), c.want)
			}
			if err.Error() != c.want {
				t.Errorf("\n got %q\nwant %q", err.Error(), c.want)
			}
		})
	}
}

func TestCLICall(t *testing.T) {
	m := loadManifest(t, "../../testdata/json-help/manifest.json")
	c := m.Command("fileHead")
	cases := []struct {
		argv       []string
		cmd, args  string
		wantErrSub string
	}{
		// FILE has check.path: r, so it names a readable file.
		{[]string{"cli.go"}, "fileHead", `["cli.go"]`, ""},
		{[]string{"--lines", "cli.go"}, "mlcp_fileHead_lines", `["cli.go"]`, ""},
		{[]string{"cli.go", "-s"}, "mlcp_fileHead_sum", `["cli.go"]`, ""},
		{[]string{"-"}, "fileHead", `["/dev/stdin"]`, ""},
		{[]string{"-l", "-s", "cli.go"}, "", "", "choose one output projection, not both --lines and --sum"},
	}
	for _, cs := range cases {
		call, err := CLICall(m, c, cs.argv)
		if !errAsWanted(t, fmt.Sprint(cs.argv), err, cs.wantErrSub) {
			continue
		}
		if call.Command.Name != cs.cmd || joinArgs(call.Args) != cs.args {
			t.Errorf("%v: %s %s, want %s %s", cs.argv, call.Command.Name, joinArgs(call.Args), cs.cmd, cs.args)
		}
	}
}

// nan, inf and -inf are Reals on the CLI, as in morloc's: each reaches a
// pool as a rank-0 f8 array in its place, and a callee without arrays as
// the wire's string. Elsewhere they are what they always were.
func TestCLINonFinite(t *testing.T) {
	m := manifestOf(t,
		remote("real", "f8", pos("f8", ``)+","+opt("?f8", "scale", `"1.0"`, ``)+","+pos("s", ``), ``),
		remote("int", "j", pos("j", ``), ``))
	cases := []struct {
		cmd    string
		argv   []string
		args   string // with the arrays' places null
		arrays []float64
		json   string // JSONArgs: what a callee without arrays gets
		err    string
	}{
		{"real", []string{"nan", "NaN"}, `[null,1.0,"NaN"]`, []float64{math.NaN()}, `["NaN",1.0,"NaN"]`, ""},
		{"real", []string{"inf", "x", "--scale", "-inf"}, `[null,null,"x"]`, []float64{math.Inf(1), math.Inf(-1)}, `["Infinity","-Infinity","x"]`, ""},
		{"real", []string{"-Infinity", "x"}, `[null,1.0,"x"]`, []float64{math.Inf(-1)}, `["-Infinity",1.0,"x"]`, ""},
		{"real", []string{"-inf", "x", "--scale", "inf"}, `[null,null,"x"]`, []float64{math.Inf(-1), math.Inf(1)}, `["-Infinity","Infinity","x"]`, ""},
		{"real", []string{"nano", "x"}, "", nil, "", `expected a number, got "nano"`},
		{"int", []string{"nan"}, "", nil, "", `expected an integer, got "nan"`},
	}
	for _, c := range cases {
		call, err := CLICall(m, m.Command(c.cmd), c.argv)
		if !errAsWanted(t, fmt.Sprint(c.argv), err, c.err) {
			continue
		}
		if got := joinArgs(call.Args); got != c.args {
			t.Errorf("%v: args %s, want %s", c.argv, got, c.args)
		}
		if len(call.Arrays) != len(c.arrays) {
			t.Fatalf("%v: %d arrays, want %d", c.argv, len(call.Arrays), len(c.arrays))
		}
		for k, a := range call.Arrays {
			f := math.Float64frombits(binary.LittleEndian.Uint64(a.Data))
			if a.DType != ndarray.F8 || len(a.Shape) != 0 || f != c.arrays[k] && !(math.IsNaN(f) && math.IsNaN(c.arrays[k])) {
				t.Errorf("%v: array %d is %+v (%v), want the scalar %v", c.argv, k, a, f, c.arrays[k])
			}
		}
		js, err := call.JSONArgs()
		if err != nil || joinArgs(js) != c.json {
			t.Errorf("%v: JSONArgs %s, %v; want %s", c.argv, joinArgs(js), err, c.json)
		}
	}
}

// A command whose terminal is @default runs that terminal's entry when the
// command line chose none, unless -f was given (phase2.rs
// redirect_via_terminal); a chosen projection wins.
func TestDefaultProjection(t *testing.T) {
	m := manifestOf(t,
		remote("lines", "as", pos("s", ``), `,"terminals":[{"long":"count","entry":"lines_count","default":true},{"long":"upper","short":"u","entry":"lines_upper"}]`),
		strings.Replace(remote("lines_count", "j", pos("s", ``), ``), `"type":"remote"`, `"type":"remote","internal":true`, 1),
		strings.Replace(remote("lines_upper", "s", pos("s", ``), ``), `"type":"remote"`, `"type":"remote","internal":true`, 1))
	c := m.Command("lines")
	for _, tc := range []struct {
		argv     []string
		explicit bool
		want     string
	}{
		{[]string{"a"}, false, "lines_count"},
		{[]string{"a"}, true, "lines"},
		{[]string{"-u", "a"}, false, "lines_upper"},
	} {
		call, err := CLICall(m, c, tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		if got := call.WithDefaultProjection(m, c, tc.explicit).Command.Name; got != tc.want {
			t.Errorf("%v (-f given: %v): runs %s, want %s", tc.argv, tc.explicit, got, tc.want)
		}
	}
}
