package morlocwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/ndarray/ndarraytest"
)

func mustType(t testing.TB, s string) *manifest.Type {
	t.Helper()
	ty, err := manifest.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// payload strips an argument packet's header, checking it.
func payload(t *testing.T, pkt []byte) []byte {
	t.Helper()
	p, err := ParsePacket(pkt)
	if err != nil {
		t.Fatal(err)
	}
	h := p.Header
	if h.Type() != TypeData || h.Source() != SourceMesg || h.Format() != FormatMsgpack || h.Offset != 0 {
		t.Fatalf("argument header %+v", h)
	}
	return p.Payload
}

// TestEncodeRoundTrip encodes values, decodes the msgpack back by the same
// schema (as a pool would, then as a MESG+MSGPACK result), and expects the
// value in nexus's canonical JSON.
func TestEncodeRoundTrip(t *testing.T) {
	tests := []struct {
		schema, in, want string
		d                Dialect
	}{
		{"s", `"héllo \"q\"\n\u0001"`, `"héllo \"q\"\n\u0001"`, C},
		{"s", `""`, `""`, C},
		{"s", `"` + strings.Repeat("x", 40) + `"`, `"` + strings.Repeat("x", 40) + `"`, C}, // str8
		{"i4", `-2147483648`, `-2147483648`, C},
		{"i4", `2147483647`, `2147483647`, C},
		{"i4", ` 2.0e0 `, `2`, C}, // a whole number written as a real
		{"i1", `-128`, `-128`, C},
		{"u1", `255`, `255`, C},
		{"u2", `65535`, `65535`, C},
		{"i2", `-32768`, `-32768`, C},
		{"u4", `4294967295`, `4294967295`, C},
		{"i8", `-9223372036854775808`, `-9223372036854775808`, C},
		{"u8", `18446744073709551615`, `18446744073709551615`, C},
		{"j", `12345678901234567890123`, `12345678901234567890123`, Rust},
		{"j", `-12345678901234567890123`, `-12345678901234567890123`, Rust},
		{"j", `-170141183460469231731687303715884105728`, `-170141183460469231731687303715884105728`, Rust}, // -2^127
		{"j", `0`, `0`, Rust},
		{"f8", `0.1`, `0.1`, C},
		{"f8", `1e21`, `1e+21`, C},
		{"f8", `3`, `3`, C},
		{"f8", `-0.0`, `-0`, C},
		{"f8", `"NaN"`, `"NaN"`, C},
		{"f8", `"Infinity"`, `"Infinity"`, C},
		{"f8", `"-Infinity"`, `"-Infinity"`, C},
		{"f4", `0.1`, `0.1`, C},
		{"f4", `16777217`, `16777216`, C}, // the float32 nearest
		{"b", `true`, `true`, C},
		{"z", `null`, `null`, C},
		{"ai4", `[1, -2, 3]`, `[1,-2,3]`, C},
		{"ai4", `[]`, `[]`, C},
		{"aai4", `[[1],[],[2,3]]`, `[[1],[],[2,3]]`, C},
		{"a:3i4", `[1,2,3]`, `[1,2,3]`, Rust},
		{"t3i4sb", `[1,"a",false]`, `[1,"a",false]`, C},
		{"m24names3agei4", `{"age": 3, "name": "x"}`, `{"name":"x","age":3}`, C},
		{"m24names4nick?s", `{"name": "x"}`, `{"name":"x","nick":null}`, C},
		{"?i4", `null`, `null`, Rust},
		{"?i4", `7`, `7`, Rust},
		{"a?s", `["a",null]`, `["a",null]`, C},
		{"<dict>at2si4", `{"a": 1, "b": 2}`, `[["a",1],["b",2]]`, C},
		{"<dict>at2si4", `[["a", 1]]`, `[["a",1]]`, C},
		{"&4Treem25valuej8childrena^4Tree", `{"value":1,"children":[{"value":2,"children":[]}]}`, `{"value":1,"children":[{"value":2,"children":[]}]}`, Rust},
	}
	for _, tt := range tests {
		t.Run(tt.schema+" "+tt.in, func(t *testing.T) {
			ty := mustType(t, tt.schema)
			pkt, err := AppendArg([]byte("prefix"), ty, json.RawMessage(tt.in), tt.d)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(pkt, []byte("prefix")) {
				t.Fatal("dst was not appended to")
			}
			mp := payload(t, pkt[6:])
			n, err := layout(ty, tt.d)
			if err != nil {
				t.Fatal(err)
			}
			got, err := msgpackJSON(n, mp)
			if err != nil {
				t.Fatalf("%x: %v", mp, err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s (msgpack %x)", got, tt.want, mp)
			}
		})
	}
}

// TestEncodeSmallest checks the msgpack forms: the smallest of each.
func TestEncodeSmallest(t *testing.T) {
	tests := []struct{ schema, in, want string }{
		{"i4", `0`, `00`},
		{"i4", `127`, `7f`},
		{"i4", `128`, `cc80`},
		{"i4", `-1`, `ff`},
		{"i4", `-32`, `e0`},
		{"i4", `-33`, `d0df`},
		{"i4", `65536`, `ce00010000`},
		{"i4", `-2147483648`, `d280000000`},
		{"u8", `18446744073709551615`, `cfffffffffffffffff`},
		{"f8", `1.5`, `cb3ff8000000000000`},
		{"f4", `1.5`, `ca3fc00000`},
		{"s", `"ab"`, `a26162`},
		{"ai4", `[1,2]`, `920102`},
		{"ai4", `[` + strings.Repeat("1,", 15) + `1]`, `dc0010` + strings.Repeat("01", 16)},
		{"t2bz", `[true,null]`, `92c3c0`},
		{"m11ab", `{"a":false}`, `91c2`},
	}
	for _, tt := range tests {
		pkt, err := AppendArg(nil, mustType(t, tt.schema), json.RawMessage(tt.in), C)
		if err != nil {
			t.Errorf("%s %s: %v", tt.schema, tt.in, err)
			continue
		}
		if got := payload(t, pkt); hexs(got) != tt.want {
			t.Errorf("%s %.30s: %s, want %s", tt.schema, tt.in, hexs(got), tt.want)
		}
	}
	// A long list keeps its array32 header; its items are not moved.
	long := `[` + strings.Repeat("1,", 70000) + `1]`
	pkt, err := AppendArg(nil, mustType(t, "ai4"), json.RawMessage(long), C)
	if err != nil {
		t.Fatal(err)
	}
	if got := payload(t, pkt); got[0] != 0xdd || binary.BigEndian.Uint32(got[1:]) != 70001 || len(got) != 5+70001 {
		t.Errorf("long list: %x... (%d bytes)", got[:8], len(got))
	}
}

func hexs(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// TestEncodeRefusals: every value a pool would abort on, refused with
// where and why.
func TestEncodeRefusals(t *testing.T) {
	tests := []struct {
		schema, in string
		d          Dialect
		want       string
	}{
		{"i4", `2147483648`, C, "2147483648 does not fit i4 (-2147483648 to 2147483647)"},
		{"i4", `-2147483649`, C, "-2147483649 does not fit i4"},
		{"u1", `256`, C, "256 does not fit u1 (0 to 255)"},
		{"u1", `-1`, C, "-1 does not fit u1"},
		{"i1", `128`, C, "128 does not fit i1 (-128 to 127)"},
		{"u8", `-1`, C, "-1 does not fit u8"},
		{"u8", `18446744073709551616`, C, "18446744073709551616 does not fit u8"},
		{"u8", `9223372036854775808`, Rust, "does not fit u8 as morloc 0.98.2 pools read it (0 to 9223372036854775807)"},
		{"i8", `9223372036854775808`, C, "9223372036854775808 does not fit i8"},
		{"i4", `2.5`, C, "2.5 is not an integer"},
		{"i4", `1e401`, C, "1e401 is not an integer of any size morloc takes"},
		{"i4", `1e40`, C, "0... does not fit i4 (-2147483648 to 2147483647)"},
		{"i4", `"3"`, C, `the string "3" where an integer (i4) belongs`},
		{"i4", `true`, C, "true where an integer (i4) belongs"},
		{"i4", `null`, C, "null where an integer (i4) belongs"},
		{"f8", `1e400`, C, "1e400 is beyond the range of a double"},
		{"f8", `"nan-ish"`, C, `the string "nan-ish" where a number (f8) belongs`},
		{"f8", `"\u004eaN"`, C, `where a number (f8) belongs`}, // escaped: not nexus's NaN
		{"f4", `1e39`, C, "1e+39 does not fit f4 (a 32-bit float)"},
		{"s", `5`, C, "5 where a string (s) belongs"},
		{"b", `0`, C, "0 where a boolean (b) belongs"},
		{"z", `0`, C, "0 where null (z) belongs"},
		{"ai4", `{"a":1}`, C, "an object where a list belongs"},
		{"ai4", `[1,"x"]`, C, `at [1]: the string "x" where an integer (i4) belongs`},
		{"aai4", `[[1],[2,3.5]]`, C, "at [1][1]: 3.5 is not an integer"},
		{"a:2i4", `[1,2,3]`, Rust, "a list of 3 items where its type says exactly 2"},
		{"t2i4s", `[1]`, C, "an array of 1 items where a tuple of exactly 2 belongs"},
		{"t2i4s", `[1,"a",3]`, C, "an array of 3 items where a tuple of exactly 2 belongs"},
		{"t2i4s", `[1,2]`, C, `at [1]: 2 where a string (s) belongs`},
		{"m24names3agei4", `{"name":"x"}`, C, "at age: missing field: an integer (i4) is required"},
		{"m24names3agei4", `{"name":"x","age":1,"extra":2}`, C, "at extra: field not in the record (its fields: name, age)"},
		{"m24names3agei4", `{"name":"x","age":1,"age":2}`, C, "at age: field given twice"},
		{"m24names3agei4", `["x",1]`, C, "an array where a record: an object belongs"},
		{"m24names3agei4", `{"name":"x","age":00}`, C, "expected ',' or '}' after object value at offset 19"}, // a 0 and a stray 0, not one number
		{"m24names3agei4", `{"name":"x","age":1x}`, C, "expected ',' or '}' after object value at offset 19"},
		{"m24names3agei4", `{"name":"x"y,"age":1}`, C, "after object value"},
		{"m24namesm1 1xm14deepi4", `{"name":"a","m":{"deep":2147483648}}`, C, ""}, // bad schema below
		{"am12ptm12xyi4", `[{"pt":{"xy":1}},{"pt":{"xy":"no"}}]`, C, `at [1].pt.xy: the string "no" where an integer (i4) belongs`},
		{"?i4", `"x"`, C, `the string "x" where an integer (i4) or null belongs`},
		{"j", `1`, C, "schema code j (Int of any size) does not exist in morloc 0.69.0's wire format"},
		{"<dict>at2si4", `{"a":"b"}`, C, `at a: the string "b" where an integer (i4) belongs`},
		{"i4", `1 2`, C, "after the value"},
		{"i4", ``, C, "no value"},
		{"i4", `[`, C, ""},
		{"*", `1`, C, "has no wire format"},
		{"T", `1`, Rust, "tables (schema T, Arrow buffers) are not supported"},
		{"F", `"f"`, Rust, "stream handles (schema F) are not supported"},
	}
	for _, tt := range tests {
		ty, err := manifest.ParseType(tt.schema)
		if err != nil {
			continue // a schema the manifest refuses never reaches the encoder
		}
		dst := []byte("keep")
		out, err := AppendArg(dst, ty, json.RawMessage(tt.in), tt.d)
		if err == nil {
			t.Errorf("%s %s: encoded as %x, want an error", tt.schema, tt.in, out)
			continue
		}
		if string(out) != "keep" {
			t.Errorf("%s %s: dst changed to %q on error", tt.schema, tt.in, out)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s:\n got %v\nwant %q", tt.schema, tt.in, err, tt.want)
		}
	}
	// The path is there to read, too.
	_, err := AppendArg(nil, mustType(t, "am12ptm12xyi4"), json.RawMessage(`[{"pt":{"xy":1}},{"pt":{"xy":"no"}}]`), C)
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Path() != "[1].pt.xy" {
		t.Errorf("path of %v", err)
	}
}

// TestEncodeArrays: arrays (nexus's parsed numeric lists) encode as the
// same msgpack as the JSON they stand for.
func TestEncodeArrays(t *testing.T) {
	tests := []struct {
		schema string
		json   string // the value with arrays in place
		arrays []ndarray.Array
		same   string // the same value as JSON
	}{
		{"af8", `null`, []ndarray.Array{ndarraytest.F8Array(nil, []int{3}, 1.5, -2, math.Inf(1))}, `[1.5,-2,"Infinity"]`},
		{"af4", `null`, []ndarray.Array{ndarraytest.F8Array(nil, []int{2}, 0.1, 3)}, `[0.1,3]`},
		{"ai4", `null`, []ndarray.Array{ndarraytest.I8Array(nil, []int{3}, 1, -70000, 2147483647)}, `[1,-70000,2147483647]`},
		{"ai8", `null`, []ndarray.Array{ndarraytest.F8Array(nil, []int{2}, 3, -4)}, `[3,-4]`},
		{"af8", `null`, []ndarray.Array{ndarraytest.I8Array(nil, []int{2}, 3, -4)}, `[3,-4]`},
		{"aaf8", `null`, []ndarray.Array{ndarraytest.F8Array(nil, []int{2, 2}, 1, 2, 3, 4)}, `[[1,2],[3,4]]`},
		{"aaf8", `null`, []ndarray.Array{ndarraytest.F8Array(nil, []int{0, 5})}, `[]`},
		{"f8", `null`, []ndarray.Array{ndarraytest.F8Array(nil, []int{}, math.NaN())}, `"NaN"`},
		{"m21xaf8 1ys", `{"y":"a","x":null}`, []ndarray.Array{ndarraytest.F8Array([]any{"x"}, []int{2}, 1, 2)}, `{"x":[1,2],"y":"a"}`},
		{"at2sf8", `[["a",null],["b",null]]`, []ndarray.Array{ndarraytest.F8Array([]any{1, 1}, []int{}, math.Inf(-1)), ndarraytest.F8Array([]any{0, 1}, []int{}, 2)}, `[["a",2],["b","-Infinity"]]`},
	}
	for _, tt := range tests {
		schema := strings.ReplaceAll(tt.schema, " ", "")
		ty := mustType(t, schema)
		got, err := AppendArgArrays(nil, ty, json.RawMessage(tt.json), tt.arrays, C)
		if err != nil {
			t.Errorf("%s: %v", schema, err)
			continue
		}
		want, err := AppendArg(nil, ty, json.RawMessage(tt.same), C)
		if err != nil {
			t.Fatalf("%s %s: %v", schema, tt.same, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: arrays give %x, JSON %x", schema, got, want)
		}
		if tt.json == "null" && len(tt.arrays) == 1 {
			whole, err := AppendArrayArg(nil, ty, tt.arrays[0], C)
			if err != nil || !bytes.Equal(whole, want) {
				t.Errorf("%s: AppendArrayArg %x, %v; want %x", schema, whole, err, want)
			}
		}
	}

	refusals := []struct {
		schema string
		a      ndarray.Array
		want   string
	}{
		{"ai4", ndarraytest.I8Array(nil, []int{2}, 1, 1<<31), "at [1]: 2147483648 does not fit i4"},
		{"ai4", ndarraytest.F8Array(nil, []int{2}, 1, 2.5), "at [1]: 2.5 is not an integer"},
		{"af4", ndarraytest.F8Array(nil, []int{1}, 1e39), "at [0]: 1e+39 does not fit f4"},
		{"as", ndarraytest.F8Array(nil, []int{1}, 1), "an array of numbers where a string (s) belongs"},
		{"af8", ndarraytest.F8Array(nil, []int{1, 1}, 1), "an array of rank 2 where a list belongs"},
		{"a:3f8", ndarraytest.F8Array(nil, []int{2}, 1, 2), "a list of 2 items where its type says exactly 3"},
		{"af8", ndarray.Array{DType: ndarray.F8, Shape: []int{2}, Data: make([]byte, 8)}, "has 8 bytes, not 16"},
		{"af8", ndarray.Array{DType: "x", Shape: []int{1}}, `unknown dtype "x"`},
	}
	for _, tt := range refusals {
		_, err := AppendArrayArg(nil, mustType(t, tt.schema), tt.a, Rust)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.schema, err, tt.want)
		}
	}
	// A call's arrays, split by argument.
	call := []ndarray.Array{ndarraytest.F8Array([]any{1, "x"}, []int{1}, 1), ndarraytest.F8Array([]any{0}, []int{}, 2), ndarraytest.F8Array([]any{1}, []int{}, 3)}
	if got := ArgArrays(call, 1); len(got) != 2 || len(got[0].Path) != 1 || got[0].Path[0] != "x" || len(got[1].Path) != 0 || len(call[0].Path) != 2 {
		t.Errorf("ArgArrays: %+v", got)
	}
	// An array at a place the value does not have.
	_, err := AppendArgArrays(nil, mustType(t, "ai4"), json.RawMessage(`[1]`), []ndarray.Array{ndarraytest.I8Array([]any{5}, []int{1}, 1)}, C)
	if err == nil || !strings.Contains(err.Error(), "have no null place") {
		t.Errorf("misplaced array: %v", err)
	}
}
