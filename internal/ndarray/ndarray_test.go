package ndarray

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func i8s(vals ...int64) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return b
}

func f8s(vals ...float64) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// FuzzAppendReal: a Real is written as encoding/json writes a float64,
// which is what clients saw before arrays existed.
func FuzzAppendReal(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, 0.1, 1e21, 1e20, 1e-6, 1e-7, 123456.789, 5e-324, math.MaxFloat64, -2.5} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		want, _ := json.Marshal(v)
		if got := AppendReal(nil, v); string(got) != string(want) {
			t.Fatalf("AppendReal(%v) = %s, encoding/json writes %s", v, got, want)
		}
		if text := AppendFloatText(nil, v); !strings.ContainsAny(string(text), ".e") {
			t.Fatalf("AppendFloatText(%v) = %s: no fraction or exponent", v, text)
		}
	})
}

// A whole double declared Int is written as integer digits: its exact
// value below 1e21, the digits of its shortest text from there.
func TestAppendWhole(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {2, "2"}, {-7, "-7"},
		{1 << 60, "1152921504606846976"}, {1e20, "100000000000000000000"},
		{1e21, "1" + strings.Repeat("0", 21)}, {1.5e21, "15" + strings.Repeat("0", 20)},
		{1e300, "1" + strings.Repeat("0", 300)}, {-1.25e22, "-125" + strings.Repeat("0", 20)},
	}
	for _, tt := range tests {
		if got := string(AppendWhole(nil, tt.f)); got != tt.want {
			t.Errorf("AppendWhole(%v) = %s, want %s", tt.f, got, tt.want)
		}
		// Its digits are the integer the double is (below 1e21) or its shortest text reads as.
		n, ok := new(big.Int).SetString(tt.want, 10)
		if !ok {
			t.Fatalf("%s is not an integer", tt.want)
		}
		if back, _ := new(big.Float).SetInt(n).Float64(); back != tt.f {
			t.Errorf("%s reads back as %v, not %v", tt.want, back, tt.f)
		}
	}
}

func TestAppendJSONShapes(t *testing.T) {
	tests := []struct {
		a    Array
		kind Number
		want string
	}{
		{Array{DType: I8, Shape: []int{3}, Data: i8s(1, -2, math.MaxInt64)}, Int, `[1,-2,9223372036854775807]`},
		{Array{DType: I8, Shape: []int{2, 3}, Data: i8s(1, 2, 3, 4, 5, 6)}, Int, `[[1,2,3],[4,5,6]]`},
		{Array{DType: I8, Shape: []int{2, 1, 2}, Data: i8s(1, 2, 3, 4)}, Real, `[[[1,2]],[[3,4]]]`},
		{Array{DType: I8, Shape: []int{0}}, Int, `[]`},
		{Array{DType: F8, Shape: []int{2, 0}}, Real, `[[],[]]`},
		{Array{DType: F8, Shape: []int{0, 5}}, Real, `[]`},
		{Array{DType: F8, Shape: []int{3}, Data: f8s(0.5, 2, 1e-7)}, Real, `[0.5,2,1e-7]`},
		{Array{DType: F8, Shape: []int{2}, Data: f8s(2, -3)}, Int, `[2,-3]`},
		{Array{DType: I4, Shape: []int{2}, Data: []byte{1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff}}, Int, `[1,-2]`},
	}
	for _, tt := range tests {
		got, err := AppendJSON(nil, &tt.a, tt.kind)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s %v %v: %s, %v; want %s", tt.a.DType, tt.a.Shape, tt.kind, got, err, tt.want)
		}
	}
}

func TestCheckRejects(t *testing.T) {
	tests := []struct {
		a    Array
		want string
	}{
		{Array{DType: "f4", Shape: []int{1}, Data: make([]byte, 4)}, `unknown dtype "f4"`},
		{Array{DType: I8, Data: nil}, "empty shape"},
		{Array{DType: I8, Shape: []int{-1}}, "negative dimension"},
		{Array{DType: I8, Shape: []int{2}, Data: make([]byte, 8)}, "needs 16 bytes, the blob has 8"},
		{Array{DType: I8, Shape: []int{1 << 20, 1 << 20}}, "more than"},
		{Array{Path: []any{1.5}, DType: I8, Shape: []int{0}}, "path elements"},
		{Array{DType: F8, Shape: []int{1}, Data: f8s(math.Inf(1))}, ""},
	}
	for _, tt := range tests {
		err := tt.a.Check()
		if tt.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", tt.a, err)
			}
			if _, err := AppendJSON(nil, &tt.a, Real); err == nil || !strings.Contains(err.Error(), "NaN or an infinity") {
				t.Errorf("infinity written: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.a, err, tt.want)
		}
	}
}

