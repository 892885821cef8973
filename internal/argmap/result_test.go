package argmap

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/ndarray/ndarraytest"
)

// Arrays in a result are written where their paths say, as the same
// numbers sent as JSON would be.
func TestResultValueArrays(t *testing.T) {
	tests := []struct {
		schema, json string
		arrays       []ndarray.Array
		want, err    string
	}{
		{"aj", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{3}, Data: ndarraytest.I8(1, -2, 1<<62)}}, `[1,-2,4611686018427387904]`, ""},
		{"aaf8", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{2, 2}, Data: ndarraytest.F8(1, 0.1, 1e21, math.Copysign(0, -1))}}, `[[1,0.1],[1e+21,-0]]`, ""},
		{"aj", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{2}, Data: ndarraytest.F8(2, 1e300)}}, `[2,1` + strings.Repeat("0", 300) + `]`, ""},
		{"aj", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{3}, Data: ndarraytest.F8(2, 1e300, 2.5)}}, "", "the number 2.5 where its type says integer"},
		{"ai1", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{2}, Data: ndarraytest.I8(5, 300)}}, "", "the integer 300 where its type says an integer from -128 to 127 (i1)"},
		{"s", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{1}, Data: ndarraytest.I8(5)}}, "", "an array of rank 1 where its type says string"},
		{"af8", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I4, Shape: []int{2}, Data: []byte{7, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}}}, `[7,-1]`, ""},
		{"aaj", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{2, 0}, Data: nil}}, `[[],[]]`, ""},
		{"m21xaf81ys", `{"y":"s","x":null}`, []ndarray.Array{{Path: []any{"x"}, DType: ndarray.F8, Shape: []int{1}, Data: ndarraytest.F8(3)}}, `{"y":"s","x":[3]}`, ""},
		{"<dict>at2saj", `{"k":null}`, []ndarray.Array{{Path: []any{"k"}, DType: ndarray.I8, Shape: []int{1}, Data: ndarraytest.I8(5)}}, `[["k",[5]]]`, ""},
		{"am11vaf8", `[{"v":[1]},{"v":null}]`, []ndarray.Array{{Path: []any{1, "v"}, DType: ndarray.F8, Shape: []int{1}, Data: ndarraytest.F8(2)}}, `[{"v":[1]},{"v":[2]}]`, ""},
		{"af8", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{3}, Data: ndarraytest.F8(1, math.NaN(), math.Inf(-1))}}, `[1,"NaN","-Infinity"]`, ""},
		{"aj", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{2}, Data: ndarraytest.F8(1, math.NaN())}}, "", "NaN or an infinity"},
		{"af8", `[1]`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{1}, Data: ndarraytest.F8(1)}}, "", "at no null"},
		{"af8", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{3}, Data: ndarraytest.F8(1)}}, "", "needs 24 bytes, the blob has 8"},
		{"a:2a:3j", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{2, 3}, Data: ndarraytest.I8(1, 2, 3, 4, 5, 6)}}, `[[1,2,3],[4,5,6]]`, ""},
		{"a:2a:3j", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{3, 2}, Data: ndarraytest.I8(1, 2, 3, 4, 5, 6)}}, "", "an array of 3 items where its type says a list of exactly 2"},
		{"a:2a:3j", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{2, 2}, Data: ndarraytest.I8(1, 2, 3, 4)}}, "", "an array of 2 items at [0] where its type says a list of exactly 3"},
		{"aa:3j", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{0, 0}, Data: nil}}, `[]`, ""},
		{"*", `{"x":null}`, []ndarray.Array{{Path: []any{"x"}, DType: ndarray.I8, Shape: []int{1}, Data: ndarraytest.I8(5)}}, "", "at no null"},
	}
	for _, tt := range tests {
		ty, err := manifest.ParseType(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ResultValue(&manifest.Return{T: ty}, ndarray.Value{JSON: []byte(tt.json), Arrays: tt.arrays})
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %s: error %v, want %q", tt.schema, tt.json, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s %s: %v", tt.schema, tt.json, err)
		case string(got) != tt.want:
			t.Errorf("%s %s: %s, want %s", tt.schema, tt.json, got, tt.want)
		}
	}
}

