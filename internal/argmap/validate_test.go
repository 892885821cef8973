package argmap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// shapeTools have an argument of every type shape a schema can take, and
// keys that jsonschema escapes in instance locations.
func shapeTools(t testing.TB) []*Tool {
	grp := func(name, schema, groupOpt string) string {
		return `{"kind":"grp","schema":"` + schema + `","type":"` + name + `","group_opt":` + groupOpt + `,"desc":[],"entries":[
			{"key":"a","arg":{"kind":"opt","long":"a","default":"1","desc":[]}},
			{"key":"b","arg":{"kind":"opt","long":"b","desc":[]}},
			{"key":"c","arg":{"kind":"flag","long":"c","default":"true","desc":[]}}]}`
	}
	tools, excl := Tools(manifestOf(t,
		remote("records", "j", pos("m31aj1bm21xs1y?b1ct2sj", ``)+","+pos("?m11xaf8", ``), ``),
		remote("tuples", "j", pos("t3bzs", ``)+","+pos("t2t2jjaj", ``)+","+pos("?t1s", ``), ``),
		// An empty tuple writes "prefixItems": [], which JSON Schema's
		// metaschema refuses: every call the fast path declines fails.
		remote("emptyTuple", "j", pos("t0", ``), ``),
		remote("optlists", "j", pos("?aj", ``)+","+pos("a?j", ``)+","+pos("?a?m11xj", ``)+","+opt("?aaf8", "grid", `"null"`, ``), ``),
		remote("maps", "j", pos("<dict>at2sj", ``)+","+pos("<dict>at2jm11xs", ``)+","+pos("<dict>at2s<dict>at2sb", ``), ``),
		remote("recursive", "j", pos("&4Treem24datai14kidsa^4Tree", ``)+","+pos("&4Listm24headj4tail?^4List", ``), ``),
		// Recursion through a tuple, two declarations of one name, a
		// declaration inside another, under an option and in a whole group.
		remote("recursion", "j", pos("&4Listt2j?^4List", ``)+","+pos("&4Listm14nexta^4List", ``)+","+
			pos("&1Am11b&1Bt2a^1Aa^1B", ``)+","+opt("?&4Listt2j?^4List", "list", `"null"`, ``)+","+
			`{"kind":"grp","schema":"&4Nodem31aj1bj1ca^4Node","type":"Node","group_opt":{"long":"node"},"desc":[],"entries":[
			{"key":"a","arg":{"kind":"opt","long":"a","default":"1","desc":[]}},
			{"key":"b","arg":{"kind":"opt","long":"b","desc":[]}},
			{"key":"c","arg":{"kind":"opt","long":"c","default":"[]","desc":[]}}]}`, ``),
		// Fixed-length lists, and `*`.
		remote("fixed", "j", pos("a:2j", ``)+","+pos("a:2a:3f8", ``)+","+pos("?a:1s", ``)+","+pos("a:3?m11xb", ``)+","+
			opt("a:2i1", "pair", `"[1,2]"`, ``)+","+pos("<dict>a:2t2sj", ``), ``),
		remote("unknown", "j", pos("*", ``)+","+pos("a*", ``)+","+pos("?*", ``)+","+pos("m21x*1yj", ``)+","+pos("a:2*", ``), ``),
		remote("wholeGroup", "j", grp("Whole", "m31aj1bj1cb", `{"long":"whole"}`)+","+pos("j", ``), ``),
		remote("unrolledGroup", "j", pos("s", ``)+","+grp("Parts", "m31aj1bj1cb", `null`), ``),
		remote("options", "j", opt("s", "dir", `"\"/tmp\""`, ``)+","+opt("i1", "n", `"1"`, ``)+","+opt("f8", "x", `"2.5"`, ``)+","+
			opt("aj", "list", `"[1,2]"`, ``)+","+opt("j", "none", `null`, ``)+","+flagArg("clean", "false", ``)+","+flagArg("keep", "true", ``), ``),
		remote("render", "j", pos("j", ``)+","+opt("?s", "label", `"null"`, ``),
			`,"terminals":[{"long":"up","entry":"render"},{"long":"down","entry":"render"}]`),
		remote("sizes", "j", pos("u1", ``)+","+pos("i8", ``)+","+pos("au2", ``)+","+pos("f4", ``), ``),
		// morloc 0.69's schemas: hints, and Int as i4.
		remote("v069", "<int>i4", pos("<int>i4", ``)+","+pos("<std::vector<$1>>a<int>i4", ``)+","+
			pos("<dict>m26nwords<int>i47longest<str>s", ``)+","+pos("?<int>i4", ``)+","+pos("<dict>at2<str>s<int>i4", ``), ``),
		remote("many", "j", pos("j", `,"many":true`)+","+pos("t2sb", `,"many":true,"name":"pairs"`), ``),
		// Keys that escape: "/" is ~1 (after "a"), "é" is %C3%A9 (before
		// "A"), "~" is ~0, " " is %20; and the empty key.
		remote("oddKeys", "j", pos("m61/j1aj2éj1~j1 j0j", `,"name":"x/y"`)+","+pos("j", `,"name":"%"`)+","+pos("m21Aj1!j", ``), ``),
		// Empty keys, which add no segment to a location: faults of two
		// nodes can then share one (here "/_1/0": the array under "" and
		// the key "0"), and a top-level one ranks by what follows it.
		remote("emptyKeys", "j", pos("m30m21xj0aj1aaj10j", ``)+","+
			`{"kind":"grp","schema":"m20aj1bj","type":"E","group_opt":null,"desc":[],"entries":[
			{"key":"","arg":{"kind":"opt","long":"e","default":"[1]","desc":[]}},
			{"key":"b","arg":{"kind":"opt","long":"b","desc":[]}}]}`, ``),
	))
	if len(excl) != 0 {
		t.Fatalf("shape tools excluded: %v", excl)
	}
	return tools
}