// An f8 element in an Int array must be whole.
func TestNotWhole(t *testing.T) {
	a := Array{DType: F8, Shape: []int{3}, Data: f8s(1, 2, 2.5)}
	_, err := AppendJSON(nil, &a, Int)
	var nw *NotWhole
	if !errors.As(err, &nw) || nw.Index != 2 || nw.Text != "2.5" {
		t.Errorf("AppendJSON = %v, want element 2, 2.5, not whole", err)
	}
}

func TestDescriptorsRoundTrip(t *testing.T) {
	arrs := []Array{{Path: []any{0}, DType: I8, Shape: []int{3}}, {Path: []any{1, "x\"y", 2}, DType: F8, Shape: []int{2, 0}}}
	text := AppendDescriptors(nil, arrs)
	if want := `[{"path":[0],"dtype":"i8","shape":[3]},{"path":[1,"x\"y",2],"dtype":"f8","shape":[2,0]}]`; string(text) != want {
		t.Fatalf("descriptors %s, want %s", text, want)
	}
	back, err := ParseDescriptors(text)
	if err != nil || len(back) != 2 || back[1].Path[1] != "x\"y" || back[1].Path[2] != 2 || back[1].Shape[1] != 0 {
		t.Fatalf("parsed back %+v, %v", back, err)
	}
	if _, err := ParseDescriptors([]byte(`[{"path":[true],"dtype":"i8","shape":[1]}]`)); err == nil {
		t.Error("a path of true was accepted")
	}
}

func TestPlaceAndPoolJSON(t *testing.T) {
	a := Array{Path: []any{0, "x", 1}, DType: F8, Shape: []int{2}, Data: f8s(2, 0.25)}
	text, err := AppendPoolJSON(nil, &a)
	if err != nil || string(text) != `[2.0,0.25]` {
		t.Fatalf("AppendPoolJSON = %s, %v", text, err)
	}
	got, err := Place([]byte(`{"y":1,"x":[3,null]}`), a.Path[1:], text)
	if err != nil || string(got) != `{"y":1,"x":[3,[2.0,0.25]]}` {
		t.Fatalf("Place = %s, %v", got, err)
	}
	if _, err := Place([]byte(`{"x":[3,4]}`), a.Path[1:], text); err == nil || !strings.Contains(err.Error(), "not the null placeholder") {
		t.Errorf("placed over a value: %v", err)
	}
	if _, err := Place([]byte(`{"x":[3]}`), a.Path[1:], text); err == nil {
		t.Error("placed at an index past the end")
	}
	n, ok := NarrowI8(&Array{DType: I8, Shape: []int{2}, Data: i8s(-5, math.MaxInt32)})
	if !ok || n.DType != I4 || len(n.Data) != 8 {
		t.Errorf("NarrowI8 = %+v, %v", n, ok)
	}
	if _, ok := NarrowI8(&Array{DType: I8, Shape: []int{1}, Data: i8s(math.MaxInt32 + 1)}); ok {
		t.Error("narrowed 2^31")
	}
}

// JSONSize is exact for small integer arrays and close for others, so that
// one buffer of about that size holds what AppendJSON writes.
func TestJSONSize(t *testing.T) {
	ints := Array{DType: I8, Shape: []int{2, 3}, Data: i8s(0, -5, 123456789, math.MinInt64, math.MaxInt64, 7)}
	out, _ := AppendJSON(nil, &ints, Int)
	if got := JSONSize(&ints, Int); got != len(out) {
		t.Errorf("ints: JSONSize %d, AppendJSON wrote %d", got, len(out))
	}
	var vals []float64
	for i := 0; i < 1000; i++ {
		vals = append(vals, float64(i)*0.123456789)
	}
	reals := Array{DType: F8, Shape: []int{1000}, Data: f8s(vals...)}
	out, _ = AppendJSON(nil, &reals, Real)
	if got := JSONSize(&reals, Real); got < len(out) || got > len(out)*3/2 {
		t.Errorf("reals: JSONSize %d, AppendJSON wrote %d", got, len(out))
	}
	var big []int64
	for i := 0; i < 100000; i++ {
		big = append(big, int64(i*7919%1000000))
	}
	many := Array{DType: I8, Shape: []int{len(big)}, Data: i8s(big...)}
	out, _ = AppendJSON(nil, &many, Int)
	if got := JSONSize(&many, Int); got < len(out)*9/10 || got > len(out)*3/2 {
		t.Errorf("100 000 ints: JSONSize %d, AppendJSON wrote %d", got, len(out))
	}
}

