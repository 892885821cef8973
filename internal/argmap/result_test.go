package argmap

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
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

// Arrays in a result are written where their paths say, as the same
// numbers sent as JSON would be.
func TestResultValueArrays(t *testing.T) {
	tests := []struct {
		schema, json string
		arrays       []ndarray.Array
		want, err    string
	}{
		{"aj", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{3}, Data: i8s(1, -2, 1<<62)}}, `[1,-2,4611686018427387904]`, ""},
		{"aaf8", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{2, 2}, Data: f8s(1, 0.1, 1e21, math.Copysign(0, -1))}}, `[[1,0.1],[1e+21,-0]]`, ""},
		{"aj", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{3}, Data: f8s(2, 1e300, 2.5)}}, `[2,1` + strings.Repeat("0", 300) + `,2.5]`, ""},
		{"af8", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I4, Shape: []int{2}, Data: []byte{7, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}}}, `[7,-1]`, ""},
		{"aaj", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{2, 0}, Data: nil}}, `[[],[]]`, ""},
		{"m21xaf81ys", `{"y":"s","x":null}`, []ndarray.Array{{Path: []any{"x"}, DType: ndarray.F8, Shape: []int{1}, Data: f8s(3)}}, `{"y":"s","x":[3]}`, ""},
		{"<dict>at2saj", `{"k":null}`, []ndarray.Array{{Path: []any{"k"}, DType: ndarray.I8, Shape: []int{1}, Data: i8s(5)}}, `[["k",[5]]]`, ""},
		{"am11vaf8", `[{"v":[1]},{"v":null}]`, []ndarray.Array{{Path: []any{1, "v"}, DType: ndarray.F8, Shape: []int{1}, Data: f8s(2)}}, `[{"v":[1]},{"v":[2]}]`, ""},
		{"af8", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{2}, Data: f8s(1, math.NaN())}}, "", "NaN or an infinity"},
		{"af8", `[1]`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{1}, Data: f8s(1)}}, "", "at no null"},
		{"af8", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{3}, Data: f8s(1)}}, "", "needs 24 bytes, the blob has 8"},
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
