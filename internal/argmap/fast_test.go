package argmap

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/jsontext/jsontexttest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// arrayTools are tools with numeric nests in every place an array can go.
func arrayTools(t testing.TB) []*Tool {
	tools, excl := Tools(manifestOf(t,
		remote("ints", "aj", pos("aj", ``), ``),
		remote("matrix", "aaf8", pos("aaf8", ``)+","+pos("ai4", ``), ``),
		remote("cube", "aaaj", pos("aaaj", ``)+","+pos("au8", ``)+","+pos("ai1", ``), ``),
		remote("table", "j", pos("m31xaf81ys1zaaj", ``)+","+pos("am11vaf8", ``)+","+pos("<dict>at2saj", ``), ``),
		remote("maybe", "j", pos("a?j", ``)+","+pos("?aj", ``), ``),
		remote("fixedMatrix", "a:2a:3f8", pos("a:2a:3f8", ``)+","+pos("a:4j", ``)+","+pos("aa:2i4", ``)+","+pos("a:2aj", ``), ``),
	))
	if len(excl) != 0 {
		t.Fatalf("array tools excluded: %v", excl)
	}
	return tools
}

var fastSeeds = []string{
	`{}`, `null`, ``, `[]`, `{"_1":[1,2,3]}`, `{"_1":[1,2.0,3e0]}`, `{"_1":[[1.5,2],[3,4]],"_2":[1,-2147483648]}`,
	`{"_1":[[[1]],[[2]]],"_2":[18446744073709551615],"_3":[-128,127]}`, `{"_1":[[1],[2,3]]}`,
	`{"_1":{"x":[0.1,1e-7,1e21],"y":"s","z":[[1,2],[3,4]]},"_2":[{"v":[1,2]},{"v":[]}],"_3":[["a",[1,2]],["b",[]]]}`,
	`{"_1":[1,null,3],"_2":null}`, `{"_1":[9223372036854775807,-9223372036854775808]}`, `{"_1":[9223372036854775808]}`,
	`{"_1":[1e400]}`, `{"_1":[[],[]]}`, `{"_1" : [ 1 , 2 ] }`, `{"\u005f1":[1]}`, `{"_1":[1],"_1":[2]}`,
	`{"_1":["a"]}`, `{"sysconfig":{"numThreads":2}}`, `{"tmpDir":"\u00e9\n","numThreads":3,"removeCaches":true}`,
	`{"_1":[["a",1],["a",2]]}`, `{"_1":-128,"_2":18446744073709551615}`, `{"who":"x","_2":[[["k",true]]],"_render":"up"}`,
	`{"_1":{"data":1,"kids":[{"data":2,"kids":[]}]}}`, `{"_1":[{"id":"a","m":[["x",1.5]]}],"_2":[true,null,"s"]}`,
	`{"_1":[[1,2,3],[4,5,6]],"_2":[1,2,3,4],"_3":[[1,2],[3,4]],"_4":[[1],[2,3]]}`, `{"_1":[[1,2,3],[4,5]],"_2":[1,2,3],"_3":[[1,2,3]],"_4":[[]]}`,
	`{"_1":[1,2],"_2":[[1,2,3],[4,5,6]],"_3":[null,{"x":true},null],"_4":[["k",1]]}`, `{"_1":[1,[2,[3,null]]],"_2":{"b":[[],[]]}}`,
	// NaN and the infinities where a Real is declared.
	`{"_1":[["NaN",2],[3,"-Infinity"]],"_2":[1,2]}`, `{"_1":{"x":[0.5,"Infinity"],"y":"s","z":[]},"_2":[{"v":["NaN"]}],"_3":[["a",["-Infinity",1]]]}`,
	`{"_1":[["N\u0061N"]],"_2":[1]}`, `{"_1":[["nan"]],"_2":[1]}`, `{"_1":["NaN"]}`, `{"_1":[["NaN"]],"_2":["NaN"]}`,
	`{"_1":[{"id":"a","m":[["x","NaN"]]}],"_2":[true,null,"s"]}`, `{"_3":"Infinity","_1":1,"_2":2}`, `{"x":"-Infinity"}`,
	`{"_1":[[1,2,3],[4,"NaN",6]],"_2":[1,2,3,4],"_3":[[1,2],[3,4]],"_4":[[1],[2,3]]}`,
}