// A large array is written in parts at once: the same text as one pass,
// and a NaN in any part is found.
func TestAppendJSONInParts(t *testing.T) {
	var vals []float64
	for i := 0; i < 3*parallelMin+7; i++ {
		vals = append(vals, float64(i)/7)
	}
	for _, shape := range [][]int{{len(vals)}, {len(vals) / 7, 7}, {1, len(vals)}} {
		n := 1
		for _, d := range shape {
			n *= d
		}
		a := Array{DType: F8, Shape: shape, Data: f8s(vals[:n]...)}
		got, err := AppendJSON(nil, &a, Real)
		if err != nil {
			t.Fatal(err)
		}
		want, err := appendNested(nil, &a, Real, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("shape %v: the parts differ from one pass", shape)
		}
		nan := Array{DType: F8, Shape: shape, Data: append([]byte(nil), a.Data...)}
		binary.LittleEndian.PutUint64(nan.Data[len(nan.Data)-8:], math.Float64bits(math.NaN()))
		if _, err := AppendJSON(nil, &nan, Real); err == nil {
			t.Errorf("shape %v: a NaN in the last part was written", shape)
		}
	}
}

// The parts are written into the buffer they end up in: a
// buffer sized with JSONSize takes the whole array with nothing else of
// its size allocated. When the estimate is short (one part's numbers far
// longer than the sample's), the parts are joined anew and the text is
// still the one pass's.
func TestAppendJSONPartsInPlace(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one CPU: arrays are written in one pass")
	}
	vals := make([]int64, 8*parallelMin)
	for i := range vals {
		vals[i] = int64(i * 7919 % 1000003)
	}
	a := Array{DType: I8, Shape: []int{len(vals)}, Data: i8s(vals...)}
	prefix := []byte(`{"x":`)
	dst := append(make([]byte, 0, len(prefix)+JSONSize(&a, Int)), prefix...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := AppendJSON(dst, &a, Int)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := appendNested(append([]byte(nil), prefix...), &a, Int, nil)
	if string(got) != string(want) {
		t.Fatalf("in place: the parts differ from one pass")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(len(got)/8) {
		t.Errorf("writing %d bytes of JSON into a buffer of their estimated size allocated %d more", len(got), grew)
	}

	// Short numbers where the sample looks, long ones in between: the
	// estimate falls far short.
	for i := range vals {
		if i%64 != 0 {
			vals[i] = math.MaxInt64 - int64(i)
		}
	}
	b := Array{DType: I8, Shape: []int{len(vals)}, Data: i8s(vals...)}
	got, err = AppendJSON(append([]byte(nil), prefix...), &b, Int)
	want, _ = appendNested(append([]byte(nil), prefix...), &b, Int, nil)
	if err != nil || string(got) != string(want) {
		t.Fatalf("estimate too short: the parts differ from one pass (%v)", err)
	}
}

func FuzzAppendInt(f *testing.F) {
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 12345, -1, -10, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendInt(%d) = %s, want %s", v, got, want)
		}
	})
}

// At finds an array by its place: keys match members, indices elements,
// and a path of another length or element type matches nothing.
func TestAt(t *testing.T) {
	arrays := []Array{{Path: []any{0, "x"}}, {Path: []any{1}}, {Path: []any{"1"}}, {Path: []any{2.0}}, {Path: []any{}}}
	for _, c := range []struct {
		path []Step
		want int // index into arrays, -1 for none
	}{
		{[]Step{{Idx: 0}, {Key: "x", Idx: -1}}, 0},
		{[]Step{{Idx: 1}}, 1},
		{[]Step{{Key: "1", Idx: -1}}, 2},
		{[]Step{{Idx: 0}}, -1},
		{[]Step{{Idx: 2}}, -1}, // a float64 in a path is no index
		{[]Step{{Idx: 0}, {Key: "y", Idx: -1}}, -1},
		{[]Step{{Idx: 0}, {Idx: 0}}, -1},
		{nil, 4},
	} {
		got := At(arrays, c.path)
		if c.want < 0 && got != nil || c.want >= 0 && got != &arrays[c.want] {
			t.Errorf("At(%v) = %v, want arrays[%d]", c.path, got, c.want)
		}
	}
}