// oracleTools are the tools the walker is compared with jsonschema on.
func oracleTools(t testing.TB) []*Tool {
	return append(append(fuzzTools(t), arrayTools(t)...), shapeTools(t)...)
}

// checkAgainstOracle runs fullPositional and its jsonschema twin on the same
// arguments and fails unless they give the same error, or the same call.
// It returns the error text ("" when accepted).
func checkAgainstOracle(t testing.TB, tool *Tool, args []byte) string {
	t.Helper()
	got, gerr := tool.fullPositional(args)
	want, werr := oracleFullPositional(tool, args)
	for try := 0; sameOutcome(got, gerr, want, werr) != nil; try++ {
		// jsonschema takes an object's properties, and lists its strangers,
		// in map order: where empty keys make faults of two nodes share a
		// location, its message varies from run to run, and the walker's
		// must be one of them. Elsewhere it never varies.
		if try == 200 {
			t.Fatalf("%s %s: %v", tool.Name, args, sameOutcome(got, gerr, want, werr))
		}
		want, werr = oracleFullPositional(tool, args)
	}
	if gerr != nil {
		return gerr.Error()
	}
	return ""
}

// sameOutcome says how two results of fullPositional differ, if they do.
func sameOutcome(got Call, gerr error, want Call, werr error) error {
	if (gerr == nil) != (werr == nil) {
		return fmt.Errorf("\n got %v\nwant %v", gerr, werr)
	}
	if gerr != nil {
		var ga, wa *ArgError
		gArg, wArg := errors.As(gerr, &ga), errors.As(werr, &wa)
		switch {
		case gArg != wArg:
			return fmt.Errorf("\n got %#v\nwant %#v", gerr, werr)
		case gArg && *ga != *wa:
			return fmt.Errorf("\n got %#v\nwant %#v", *ga, *wa)
		case !gArg && !(strings.Contains(gerr.Error(), "compiling its input schema") && strings.Contains(werr.Error(), "compiling its input schema")):
			// Not an argument's fault: both must refuse the schema itself
			// (in their own words).
			return fmt.Errorf("\n got %v\nwant %v", gerr, werr)
		}
		return nil
	}
	if got.Command != want.Command || len(got.Args) != len(want.Args) || got.Ret != want.Ret { // one Ret per command
		return fmt.Errorf("call %+v, want %+v", got, want)
	}
	for i := range got.Args {
		if !bytes.Equal(got.Args[i], want.Args[i]) {
			return fmt.Errorf("argument %d is %s, want %s", i, got.Args[i], want.Args[i])
		}
	}
	return nil
}