// FuzzFastPositional: the fast path accepts only what the full path
// accepts, and sends the same call: the same bytes when it makes no
// arrays, the same values when it does.
func FuzzFastPositional(f *testing.F) {
	tools := append(fuzzTools(f), arrayTools(f)...)
	for i, s := range fastSeeds {
		for which := range tools {
			f.Add(uint8(which), i%2 == 0, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, arrays bool, args []byte) {
		tool := tools[int(which)%len(tools)]
		checkFastAgainstFull(t, tool, arrays, args)
	})
}

func checkFastAgainstFull(t *testing.T, tool *Tool, arrays bool, args []byte) {
	t.Helper()
	tool.ArrayMin = 0
	if arrays {
		tool.ArrayMin = 1
	}
	defer func() { tool.ArrayMin = DefaultArrayMin }()
	fast, ok := tool.fastPositional(args)
	if !ok {
		return // the full path decides
	}
	full, err := tool.fullPositional(args)
	if err != nil {
		t.Fatalf("%s %q: the fast path accepted what the full path rejects: %v", tool.Name, args, err)
	}
	if fast.Command != full.Command {
		t.Fatalf("%s %q: fast calls %s, full calls %s", tool.Name, args, fast.Command.Name, full.Command.Name)
	}
	if fast.Ret != full.Ret { // one per command, shared
		t.Fatalf("%s %q: ret %+v vs %+v", tool.Name, args, fast.Ret, full.Ret)
	}
	// Both may move NaN and the infinities into rank-0 arrays, whatever
	// ArrayMin; only the fast path makes arrays of lists. Compared with
	// their arrays written back in place.
	place := func(call Call) []json.RawMessage {
		got := append([]json.RawMessage(nil), call.Args...)
		for _, a := range call.Arrays {
			if len(a.Shape) == 0 { // one number: a NaN or an infinity
				if f := math.Float64frombits(binary.LittleEndian.Uint64(a.Data)); a.DType != ndarray.F8 || len(a.Data) != 8 || !math.IsNaN(f) && !math.IsInf(f, 0) {
					t.Fatalf("%s %q: rank-0 array %+v", tool.Name, args, a)
				}
			} else if err := a.Check(); err != nil {
				t.Fatalf("%s %q: %v", tool.Name, args, err)
			} else if !arrays {
				t.Fatalf("%s %q: arrays without ArrayMin", tool.Name, args)
			}
			text, err := ndarray.AppendPoolJSON(nil, &a)
			if err != nil {
				t.Fatal(err)
			}
			idx := a.Path[0].(int)
			placed, err := ndarray.Place(got[idx], a.Path[1:], text)
			if err != nil {
				t.Fatalf("%s %q: placing %v: %v", tool.Name, args, a.Path, err)
			}
			got[idx] = placed
		}
		return got
	}
	got, want := place(fast), place(full)
	if len(got) != len(want) {
		t.Fatalf("%s %q: %d values, full has %d", tool.Name, args, len(got), len(want))
	}
	for i := range got {
		if len(fast.Arrays) == 0 && len(full.Arrays) == 0 {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s %q: argument %d is %s, the full path sends %s", tool.Name, args, i, got[i], want[i])
			}
			continue
		}
		if !sameValue(t, got[i], want[i]) {
			t.Fatalf("%s %q: argument %d is %s, the full path sends %s", tool.Name, args, i, got[i], want[i])
		}
	}
}

// sameValue compares two JSON values, numbers by value (a Real array
// written back from its doubles may spell a number differently).
func sameValue(t *testing.T, a, b []byte) bool {
	return jsontexttest.Same(jsontexttest.Decode(t, a), jsontexttest.Decode(t, b), func(x, y json.Number) bool {
		if x == y {
			return true
		}
		// Integers by value: an i8 array writes -0 back as 0.
		xi, okx := new(big.Int).SetString(string(x), 10)
		yi, oky := new(big.Int).SetString(string(y), 10)
		if okx && oky {
			return xi.Cmp(yi) == 0
		}
		xf, err1 := strconv.ParseFloat(string(x), 64)
		yf, err2 := strconv.ParseFloat(string(y), 64)
		return err1 == nil && err2 == nil && xf == yf && strings.ContainsAny(string(x)+string(y), ".eE")
	})
}