// Every result is checked against its declared type in the same pass
// that writes it: what is wrong, where, and what the type says.
func TestResultTypeMismatch(t *testing.T) {
	tests := []struct{ schema, in, want string }{
		{"j", `"seven"`, "a string where its type says integer"},
		{"j", `2.5`, "the number 2.5 where its type says integer"},
		{"j", `null`, "null where its type says integer"},
		{"i1", `300`, "the integer 300 where its type says an integer from -128 to 127 (i1)"},
		{"u1", `[1]`, "an array where its type says integer"},
		{"f8", `"pi"`, "a string where its type says number"},
		{"f8", `"1.5"`, "a string where its type says number"},
		{"f8", `"N\u0061N"`, "a string where its type says number"},
		{"j", `"NaN"`, "a string where its type says integer"},
		{"f8", `1e999`, "the number 1e999 where its type says a number within the range of a double"},
		{"s", `5`, "the integer 5 where its type says string"},
		{"b", `"true"`, "a string where its type says boolean"},
		{"z", `0`, "the integer 0 where its type says null"},
		{"aj", `[1,2,"x"]`, "a string at [2] where its type says integer"},
		{"aj", `{"a":1}`, "an object where its type says array"},
		{"aaj", `[[1],[2,true]]`, "a boolean at [1][1] where its type says integer"},
		{"t2js", `[1]`, "an array of 1 items where its type says a tuple of exactly 2"},
		{"t2js", `[1,"a",3]`, "an array of 3 items where its type says a tuple of exactly 2"},
		{"t2js", `[1,2]`, "the integer 2 at [1] where its type says string"},
		{"m24names3agej", `{"name":"x"}`, "an object without its field 'age'"},
		{"m24names3agej", `{"name":"x","age":"3"}`, "a string at age where its type says integer"},
		{"m24names3agej", `{"name":"x","age":3,"extra":1}`, "an object with a field 'extra' where its type says a record without it"},
		{"m24names3agej", `[]`, "an array where its type says object"},
		{"<dict>at2sj", `"not a map"`, "a string where its type says array"},
		{"<dict>at2sj", `{"a":1,"b":"x"}`, "a string at b where its type says integer"},
		{"am24names3agej", `[{"name":"a","age":1},{"name":"b","age":null}]`, "null at [1].age where its type says integer"},
		{"?j", `"x"`, "a string where its type says integer"},
		{"&4Treem24datai14kidsa^4Tree", `{"data":1,"kids":[{"data":"x","kids":[]}]}`, "a string at kids[0].data where its type says integer"},
		{"&4Listt2j?^4List", `[1,[2,{"a":1}]]`, "an object at [1][1] where its type says array"},
		{"&4Listt2j?^4List", `[1,[2,[3]]]`, "an array of 1 items at [1][1] where its type says a tuple of exactly 2"},
		{"a:2j", `[1,2,3]`, "an array of 3 items where its type says a list of exactly 2"},
		{"a:2j", `[]`, "an array of 0 items where its type says a list of exactly 2"},
		{"a:2s", `["a"]`, "an array of 1 items where its type says a list of exactly 2"},
		{"a:2a:3f8", `[[1,2,3],[4,5]]`, "an array of 2 items at [1] where its type says a list of exactly 3"},
		{"a:2j", `[1,"x",3]`, "a string at [1] where its type says integer"},
		{"m11va:1?j", `{"v":[null,null]}`, "an array of 2 items at v where its type says a list of exactly 1"},
		{"<dict>a:1t2sj", `{"a":1,"b":2}`, "an array of 2 items where its type says a list of exactly 1"},
		{"a:2*", `[1]`, "an array of 1 items where its type says a list of exactly 2"},
	}
	for _, tt := range tests {
		ty, err := manifest.ParseType(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ResultValue(&manifest.Return{T: ty}, ndarray.Value{JSON: []byte(tt.in)})
		var tm *TypeMismatch
		if !errors.As(err, &tm) || err.Error() != tt.want {
			t.Errorf("%s %s: %v, want %q", tt.schema, tt.in, err, tt.want)
		}
	}
	// `*` takes any value as it is; a fixed-length list of its length passes.
	for _, tt := range []struct{ schema, in, want string }{
		{"*", ` {"b": [1.0, "x"], "a" : null} `, `{"b":[1.0,"x"],"a":null}`},
		{"?*", `null`, `null`},
		{"m11x*", `{"x":[2.50]}`, `{"x":[2.50]}`},
		{"a:2*", `[1,{}]`, `[1,{}]`},
		{"a:2j", `[1,2.0]`, `[1,2]`},
		{"a:2a:3f8", `[[1,2,3.0],[4,5,6]]`, `[[1,2,3],[4,5,6]]`},
		{"a:0j", `[1,2,3]`, `[1,2,3]`},
		{"<dict>a:1t2sj", `{"a":1}`, `[["a",1]]`},
		{"&4Listt2j?^4List", `[1,[2,null]]`, `[1,[2,null]]`},
	} {
		ty, err := manifest.ParseType(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ResultValue(&manifest.Return{T: ty}, ndarray.Value{JSON: []byte(tt.in)}); err != nil || string(got) != tt.want {
			t.Errorf("%s %s: %s, %v; want %s", tt.schema, tt.in, got, err, tt.want)
		}
	}
	// Optional fields may be left out; a value of the right type passes.
	ty, _ := manifest.ParseType("m24names3age?j")
	if got, err := ResultValue(&manifest.Return{T: ty}, ndarray.Value{JSON: []byte(`{"name":"x"}`)}); err != nil || string(got) != `{"name":"x"}` {
		t.Errorf("optional field left out: %s, %v", got, err)
	}
}

// NaN and the infinities, which JSON has no numbers for, travel as
// strings where a Real is declared: clients get "NaN", "Infinity",
// "-Infinity"; the CLI morloc's "nan", "inf", "-inf" (docs/spec.md §7.2). A
// string anywhere else is left alone.
func TestResultNonFinite(t *testing.T) {
	tests := []struct{ schema, in, client, cli string }{
		{"f8", `"NaN"`, `"NaN"`, `"nan"`},
		{"f8", `"Infinity"`, `"Infinity"`, `"inf"`},
		{"f4", `"-Infinity"`, `"-Infinity"`, `"-inf"`},
		{"f8", `"nan"`, `"NaN"`, `"nan"`},
		{"f8", `"-inf"`, `"-Infinity"`, `"-inf"`},
		{"f8", `"Inf"`, `"Infinity"`, `"inf"`},
		{"af8", `[1.5,"NaN","Infinity","-Infinity",2]`, `[1.5,"NaN","Infinity","-Infinity",2]`, `[1.5,"nan","inf","-inf",2]`},
		{"aaf8", `[["NaN"],[1]]`, `[["NaN"],[1]]`, `[["nan"],[1]]`},
		{"?f8", `"NaN"`, `"NaN"`, `"nan"`},
		{"m21xf81ys", `{"x":"Infinity","y":"NaN"}`, `{"x":"Infinity","y":"NaN"}`, `{"x":"inf","y":"NaN"}`},
		{"t2f8s", `["NaN","NaN"]`, `["NaN","NaN"]`, `["nan","NaN"]`},
		{"*", `["NaN"]`, `["NaN"]`, `["NaN"]`},
	}
	for _, tt := range tests {
		ty, err := manifest.ParseType(tt.schema)
		if err != nil {
			t.Fatal(err)
		}
		ret := &manifest.Return{T: ty}
		if got, err := ResultValue(ret, ndarray.Value{JSON: []byte(tt.in)}); err != nil || string(got) != tt.client {
			t.Errorf("%s %s: %s, %v; want %s", tt.schema, tt.in, got, err, tt.client)
		}
		if got, err := CLIResultValue(ret, ndarray.Value{JSON: []byte(tt.in)}); err != nil || string(got) != tt.cli {
			t.Errorf("CLI %s %s: %s, %v; want %s", tt.schema, tt.in, got, err, tt.cli)
		}
	}
	ty, _ := manifest.ParseType("aaf8")
	arr := []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{2, 2}, Data: ndarraytest.F8(math.Inf(1), 0.5, math.NaN(), math.Inf(-1))}}
	if got, err := CLIResultValue(&manifest.Return{T: ty}, ndarray.Value{JSON: []byte(`null`), Arrays: arr}); err != nil || string(got) != `[["inf",0.5],["nan","-inf"]]` {
		t.Errorf("CLI array: %s, %v", got, err)
	}
}