// FuzzValidateAgainstJSONSchema: the walker of validate.go rejects exactly
// what jsonschema rejects, with the same message, and the calls it accepts
// are the same. Each input is tried twice: as the arguments themselves, and
// as the choices of a generator that writes arguments near the tool's types
// (most raw mutations are not JSON at all).
func FuzzValidateAgainstJSONSchema(f *testing.F) {
	tools := oracleTools(f)
	for i, s := range fastSeeds {
		f.Add(uint8(i), []byte(s))
	}
	for which := range tools {
		f.Add(uint8(which), []byte{})
		f.Add(uint8(which), []byte{7, 7, 7, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		tool := tools[int(which)%len(tools)]
		checkAgainstOracle(t, tool, data)
		checkAgainstOracle(t, tool, genArguments(tool, data))
	})
}

// TestValidateAgainstJSONSchema is the fuzz target's comparison over
// generated arguments, for every go test run. It also checks that the
// generator reaches each kind of message, so that the comparison is not
// vacuous.
func TestValidateAgainstJSONSchema(t *testing.T) {
	rounds := 400
	if testing.Short() {
		rounds = 50
	}
	rng := rand.New(rand.NewSource(9))
	seen := map[string]int{}
	for _, tool := range oracleTools(t) {
		for range rounds {
			data := make([]byte, rng.Intn(64))
			rng.Read(data)
			args := genArguments(tool, data)
			msg := checkAgainstOracle(t, tool, args)
			kind := "accepted"
			if msg == "" {
				if call, _ := tool.fullPositional(args); len(call.Arrays) > 0 {
					kind = "accepted with NaN" // or an infinity, where a Real is declared
				}
			}
			for _, k := range []string{"missing required", "unexpected argument", "exactly", "expected one of", `or one of "NaN"`, "out of range", "duplicate map key", "expected an integer from", "expected"} {
				if strings.Contains(msg, k) {
					kind = k
					break
				}
			}
			seen[kind]++
		}
	}
	for _, k := range []string{"accepted", "accepted with NaN", "missing required", "unexpected argument", "exactly", "expected one of", `or one of "NaN"`, "out of range", "duplicate map key", "expected an integer from", "expected"} {
		if seen[k] == 0 {
			t.Errorf("no generated call gave %q (%v)", k, seen)
		}
	}
}

// The rules jsonschema follows that a walker could easily get wrong, each
// checked against the oracle as well as against the message expected.
func TestFaultOrder(t *testing.T) {
	byName := map[string]*Tool{}
	for _, tl := range oracleTools(t) {
		byName[tl.Name] = tl
	}
	cases := []struct{ name, tool, args, want string }{
		{"locations compare as text: [10] before [9]", "ints", `{"_1":[0,1,2,3,4,5,6,7,8,"i","j"]}`,
			"argument '_1[10]' of 'ints': expected integer, got string"},
		{"a key with / compares as ~1, after a", "oddKeys", `{"x/y":{"/":"s","a":"s","é":1,"~":1," ":1,"":1},"%":1,"_3":{"A":1,"!":1}}`,
			"argument 'x/y.a' of 'oddKeys': expected integer, got string"},
		{"a key with é compares as %C3%A9, before A", "oddKeys", `{"x/y":{"/":1,"a":1,"é":"s","~":1," ":1,"":1},"%":1,"_3":{"A":"s","!":1}}`,
			"argument 'x/y.é' of 'oddKeys': expected integer, got string"},
		{"the empty key", "oddKeys", `{"x/y":{"/":1,"a":1,"é":1,"~":1," ":1,"":"s"},"%":1,"_3":{"A":1,"!":1}}`,
			"argument 'x/y' of 'oddKeys': expected integer, got object"}, // jsonschema writes no segment for it
		{"under an empty key, the value named is the one the location reaches", "emptyKeys", `{"_1":{"":{"x":1,"":["s"]},"a":[],"0":1},"b":1}`,
			"argument '_1.0' of 'emptyKeys': expected integer, got integer"},
		{"a top-level empty key reaches the arguments object", "emptyKeys", `{"_1":{"":{"x":1,"":[]},"a":[],"0":1},"":"s","b":1}`,
			"argument '' of 'emptyKeys': expected array, got object"},
		{"a stranger before a missing field before a wrong type, in one argument", "records", `{"_1":{"a":"s","b":{"x":"s","z":1}}}`,
			"unexpected argument '_1.b.z' of 'records' (expected: x, y)"},
		{"a missing field before a deeper wrong type", "records", `{"_1":{"a":1,"b":{"x":1}}}`,
			"missing required argument '_1.c' of 'records'"},
		{"the arguments object first", "records", `{"_2":{"x":[true]},"zz":1}`,
			"unexpected argument 'zz' of 'records' (expected: _1, _2)"},
		{"a wrong type stops the node's other keywords", "tuples", `{"_1":{"q":1},"_2":[[1,2],[1]],"_3":["a"]}`,
			"argument '_1' of 'tuples': expected array, got object"},
		{"a tuple's count before its items", "tuples", `{"_1":[1,null],"_2":[[1,2],[]],"_3":null}`,
			"argument '_1' of 'tuples': expected an array of exactly 3 items, got 2"},
		{"integral numbers are integers", "records", `{"_1":{"a":1e3,"b":{"x":"s"},"c":["s",2.0]},"_2":{"x":[1.5]}}`, ""},
		{"a back-reference is its declaration's type", "recursive", `{"_1":{"data":1,"kids":[{"data":2,"kids":["x"]}]},"_2":{"head":1,"tail":5}}`,
			"argument '_1.kids[0].kids[0]' of 'recursive': expected object, got string"},
		{"an optional back-reference takes null or its declaration's type", "recursive", `{"_1":{"data":1,"kids":[]},"_2":{"head":1,"tail":5}}`,
			"argument '_2.tail' of 'recursive': expected object or null, got integer"},
		{"an optional back-reference's fault inside", "recursive", `{"_1":{"data":1,"kids":[]},"_2":{"head":1,"tail":{"head":1,"tail":{"head":"x"}}}}`,
			"argument '_2.tail.tail.head' of 'recursive': expected integer, got string"},
		{"an optional back-reference's missing field", "recursive", `{"_1":{"data":1,"kids":[]},"_2":{"head":1,"tail":{"tail":null}}}`,
			"missing required argument '_2.tail.head' of 'recursive'"},
		{"a back-reference's contents are validated", "recursive", `{"_1":{"data":1,"kids":[{"data":"x","kids":[]}]},"_2":{"head":1}}`,
			"argument '_1.kids[0].data' of 'recursive': expected integer, got string"},
		{"recursion through a tuple", "recursion", `{"_1":[1,[2,[3,{}]]],"_2":{"next":[]},"_3":{"b":[[],[]]}}`,
			"argument '_1[1][1][1]' of 'recursion': expected array or null, got object"},
		{"recursion through a tuple: its count", "recursion", `{"_1":[1,[2,[3]]],"_2":{"next":[]},"_3":{"b":[[],[]]}}`,
			"argument '_1[1][1]' of 'recursion': expected an array of exactly 2 items, got 1"},
		{"two declarations of one name", "recursion", `{"_1":[1,null],"_2":{"next":[{"next":[[1,null]]}]},"_3":{"b":[[],[]]}}`,
			"argument '_2.next[0].next[0]' of 'recursion': expected object, got array"},
		{"a declaration inside another", "recursion", `{"_1":[1,null],"_2":{"next":[]},"_3":{"b":[[{"b":[[],[[[],{}]]]}],[]]}}`,
			"argument '_3.b[0][0].b[1][0][1]' of 'recursion': expected array, got object"},
		{"a recursive whole group", "recursion", `{"_1":[1,null],"_2":{"next":[]},"_3":{"b":[[],[]]},"node":{"b":1,"c":[{"a":1,"b":2}]}}`,
			"missing required argument 'node.c[0].c' of 'recursion'"},
		{"a fixed-length list's count", "fixed", `{"_1":[1,2,3],"_2":[[1,2,3],[4,5,6]],"_4":[{"x":true},null,null],"_5":[]}`,
			"argument '_1' of 'fixed': expected an array of exactly 2 items, got 3"},
		{"a fixed-length list's count before its items", "fixed", `{"_1":[1,2],"_2":[[1,2,"x"]],"_4":[null,null,null],"_5":[]}`,
			"argument '_2' of 'fixed': expected an array of exactly 2 items, got 1"},
		{"a fixed-length list inside another", "fixed", `{"_1":[1,2],"_2":[[1,2,3],[4,5]],"_4":[null,null,null],"_5":[]}`,
			"argument '_2[1]' of 'fixed': expected an array of exactly 3 items, got 2"},
		{"a fixed-length Map", "fixed", `{"_1":[1,2],"_2":[[1,2,3],[4,5,6]],"_4":[null,null,null],"_5":[["a",1]]}`,
			"argument '_5' of 'fixed': expected an array of exactly 2 items, got 1"},
		{"fixed-length lists of their lengths", "fixed", `{"_1":[1,2],"_2":[[1,2,3],[4,5,6]],"_3":null,"_4":[null,{"x":false},null],"pair":[-128,127],"_5":[["a",1],["b",2]]}`, ""},
		{"* takes anything", "unknown", `{"_1":{"a":[1,"x"]},"_2":[null,1,"s",[]],"_3":null,"_4":{"x":[{}],"y":1},"_5":[1,"x"]}`, ""},
		{"* still counts", "unknown", `{"_1":1,"_2":[],"_4":{"x":1,"y":1},"_5":[1]}`,
			"argument '_5' of 'unknown': expected an array of exactly 2 items, got 1"},
		{"a * field is still required", "unknown", `{"_1":1,"_2":[],"_4":{"y":1},"_5":[1,2]}`,
			"missing required argument '_4.x' of 'unknown'"},
		{"a whole group may leave out fields with defaults", "wholeGroup", `{"whole":{"b":2},"_1":1}`, ""},
		{"a whole group needs the others", "wholeGroup", `{"whole":{"a":2},"_1":1}`, "missing required argument 'whole.b' of 'wholeGroup'"},
		{"a render name", "render", `{"_1":1,"_render":"sideways"}`, `argument '_render' of 'render': expected one of "raw", "up", "down", got "sideways"`},
		{"the empty tuple's schema is refused", "emptyTuple", `{"_1":[],"x":1}`,
			"tool 'emptyTuple': compiling its input schema: property \"_1\": prefixItems is empty"},
		{"a sized integer's range", "sizes", `{"_1":256,"_2":1,"_3":[],"_4":1}`,
			"argument '_1' of 'sizes': expected an integer from 0 to 255 (u1), got 256"},
		{"a range in a list, written 7e4", "sizes", `{"_1":1,"_2":1,"_3":[1,7e4],"_4":1}`,
			"argument '_3[1]' of 'sizes': expected an integer from 0 to 65535 (u2), got 70000"},
		{"below i8", "sizes", `{"_1":0,"_2":-9223372036854775809,"_3":[],"_4":1}`,
			"argument '_2' of 'sizes': expected an integer from -9223372036854775808 to 9223372036854775807 (i8), got -9223372036854775809"},
		{"the type before the range", "sizes", `{"_1":256.5,"_2":1,"_3":[],"_4":1}`,
			"argument '_1' of 'sizes': expected integer, got number"},
		{"the ends of a range are in it", "sizes", `{"_1":255,"_2":9223372036854775807,"_3":[0,65535],"_4":1}`, ""},
		{"a range under $defs", "recursive", `{"_1":{"data":1,"kids":[{"data":200,"kids":[]}]},"_2":{"head":1}}`,
			"argument '_1.kids[0].data' of 'recursive': expected an integer from -128 to 127 (i1), got 200"},
		{"an option's range", "options", `{"n":-129}`,
			"argument 'n' of 'options': expected an integer from -128 to 127 (i1), got -129"},
		{"morloc 0.69's Int is 32 bits", "v069", `{"_1":2147483648,"_2":[],"_3":{"nwords":1,"longest":"a"},"_5":[]}`,
			"argument '_1' of 'v069': expected an integer from -2147483648 to 2147483647 (i4), got 2147483648"},
		{"in a hinted list", "v069", `{"_1":1,"_2":[1,-2147483649],"_3":{"nwords":1,"longest":"a"},"_5":[]}`,
			"argument '_2[1]' of 'v069': expected an integer from -2147483648 to 2147483647 (i4), got -2147483649"},
		{"in a hinted record", "v069", `{"_1":1,"_2":[],"_3":{"nwords":1e10,"longest":"a"},"_5":[]}`,
			"argument '_3.nwords' of 'v069': expected an integer from -2147483648 to 2147483647 (i4), got 10000000000"},
		{"in an optional", "v069", `{"_1":1,"_2":[],"_3":{"nwords":1,"longest":"a"},"_4":4294967296,"_5":[]}`,
			"argument '_4' of 'v069': expected an integer from -2147483648 to 2147483647 (i4), got 4294967296"},
		{"in a Map's values", "v069", `{"_1":1,"_2":[],"_3":{"nwords":1,"longest":"a"},"_5":[["a",1],["b",2147483648]]}`,
			"argument '_5[1][1]' of 'v069': expected an integer from -2147483648 to 2147483647 (i4), got 2147483648"},
		{"0.69's types in range", "v069", `{"_1":-2147483648,"_2":[2147483647],"_3":{"nwords":0,"longest":""},"_4":null,"_5":[["a",1]]}`, ""},
		{"a render name that is not a string", "render", `{"_1":1,"_render":["up"]}`, `argument '_render' of 'render': expected string, got array`},
		// A Real's validation schema, anyOf a number and the strings for
		// NaN and the infinities: one fault, its type's.
		{"a Real: NaN and the infinities", "options", `{"x":"NaN"}`, ""},
		{"a Real: NaN spelt otherwise", "options", `{"x":"nan"}`,
			`argument 'x' of 'options': expected number or one of "NaN", "Infinity", "-Infinity", got string "nan"`},
		{"a Real in an optional list of lists", "optlists", `{"_1":null,"_2":[],"_3":null,"grid":[["Infinity",1],[null]]}`,
			`argument 'grid[1][0]' of 'optlists': expected number or one of "NaN", "Infinity", "-Infinity", got null`},
		{"a Real in an optional record", "records", `{"_1":{"a":1,"b":{"x":"s"},"c":["s",1]},"_2":{"x":[1,"-Infinity",{}]}}`,
			`argument '_2.x[2]' of 'records': expected number or one of "NaN", "Infinity", "-Infinity", got object`},
		{"an optional Real", "sized", `{"_1":1,"_2":2,"_3":false}`,
			`argument '_3' of 'sized': expected number or null or one of "NaN", "Infinity", "-Infinity", got boolean`},
		{"a Real in a Map", "nested", `{"_1":[{"id":"a","m":[["x","NaN"],["y","Inf"]]}],"_2":[true,null,"s"]}`,
			`argument '_1[0].m[1][1]' of 'nested': expected number or null or one of "NaN", "Infinity", "-Infinity", got string "Inf"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := byName[c.tool]
			if got := checkAgainstOracle(t, tl, []byte(c.args)); got != c.want {
				t.Errorf("%s\n got %q\nwant %q", c.args, got, c.want)
			}
		})
	}
}

// readSchema takes only the keywords nexus writes: a new one must be taught
// to the walker before it can be validated.
func TestReadSchemaRefusesUnknownKeywords(t *testing.T) {
	for _, doc := range []Object{
		{{"type", "string"}, {"pattern", "^a"}},
		{{"type", "array"}, {"minItems", 1}},
		{{"type", "object"}, {"properties", Object{{"x", Object{{"type", "text"}}}}}},
		{{"enum", []any{1}}},
		{{"$ref", "#/$defs/A"}},                                           // nothing defines A
		{{"$ref", "#/definitions/A"}, {"$defs", Object{{"A", Object{}}}}}, // not to $defs
		{{"type", "array"}, {"items", Object{{"$defs", Object{}}}}},       // $defs below the root
		{{"anyOf", []any{Object{{"type", "string"}}, Object{{"type", "integer"}}}}},
		{{"anyOf", []any{Object{{"type", "null"}}, Object{{"type", "string"}}}}}, // null not second
		{{"anyOf", []any{Object{{"type", "string"}}}}},
		// A Real's anyOf holds a type alone beside its enum, and no type
		// beside it.
		{{"anyOf", []any{Object{{"type", "number"}, {"minItems", 1}}, Object{{"enum", []any{"NaN", "Infinity", "-Infinity"}}}}}},
		{{"anyOf", []any{Object{}, Object{{"enum", []any{"NaN", "Infinity", "-Infinity"}}}}}},
		{{"type", "number"}, {"anyOf", []any{Object{{"type", "number"}}, Object{{"enum", []any{"NaN", "Infinity", "-Infinity"}}}}}},
		{{"anyOf", []any{Object{{"type", "number"}}, Object{{"enum", []any{"NaN", "Infinity"}}}}}},
		// A $ref that comes back to itself with no value between.
		{{"$ref", "#/$defs/A"}, {"$defs", Object{{"A", Object{{"$ref", "#/$defs/B"}}}, {"B", Object{{"anyOf", []any{Object{{"$ref", "#/$defs/A"}}, Object{{"type", "null"}}}}}}}}},
		{{"type", "array"}, {"minItems", 1}, {"maxItems", 2}},
	} {
		if _, err := readSchema(doc); err == nil {
			b, _ := doc.MarshalJSON()
			t.Errorf("readSchema(%s) accepted it", b)
		}
	}
	n, err := readSchema(Object{{"type", []any{"integer", "null"}}, {"description", "d"}, {"default", 1}})
	if err != nil || len(n.types) != 2 {
		t.Errorf("readSchema of a type list with annotations: %+v, %v", n, err)
	}
}

// entropy hands out a fuzz input's bytes as choices; past its end every
// choice is 0, which the generator reads as "fit the type", so that
// generation always ends.
type entropy struct {
	b []byte
	i int
}

func (e *entropy) n(k int) int {
	if e.i >= len(e.b) {
		return 0
	}
	e.i++
	return int(e.b[e.i-1]) % k
}

var (
	genNumbers = []string{"0", "1", "-1", "7", "2.0", "1e3", "1.5", "-0", "1E2", "2.50", "1e-2", "-0.0", "128", "-129", "255", "256",
		"65536", "-32769", "4294967296", "9223372036854775808", "18446744073709551616", "-1.0e1", "1e1000", "1.5e-3",
		"0.0001e4", "123456789012345678901234567890", "1e1001", "10E-1", "1e-9999999"}
	genStrings = []string{"x", "", "raw", "up", "a/b", "~", "~1", "%", "é", " ", "_1", "10", "9", "tmpDir", "data", "kids", "a", "/", "NaN"}
	// genNonFinite are strings where a Real is declared: the three the
	// schema admits, and spellings it does not.
	genNonFinite = []string{"NaN", "Infinity", "-Infinity", "nan", "inf", "-Inf", "NaN "}
)

// argGen writes a value near a type: fitting it unless a choice says
// otherwise (a stray value, an element too many, a field left out or added).
type argGen struct {
	e     *entropy
	scope []*manifest.Type
}

// genArguments writes the arguments object of a tool from a fuzz input.
func genArguments(tool *Tool, data []byte) []byte {
	g := &argGen{e: &entropy{b: data}}
	args := map[string]any{}
	pv, _ := tool.InputSchema.Get("properties")
	for _, m := range pv.(Object) {
		if m.Key == "_render" {
			switch g.e.n(5) {
			case 1:
				args["_render"] = "raw"
			case 2:
				enum, _ := m.Value.(Object).Get("enum")
				args["_render"] = enum.([]any)[1]
			case 3:
				args["_render"] = "sideways"
			case 4:
				args["_render"] = g.any(0)
			}
			continue
		}
		if g.e.n(4) == 3 {
			continue
		}
		target := tool.props[m.Key]
		var ty *manifest.Type
		switch {
		case target.whole:
			ty = target.slot.arg.T
		case target.field != nil:
			ty = target.field.t
		default:
			ty = argType(target.slot.arg)
		}
		args[m.Key] = g.value(ty, 0)
	}
	for g.e.n(6) == 5 {
		args[genStrings[g.e.n(len(genStrings))]] = g.any(0)
	}
	var b bytes.Buffer
	if err := writeJSON(&b, args); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func (g *argGen) value(t *manifest.Type, depth int) any {
	if g.e.n(10) == 9 {
		return g.any(depth)
	}
	switch t.Kind {
	case manifest.Nil:
		return nil
	case manifest.Bool:
		return g.e.n(2) == 1
	case manifest.Float:
		// Mostly a number; else NaN or an infinity, spelt as the schema
		// says or otherwise.
		if k := g.e.n(len(genNumbers) + len(genNonFinite)); k >= len(genNumbers) {
			return genNonFinite[k-len(genNumbers)]
		}
		return json.Number(genNumbers[g.e.n(len(genNumbers))])
	case manifest.Int:
		return json.Number(genNumbers[g.e.n(len(genNumbers))])
	case manifest.Str:
		return genStrings[g.e.n(len(genStrings))]
	case manifest.List:
		n := g.e.n(4)
		if t.Len > 0 { // mostly its length, else one more or one fewer
			n = t.Len + []int{0, 0, 0, 0, 1, -1}[g.e.n(6)]
		} else if g.e.n(8) == 7 {
			n = 9 + g.e.n(4) // indices past 9, which sort before 9 as text
		}
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(t.Elem, depth+1)
		}
		return out
	case manifest.Tuple:
		n := len(t.Items)
		switch g.e.n(6) {
		case 4:
			n--
		case 5:
			n++
		}
		out := make([]any, max(n, 0))
		for i := range out {
			if i < len(t.Items) {
				out[i] = g.value(t.Items[i], depth+1)
			} else {
				out[i] = g.any(depth + 1)
			}
		}
		return out
	case manifest.Record:
		out := map[string]any{}
		for _, f := range t.Fields {
			if g.e.n(5) != 4 {
				out[f.Key] = g.value(f.Type, depth+1)
			}
		}
		for g.e.n(5) == 4 {
			out[genStrings[g.e.n(len(genStrings))]] = g.any(depth + 1)
		}
		return out
	case manifest.Optional:
		if g.e.n(3) == 2 {
			return nil
		}
		return g.value(t.Elem, depth)
	case manifest.Recursive:
		g.scope = append(g.scope, t)
		v := g.value(t.Elem, depth)
		g.scope = g.scope[:len(g.scope)-1]
		return v
	case manifest.BackRef:
		if depth < 8 {
			for k := len(g.scope) - 1; k >= 0; k-- {
				if g.scope[k].Name == t.Name {
					return g.value(g.scope[k], depth+1)
				}
			}
		}
		return map[string]any{}
	case manifest.Any:
		return g.any(depth)
	}
	return g.any(depth)
}

// any writes a value of any JSON type.
func (g *argGen) any(depth int) any {
	switch g.e.n(7) {
	case 1:
		return g.e.n(2) == 1
	case 2, 3:
		return json.Number(genNumbers[g.e.n(len(genNumbers))])
	case 4:
		return genStrings[g.e.n(len(genStrings))]
	case 5:
		if depth < 8 {
			out := make([]any, g.e.n(4))
			for i := range out {
				out[i] = g.any(depth + 1)
			}
			return out
		}
	case 6:
		if depth < 8 {
			out := map[string]any{}
			for range g.e.n(4) {
				out[genStrings[g.e.n(len(genStrings))]] = g.any(depth + 1)
			}
			return out
		}
	}
	return nil
}