// The fast path takes the calls clients really make; a change that made it
// decline them would slow every call without failing any other test.
func TestFastPathTakesOrdinaryCalls(t *testing.T) {
	tools := append(fuzzTools(t), arrayTools(t)...)
	byName := map[string]*Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	cases := []struct {
		tool, args string
		arrays     int
	}{
		{"ints", `{"_1":[1,2,3]}`, 1},
		{"ints", `{"_1":[]}`, 0}, // an empty list is cheaper as JSON
		{"matrix", `{"_1":[[1.5,2],[3,4]],"_2":[1,2]}`, 2},
		{"table", `{"_1":{"x":[0.5],"y":"s","z":[[1]]},"_2":[{"v":[1]}],"_3":[["a",[1]]]}`, 4},
		{"maybe", `{"_1":[1,null],"_2":[1,2]}`, 1},
		{"sized", `{"_1":-128,"_2":18446744073709551615,"_3":null}`, 0},
		{"tree", `{"_1":{"data":1,"kids":[{"data":2,"kids":[]}]}}`, 0},
		{"opts", `{"list":[1],"on":false,"tmpDir":"/t","numThreads":2}`, 1},
		{"named", `{"who":"x","_2":[["k",true]],"_render":"up"}`, 0},
		{"fixedMatrix", `{"_1":[[1,2,3],[4,5,6]],"_2":[1,2,3,4],"_3":[[1,2],[3,4]],"_4":[[1],[2,3]]}`, 5}, // _4 is ragged: two arrays
		{"fixedMatrix", `{"_1":[[1,2,3],[4,5,6]],"_2":[1,2,3,4],"_3":[],"_4":[[],[]]}`, 2},
		{"fixedList", `{"_1":[1,2],"_2":[[1,2,3],[4,5,6]],"_3":[null,{"x":true},null]}`, 2},
		{"chain", `{"_1":[1,[2,[3,null]]],"_2":{"b":[[{"b":[[],[]]}],[[[],[]]]]}}`, 0},
		// NaN and the infinities: inside an f8 array, or each a rank-0 array.
		{"matrix", `{"_1":[["NaN",2],[3,"-Infinity"]],"_2":[1,2]}`, 2},
		{"sized", `{"_1":1,"_2":2,"_3":"Infinity"}`, 1},
		{"nested", `{"_1":[{"id":"a","m":[["x","NaN"],["y",1]]}],"_2":[true,null,"s"]}`, 1},
	}
	for _, c := range cases {
		tl := byName[c.tool]
		tl.ArrayMin = 1
		call, ok := tl.fastPositional([]byte(c.args))
		tl.ArrayMin = DefaultArrayMin
		if !ok {
			t.Errorf("%s %s: the fast path declined", c.tool, c.args)
			continue
		}
		if len(call.Arrays) != c.arrays {
			t.Errorf("%s %s: %d arrays, want %d", c.tool, c.args, len(call.Arrays), c.arrays)
		}
		checkFastAgainstFull(t, tl, true, []byte(c.args))
		checkFastAgainstFull(t, tl, false, []byte(c.args))
	}
}

// A fixed-length list of another length, and `*`, are left to the full
// path, with and without arrays.
func TestFastPathDeclines(t *testing.T) {
	tools := append(fuzzTools(t), arrayTools(t)...)
	byName := map[string]*Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	for _, c := range []struct{ tool, args string }{
		{"fixedMatrix", `{"_1":[[1,2,3],[4,5,6],[7,8,9]],"_2":[1,2,3,4],"_3":[],"_4":[[],[]]}`},
		{"fixedMatrix", `{"_1":[[1,2,3],[4,5]],"_2":[1,2,3,4],"_3":[],"_4":[[],[]]}`},
		{"fixedMatrix", `{"_1":[[1,2,3],[4,5,6]],"_2":[1,2,3],"_3":[],"_4":[[],[]]}`},
		{"fixedMatrix", `{"_1":[[1,2,3],[4,5,6]],"_2":[1,2,3,4],"_3":[[1,2,3]],"_4":[[],[]]}`},
		{"fixedMatrix", `{"_1":[[1,2,3],[4,5,6]],"_2":[1,2,3,4],"_3":[],"_4":[[]]}`},
		{"fixedList", `{"_1":[1,2],"_2":[[1,2,3],[4,5,6]],"_3":[null,null],"_4":[["k",1]]}`},
		{"fixedList", `{"_1":[1,2],"_2":[[1,2,3],[4,5,6]],"_3":[null,null,null],"_4":[["k",1]]}`}, // a Map of fixed size
		{"star", `{"_1":1,"_2":[1,2]}`},
		{"sized", `{"_1":1,"_2":2,"_3":"N\u0061N"}`}, // escaped: the full path reads it
		{"sized", `{"_1":1,"_2":2,"_3":"nan"}`},      // not the schema's: the full path says so
		{"matrix", `{"_1":[["nan",2]],"_2":[1,2]}`},
	} {
		tl := byName[c.tool]
		for _, min := range []int{0, 1} {
			tl.ArrayMin = min
			_, ok := tl.fastPositional([]byte(c.args))
			tl.ArrayMin = DefaultArrayMin
			if ok {
				t.Errorf("%s %s (ArrayMin %d): the fast path took it", c.tool, c.args, min)
			}
		}
	}
}

func TestArrayShapesAndPaths(t *testing.T) {
	tl := arrayTools(t)[3] // table
	tl.ArrayMin = 1
	defer func() { tl.ArrayMin = DefaultArrayMin }()
	call, ok := tl.fastPositional([]byte(`{"_1":{"x":[0.5,1],"y":"s","z":[[1,2,3],[4,5,6]]},"_2":[{"v":[]},{"v":[7.5]}],"_3":[["a",[1]]]}`))
	if !ok {
		t.Fatal("declined")
	}
	var got []string
	for _, a := range call.Arrays {
		p, _ := json.Marshal(a.Path)
		got = append(got, string(p)+" "+string(a.DType)+" "+strconv.Itoa(len(a.Data)/8)+" "+shapeText(a.Shape))
	}
	// The empty list stays JSON: no array has fewer than one element.
	want := []string{`[0,"x"] f8 2 [2]`, `[0,"z"] i8 6 [2 3]`, `[1,1,"v"] f8 1 [1]`, `[2,"a"] i8 1 [1]`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("arrays:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if string(call.Args[0]) != `{"x":null,"y":"s","z":null}` {
		t.Errorf("args[0] = %s", call.Args[0])
	}
}

func shapeText(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
