package argmap

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/ndarray"
)

func joinArgs(args []json.RawMessage) string {
	return string(joinArray(args))
}

// jsonHelpTool is a tool of the json-help program.
func jsonHelpTool(t testing.TB, name string) *Tool {
	t.Helper()
	tools, _ := Tools(loadManifest(t, "../../testdata/json-help/manifest.json"))
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func TestToPositional(t *testing.T) {
	scalars := remote("f", "j", pos("j", ``)+","+pos("?s", ``), ``)
	options := remote("f", "j",
		opt("s", "dir", `"\"/tmp\""`, ``)+","+opt("j", "n", `"1"`, ``)+","+opt("f8", "x", `"2.5"`, ``)+","+
			opt("b", "b", `"true"`, ``)+","+opt("s", "word", `"plain"`, ``)+","+opt("?j", "maybe", `"null"`, ``)+","+
			opt("aj", "list", `"[1,2]"`, ``)+","+opt("j", "none", `null`, ``)+","+flagArg("clean", "false", ``)+","+flagArg("keep", "true", ``), ``)
	sized := remote("f", "j", opt("i1", "a", `"0"`, ``)+","+opt("u8", "b", `"0"`, ``), ``)
	cases := []struct {
		name, command, args, want string
	}{
		{"integer", scalars, `{"_1":15}`, `[15,null]`},
		{"optional given", scalars, `{"_1":15,"_2":"x"}`, `[15,"x"]`},
		{"optional null", scalars, `{"_1":15,"_2":null}`, `[15,null]`},
		{"big integer passes byte for byte", scalars, `{"_1":123456789012345678901234567890}`, `[123456789012345678901234567890,null]`},
		{"negative big integer", scalars, `{"_1":-9007199254740993}`, `[-9007199254740993,null]`},
		{"integer written 2.0", scalars, `{"_1":2.0}`, `[2,null]`},
		{"integer written 1e2", scalars, `{"_1":1e2}`, `[100,null]`},
		{"integer written 1.5e1", scalars, `{"_1":1.5E1}`, `[15,null]`},
		{"integer written 1e1000", scalars, `{"_1":1e1000}`, `[1` + strings.Repeat("0", 1000) + `,null]`},
		{"4096-digit integer", scalars, `{"_1":` + strings.Repeat("9", 4096) + `}`, `[` + strings.Repeat("9", 4096) + `,null]`},
		{"string escapes survive", scalars, `{"_1":1,"_2":"a\"b\u00e9\n<>"}`, `[1,"a\"bé\n<>"]`},
		{"option defaults typed by the option's type", options, `{}`, `["/tmp",1,2.5,true,"plain",null,[1,2],null,false,true]`},
		{"options and flags given", options, `{"dir":"/x","n":7,"x":1,"b":false,"word":"w","maybe":3,"list":[],"none":5,"clean":true,"keep":false}`,
			`["/x",7,1.0,false,"w",3,[],5,true,false]`},
		{"sized integers at their bounds", sized, `{"a":-128,"b":18446744073709551615}`, `[-128,18446744073709551615]`},
		{"group unrolled: record in field order, defaults filled", remote("f", "s", sysConfig("null"), ``),
			`{"removeCaches":true,"tmpDir":"/var"}`, `[{"tmpDir":"/var","numThreads":1,"removeCaches":true}]`},
		{"group unrolled: all defaults", remote("f", "s", sysConfig("null"), ``), `{}`, `[{"tmpDir":"/tmp","numThreads":1,"removeCaches":false}]`},
		{"group whole: missing fields from defaults", remote("f", "s", sysConfig(`{"long":"sys-config"}`), ``),
			`{"sysconfig":{"numThreads":8}}`, `[{"tmpDir":"/tmp","numThreads":8,"removeCaches":false}]`},
		{"group whole: omitted builds from defaults", remote("f", "s", sysConfig(`{"long":"sys-config"}`), ``),
			`{}`, `[{"tmpDir":"/tmp","numThreads":1,"removeCaches":false}]`},
		{"group whole: all given", remote("f", "s", sysConfig(`{"long":"sys-config"}`), ``),
			`{"sysconfig":{"removeCaches":true,"numThreads":2,"tmpDir":"d"}}`, `[{"tmpDir":"d","numThreads":2,"removeCaches":true}]`},
		{"group field optional without default is null", remote("f", "s", `{"kind":"grp","schema":"m21aj1b?j","type":"G","group_opt":null,"entries":[
				{"key":"a","arg":{"kind":"opt","long":"a","default":"1","desc":[]}},{"key":"b","arg":{"kind":"opt","long":"b","desc":[]}}]}`, ``),
			`{}`, `[{"a":1,"b":null}]`},
		{"map sent as an object, keys in order", remote("f", "j", pos("<dict>at2sj", ``), ``),
			`{"_1":[["b",1],["a",2]]}`, `[{"b":1,"a":2}]`},
		{"map of integer keys stays pairs", remote("f", "j", pos("<dict>at2jj", ``), ``),
			`{"_1":[[2,1],[1,2.0]]}`, `[[[2,1],[1,2]]]`},
		{"map inside a record inside a list", remote("f", "j", pos("am22ids1m<dict>at2s?f8", ``), ``),
			`{"_1":[{"m":[["x",1.5],["y",null]],"id":"a"}]}`, `[[{"id":"a","m":{"x":1.5,"y":null}}]]`},
		{"record fields in declaration order, missing optional is null", remote("f", "j", pos("m31aj1b?s1cb", ``), ``),
			`{"_1":{"c":true,"a":1}}`, `[{"a":1,"b":null,"c":true}]`},
		{"recursive type followed through back-references", remote("f", "j", pos("&4Treem24datai14kidsa^4Tree", ``), ``),
			`{"_1":{"kids":[{"kids":[],"data":2.0}],"data":1}}`, `[{"data":1,"kids":[{"data":2,"kids":[]}]}]`},
		{"many positional", remote("f", "j", pos("aj", `,"many":true`), ``), `{"_1":[1,2,3]}`, `[[1,2,3]]`},
		{"many positional with a scalar schema", remote("f", "j", pos("s", `,"many":true`), ``), `{"_1":["a"]}`, `[["a"]]`},
		{"tuple", remote("f", "j", pos("t2sj", ``), ``), `{"_1":["a",1]}`, `[["a",1]]`},
		{"null arguments are {}", remote("f", "j", opt("j", "n", `"4"`, ``), ``), `null`, `[4]`},
		{"absent arguments are {}", remote("f", "j", opt("j", "n", `"4"`, ``), ``), ``, `[4]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := toolOf(t, c.command)
			call, err := tool.ToPositional(json.RawMessage(c.args))
			if err != nil {
				t.Fatalf("ToPositional(%s): %v", c.args, err)
			}
			if got := joinArgs(call.Args); got != c.want {
				t.Errorf("args %s\n got %s\nwant %s", c.args, got, c.want)
			}
			if call.Command != tool.Command {
				t.Errorf("call goes to %s, want the tool's own command", call.Command.Name)
			}
			if len(call.Args) != len(tool.Command.Args) {
				t.Errorf("%d values for %d manifest arguments", len(call.Args), len(tool.Command.Args))
			}
		})
	}
}

func TestRenderSelectsEntry(t *testing.T) {
	tool := jsonHelpTool(t, "fileHead")
	cases := map[string]string{
		`{"_1":"f"}`:                   "fileHead",
		`{"_1":"f","_render":"raw"}`:   "fileHead",
		`{"_1":"f","_render":"lines"}`: "mlcp_fileHead_lines",
		`{"_1":"f","_render":"sum"}`:   "mlcp_fileHead_sum",
	}
	for args, want := range cases {
		call, err := tool.ToPositional(json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if call.Command.Name != want {
			t.Errorf("%s runs %s, want %s", args, call.Command.Name, want)
		}
		if got := joinArgs(call.Args); got != `["f"]` {
			t.Errorf("%s: args %s, want [\"f\"] (same arguments, no _render)", args, got)
		}
	}
}

func TestToPositionalErrors(t *testing.T) {
	fighter := remote("fighterDamage", "j", pos("j", ``), ``)
	cases := []struct {
		name, command, args, want string
	}{
		{"wrong type", fighter, `{"_1":"x"}`, "argument '_1' of 'fighterDamage': expected integer, got string"},
		{"missing", fighter, `{}`, "missing required argument '_1' of 'fighterDamage'"},
		{"extra", fighter, `{"_1":1,"x":2}`, "unexpected argument 'x' of 'fighterDamage' (expected: _1)"},
		{"extra, and no arguments taken", remote("rollAdv", "j", ``, ``), `{"x":2}`, "unexpected argument 'x' of 'rollAdv' (expected: none)"},
		{"misspelt name reports the stranger first", fighter, `{"_l":1}`, "unexpected argument '_l' of 'fighterDamage' (expected: _1)"},
		{"arguments an array", fighter, `[1]`, "arguments of 'fighterDamage' must be an object, got array"},
		{"arguments a string", fighter, `"x"`, "arguments of 'fighterDamage' must be an object, got string"},
		{"not an integer", fighter, `{"_1":2.5}`, "argument '_1' of 'fighterDamage': expected integer, got number"},
		{"null for a required integer", fighter, `{"_1":null}`, "argument '_1' of 'fighterDamage': expected integer, got null"},
		{"optional expects a type or null", remote("f", "j", pos("?j", ``), ``), `{"_1":"x"}`, "argument '_1' of 'f': expected integer or null, got string"},
		{"nested record field", remote("configure", "s", sysConfig(`{"long":"sys-config"}`), ``), `{"sysconfig":{"numThreads":"4"}}`,
			"argument 'sysconfig.numThreads' of 'configure': expected integer, got string"},
		{"nested unexpected field", remote("configure", "s", sysConfig(`{"long":"sys-config"}`), ``), `{"sysconfig":{"threads":4}}`,
			"unexpected argument 'sysconfig.threads' of 'configure' (expected: tmpDir, numThreads, removeCaches)"},
		{"whole group field without default, given partially", remote("f", "s", `{"kind":"grp","schema":"m21aj1bj","type":"G","group_opt":{"long":"g"},"entries":[
				{"key":"a","arg":{"kind":"opt","long":"a","default":"1","desc":[]}},{"key":"b","arg":{"kind":"opt","long":"b","desc":[]}}]}`, ``),
			`{"g":{"a":2}}`, "missing required argument 'g.b' of 'f'"},
		{"whole group field without default, group omitted", remote("f", "s", `{"kind":"grp","schema":"m21aj1bj","type":"G","group_opt":{"long":"g"},"entries":[
				{"key":"a","arg":{"kind":"opt","long":"a","default":"1","desc":[]}},{"key":"b","arg":{"kind":"opt","long":"b","desc":[]}}]}`, ``),
			`{}`, "missing required argument 'g' of 'f': field 'b' has no default"},
		{"unrolled group field without default", remote("f", "s", `{"kind":"grp","schema":"m21aj1bj","type":"G","group_opt":null,"entries":[
				{"key":"a","arg":{"kind":"opt","long":"a","default":"1","desc":[]}},{"key":"b","arg":{"kind":"opt","long":"b","desc":[]}}]}`, ``),
			`{"a":3}`, "missing required argument 'b' of 'f'"},
		{"inside a list", remote("f", "j", pos("aj", ``), ``), `{"_1":[1,"2"]}`, "argument '_1[1]' of 'f': expected integer, got string"},
		{"tuple too long", remote("f", "j", pos("t2sj", ``), ``), `{"_1":["a",1,2]}`, "argument '_1' of 'f': expected an array of exactly 2 items, got 3"},
		{"tuple item", remote("f", "j", pos("t2sj", ``), ``), `{"_1":["a","b"]}`, "argument '_1[1]' of 'f': expected integer, got string"},
		{"map pair", remote("f", "j", pos("<dict>at2sj", ``), ``), `{"_1":[["a",1],["b"]]}`, "argument '_1[1]' of 'f': expected an array of exactly 2 items, got 1"},
		{"map duplicate key", remote("f", "j", pos("<dict>at2sj", ``), ``), `{"_1":[["a",1],["a",2]]}`, `argument '_1[1][0]' of 'f': duplicate map key "a"`},
		{"i1 too big", remote("f", "j", pos("i1", ``), ``), `{"_1":128}`, "argument '_1' of 'f': expected an integer from -128 to 127 (i1), got 128"},
		{"i1 too small", remote("f", "j", pos("i1", ``), ``), `{"_1":-129}`, "argument '_1' of 'f': expected an integer from -128 to 127 (i1), got -129"},
		{"u1 negative", remote("f", "j", pos("u1", ``), ``), `{"_1":-1}`, "argument '_1' of 'f': expected an integer from 0 to 255 (u1), got -1"},
		{"i2", remote("f", "j", pos("i2", ``), ``), `{"_1":32768}`, "argument '_1' of 'f': expected an integer from -32768 to 32767 (i2), got 32768"},
		{"u2", remote("f", "j", pos("u2", ``), ``), `{"_1":65536}`, "argument '_1' of 'f': expected an integer from 0 to 65535 (u2), got 65536"},
		{"i4", remote("f", "j", pos("i4", ``), ``), `{"_1":2147483648}`, "argument '_1' of 'f': expected an integer from -2147483648 to 2147483647 (i4), got 2147483648"},
		{"u4", remote("f", "j", pos("u4", ``), ``), `{"_1":4294967296}`, "argument '_1' of 'f': expected an integer from 0 to 4294967295 (u4), got 4294967296"},
		{"i8", remote("f", "j", pos("i8", ``), ``), `{"_1":9223372036854775808}`, "argument '_1' of 'f': expected an integer from -9223372036854775808 to 9223372036854775807 (i8), got 9223372036854775808"},
		{"u8", remote("f", "j", pos("u8", ``), ``), `{"_1":18446744073709551616}`, "argument '_1' of 'f': expected an integer from 0 to 18446744073709551615 (u8), got 18446744073709551616"},
		{"sized range in a list, written 3e2", remote("f", "j", pos("au1", ``), ``), `{"_1":[1,3e2]}`, "argument '_1[1]' of 'f': expected an integer from 0 to 255 (u1), got 300"},
		{"huge exponent", remote("f", "j", pos("j", ``), ``), `{"_1":1e999999}`, "argument '_1' of 'f': number 1e999999 is out of range (at most 4096 characters, exponent within ±1000)"},
		{"exponent that makes the validator panic", remote("f", "j", pos("aj", ``), ``), `{"_1":[1,1e-9999999]}`, "argument '_1[1]' of 'f': number 1e-9999999 is out of range (at most 4096 characters, exponent within ±1000)"},
		{"exponent beyond an integer's reach", remote("f", "j", pos("j", ``), ``), `{"_1":1e1001}`, "argument '_1' of 'f': number 1e1001 is out of range (at most 4096 characters, exponent within ±1000)"},
		{"literal too long", remote("f", "j", pos("m11xf8", ``), ``), `{"_1":{"x":1` + strings.Repeat("0", 4096) + `}}`, "argument '_1.x' of 'f': number 1000000000000000000000000000000000000... is out of range (at most 4096 characters, exponent within ±1000)"},
		{"integer written with an exponent within bounds", remote("f", "j", pos("j", ``), ``), `{"_1":1.5e-3}`, "argument '_1' of 'f': expected integer, got number"},
		{"render name unknown", remote("f", "as", pos("s", ``), `,"terminals":[{"long":"up","entry":"f"}]`), `{"_1":"a","_render":"down"}`,
			`argument '_render' of 'f': expected one of "raw", "up", got "down"`},
		{"first fault by argument order", remote("f", "j", pos("j", ``)+","+pos("j", ``)+","+pos("j", ``), ``), `{"_3":"c","_2":"b","_1":1}`,
			"argument '_2' of 'f': expected integer, got string"},
		// A Real takes a number or "NaN", "Infinity", "-Infinity", spelt
		// exactly so (JSON has no number for them).
		{"a Real's NaN spelt otherwise", remote("f", "j", pos("f8", ``), ``), `{"_1":"nan"}`,
			`argument '_1' of 'f': expected number or one of "NaN", "Infinity", "-Infinity", got string "nan"`},
		{"an optional Real's", remote("f", "j", pos("?f8", ``), ``), `{"_1":"inf"}`,
			`argument '_1' of 'f': expected number or null or one of "NaN", "Infinity", "-Infinity", got string "inf"`},
		{"a Real in a record given a boolean", remote("f", "j", pos("am11xf4", ``), ``), `{"_1":[{"x":true}]}`,
			`argument '_1[0].x' of 'f': expected number or one of "NaN", "Infinity", "-Infinity", got boolean`},
		{"a Str is no Real", remote("f", "j", pos("t2sj", ``), ``), `{"_1":["NaN","NaN"]}`,
			"argument '_1[1]' of 'f': expected integer, got string"},
		{"an Int takes no NaN", remote("f", "j", pos("j", ``), ``), `{"_1":"NaN"}`,
			"argument '_1' of 'f': expected integer, got string"},
		{"an Int takes no infinity", remote("f", "j", pos("ai4", ``), ``), `{"_1":[1,"-Infinity"]}`,
			"argument '_1[1]' of 'f': expected integer, got string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := toolOf(t, c.command)
			call, err := tool.ToPositional(json.RawMessage(c.args))
			if err == nil {
				t.Fatalf("ToPositional(%s) = %s, want error %q", c.args, joinArgs(call.Args), c.want)
			}
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v is not an *ArgError", err, err)
			}
			if err.Error() != c.want {
				t.Errorf("\n got %q\nwant %q", err.Error(), c.want)
			}
			if ae.Tool != tool.Name {
				t.Errorf("ArgError.Tool = %q", ae.Tool)
			}
		})
	}
}

// NaN and the infinities as tools/call arguments (docs/spec.md §4.5): where a
// Real is declared, at any depth, "NaN", "Infinity" and "-Infinity" go to
// the pool as rank-0 f8 arrays (null in their place), so that the function
// gets the double, as from the CLI; by the fast path and the full one
// alike. A string "NaN" where a Str is declared stays a string.
func TestNonFiniteArguments(t *testing.T) {
	cases := []struct {
		name, command, args, want string
		arrays                    []string // path and value of each rank-0 array
	}{
		{"a Real", remote("f", "j", pos("f8", ``), ``), `{"_1":"NaN"}`, `null`, []string{`[0] NaN`}},
		{"an optional Real", remote("f", "j", pos("?f4", ``), ``), `{"_1":"-Infinity"}`, `null`, []string{`[0] -Inf`}},
		{"in a list", remote("f", "j", pos("af8", ``), ``), `{"_1":[1,"Infinity",2.5]}`, `[1.0,null,2.5]`, []string{`[0,1] +Inf`}},
		{"in a record in a list", remote("f", "j", pos("am21xf81ys", ``), ``), `{"_1":[{"y":"NaN","x":"NaN"}]}`,
			`[{"x":null,"y":"NaN"}]`, []string{`[0,0,"x"] NaN`}},
		{"in a tuple", remote("f", "j", pos("t2f8s", ``), ``), `{"_1":["-Infinity","-Infinity"]}`, `[null,"-Infinity"]`, []string{`[0,0] -Inf`}},
		{"in a Map", remote("f", "j", pos("<dict>at2sf8", ``), ``), `{"_1":[["a","NaN"],["b",1]]}`, `{"a":null,"b":1.0}`, []string{`[0,"a"] NaN`}},
		{"in a recursive type", remote("f", "j", pos("&4Treem24dataf84kidsa^4Tree", ``), ``), `{"_1":{"data":1,"kids":[{"data":"NaN","kids":[]}]}}`,
			`{"data":1.0,"kids":[{"data":null,"kids":[]}]}`, []string{`[0,"kids",0,"data"] NaN`}},
		{"escaped, by the full path", remote("f", "j", pos("f8", ``), ``), `{"_1":"N\u0061N"}`, `null`, []string{`[0] NaN`}},
		{"an option", remote("f", "j", opt("f8", "x", `"2.5"`, ``), ``), `{"x":"Infinity"}`, `null`, []string{`[0] +Inf`}},
		{"the option's default", remote("f", "j", opt("f8", "x", `"2.5"`, ``), ``), `{}`, `2.5`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := toolOf(t, c.command)
			for path, positional := range map[string]func(json.RawMessage) (Call, error){
				"ToPositional": tool.ToPositional, "full": tool.fullPositional,
			} {
				call, err := positional(json.RawMessage(c.args))
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				if string(call.Args[0]) != c.want {
					t.Errorf("%s: argument %s, want %s", path, call.Args[0], c.want)
				}
				var got []string
				for _, a := range call.Arrays {
					p, _ := json.Marshal(a.Path)
					if len(a.Shape) != 0 || a.DType != ndarray.F8 || len(a.Data) != 8 {
						t.Errorf("%s: array %+v, want one f8 of rank 0", path, a)
						continue
					}
					got = append(got, string(p)+" "+strconv.FormatFloat(math.Float64frombits(binary.LittleEndian.Uint64(a.Data)), 'g', -1, 64))
				}
				if strings.Join(got, "; ") != strings.Join(c.arrays, "; ") {
					t.Errorf("%s: arrays %v, want %v", path, got, c.arrays)
				}
			}
		})
	}
}

// TestArgErrorFields: callers can read which argument failed.
func TestArgErrorFields(t *testing.T) {
	tool := toolOf(t, remote("configure", "s", sysConfig(`{"long":"sys-config"}`), ``))
	_, err := tool.ToPositional(json.RawMessage(`{"sysconfig":{"numThreads":true}}`))
	var ae *ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("got %v", err)
	}
	if ae.Arg != "sysconfig.numThreads" || ae.Msg != "expected integer, got boolean" {
		t.Errorf("ArgError{Arg:%q, Msg:%q}", ae.Arg, ae.Msg)
	}
}

// TestConcurrentCalls: the schema compiles once, safely, under concurrent
// first calls (run with -race).
func TestConcurrentCalls(t *testing.T) {
	tool := jsonHelpTool(t, "configure")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call, err := tool.ToPositional(json.RawMessage(`{"sysconfig":{"numThreads":3}}`))
			if err == nil && joinArgs(call.Args) != `[{"tmpDir":"/tmp","numThreads":3,"removeCaches":false}]` {
				err = errors.New("wrong args " + joinArgs(call.Args))
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestJSONHelpCalls runs one call per json-help tool.
func TestJSONHelpCalls(t *testing.T) {
	cases := []struct{ tool, args, want string }{
		{"sumMany", `{"_1":[1,2,3]}`, `[[1,2,3]]`},
		{"configure", `{}`, `[{"tmpDir":"/tmp","numThreads":1,"removeCaches":false}]`},
		{"countWords", `{"_1":["a b","c"]}`, `[["a b","c"]]`},
		{"mapSize", `{"_1":[["a",1],["b",2]]}`, `[{"a":1,"b":2}]`},
		{"fileHead", `{"_1":"/etc/hosts"}`, `["/etc/hosts"]`},
		{"addOne", `{"_1":41}`, `[41]`},
		{"maybeDouble", `{}`, `[null]`},
	}
	for _, c := range cases {
		call, err := jsonHelpTool(t, c.tool).ToPositional(json.RawMessage(c.args))
		if err != nil {
			t.Errorf("%s %s: %v", c.tool, c.args, err)
			continue
		}
		if got := joinArgs(call.Args); got != c.want {
			t.Errorf("%s %s: got %s, want %s", c.tool, c.args, got, c.want)
		}
	}
}

func TestResultValue(t *testing.T) {
	cases := []struct{ schema, in, want string }{
		{"j", ` 12 `, `12`},
		{"j", `123456789012345678901234567890`, `123456789012345678901234567890`},
		{"s", `"A wild Goblin appears!"`, `"A wild Goblin appears!"`},
		{"as", "[\n \"a\",\n \"b\"\n]", `["a","b"]`},
		{"m24names3agej", `{"age": 3, "name": "x"}`, `{"age":3,"name":"x"}`},
		{"<dict>at2sj", `{"b": 1, "a": 2}`, `[["b",1],["a",2]]`},
		{"<dict>at2sj", `{}`, `[]`},
		{"<dict>at2sj", `[["a",1]]`, `[["a",1]]`},
		{"?<dict>at2sj", `null`, `null`},
		{"<dict>at2s<dict>at2sb", `{"o":{"i":true}}`, `[["o",[["i",true]]]]`},
		{"a<dict>at2sj", `[{"x":1},{"y":2}]`, `[[["x",1]],[["y",2]]]`},
		{"t2s<dict>at2sj", `["a",{"x":1}]`, `["a",[["x",1]]]`},
		{"&1Nm21m<dict>at2sj1ca^1N", `{"m":{"a":1},"c":[{"m":{"b":2},"c":[]}]}`, `{"m":[["a",1]],"c":[{"m":[["b",2]],"c":[]}]}`},
		{"&1Xm21m<dict>at2sj1bm11ca^1X", `{"m":{},"b":{"c":[{"m":{"z":0},"b":{"c":[]}}]}}`, `{"m":[],"b":{"c":[{"m":[["z",0]],"b":{"c":[]}}]}}`},
		{"<list>at2sj", `[["a",1]]`, `[["a",1]]`},
		// Numbers take one canonical form per declared type, whatever the pool's language wrote.
		{"f8", `1.0`, `1`},
		{"f8", `0.10000000000000000555`, `0.1`},
		{"f8", `1e+308`, `1e+308`},
		{"f8", `1E308`, `1e+308`},
		{"f8", `-0.0`, `-0`},
		{"f4", `2.5e-7`, `2.5e-7`},
		{"af8", `[1.0, 2.50, 3]`, `[1,2.5,3]`},
		{"j", `2.0`, `2`},
		{"j", `1e3`, `1000`},
		{"j", `9007199254740993`, `9007199254740993`},
		{"m34meanf83minf83maxf8", `{"mean":2.0,"min":1.0,"max":3.5}`, `{"mean":2,"min":1,"max":3.5}`},
		{"?f8", `null`, `null`},
		{"t2jf8", `[1.0, 1.0]`, `[1,1]`},
	}
	for _, c := range cases {
		t.Run(c.schema+" "+c.in, func(t *testing.T) {
			m := manifestOf(t, remote("f", c.schema, ``, ``))
			got, err := ResultValue(&m.Commands[0].Return, ndarray.Value{JSON: json.RawMessage(c.in)})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	for _, schema := range []string{"j", "<dict>at2sj"} {
		m := manifestOf(t, remote("f", schema, ``, ``))
		if _, err := ResultValue(&m.Commands[0].Return, ndarray.Value{JSON: json.RawMessage(`{"a":`)}); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
			t.Errorf("%s: broken JSON gave %v", schema, err)
		}
	}
}
