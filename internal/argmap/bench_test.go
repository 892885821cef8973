package argmap

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// intList is the JSON list of n integers f(0), f(1), ...
func intList(n int, f func(int) int) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(f(i)))
	}
	sb.WriteByte(']')
	return sb.String()
}

// millionInts spreads the benchmarks' integers over 0..999999.
func millionInts(i int) int { return (i * 7919) % 1000000 }

// BenchmarkToPositionalLargeList measures a call carrying 100k integers.
func BenchmarkToPositionalLargeList(b *testing.B) {
	tool := jsonHelpTool(b, "sumMany")
	args := json.RawMessage(`{"_1":` + intList(100_000, func(i int) int { return i * 7919 }) + `}`)
	b.SetBytes(int64(len(args)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tool.ToPositional(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFullPositionalLargeList: the same call by the full path (decoded,
// validated by the schema walker, converted), which decides every call the
// fast path declines.
func BenchmarkFullPositionalLargeList(b *testing.B) {
	tool := jsonHelpTool(b, "sumMany")
	args := json.RawMessage(`{"_1":` + intList(100_000, func(i int) int { return i * 7919 }) + `}`)
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		if _, err := tool.fullPositional(args); err != nil {
			b.Fatal(err)
		}
	}
}

// benchFast measures the fast path reading args, one array among them.
func benchFast(b *testing.B, tool *Tool, args []byte) {
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		call, ok := tool.fastPositional(args)
		if !ok || len(call.Arrays) != 1 {
			b.Fatal("declined")
		}
	}
}

// BenchmarkFastPositionalMillionInts: a client's list of a million
// integers, read into an array.
func BenchmarkFastPositionalMillionInts(b *testing.B) {
	tool := jsonHelpTool(b, "sumMany")
	args := []byte(`{"_1":` + intList(1_000_000, millionInts) + `}`)
	benchFast(b, tool, args)
}

// BenchmarkFastPositionalMatrix: a client's 1000 × 1000 matrix of reals.
func BenchmarkFastPositionalMatrix(b *testing.B) {
	tool := toolOf(b, remote("m", "aaf8", pos("aaf8", ``), ``))
	var sb strings.Builder
	sb.WriteString(`{"_1":[`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('[')
		for j := 0; j < 1000; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.FormatFloat(float64(i*1000+j)*0.001234567, 'g', -1, 64))
		}
		sb.WriteByte(']')
	}
	sb.WriteString(`]}`)
	args := []byte(sb.String())
	benchFast(b, tool, args)
}

// BenchmarkResultValueJSONInts: a pool's JSON result of a million
// integers (as R and C++ send a list they do not send as an array).
func BenchmarkResultValueJSONInts(b *testing.B) {
	raw := []byte(intList(1_000_000, millionInts))
	benchResult(b, "aj", ndarray.Value{JSON: raw}, len(raw))
}

// benchResult measures ResultValue on v, a result of type schema, n bytes
// of it.
func benchResult(b *testing.B, schema string, v ndarray.Value, n int) {
	ty, err := manifest.ParseType(schema)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		if _, err := ResultValue(&manifest.Return{T: ty}, v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResultValueArrayReals: a 1000 × 1000 matrix of reals sent back
// as an array.
func BenchmarkResultValueArrayReals(b *testing.B) {
	var data []byte
	for i := 0; i < 1_000_000; i++ {
		data = binary.LittleEndian.AppendUint64(data, math.Float64bits(float64(i)*0.001234567))
	}
	v := ndarray.Value{JSON: []byte("null"), Arrays: []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{1000, 1000}, Data: data}}}
	benchResult(b, "aaf8", v, len(data))
}

// BenchmarkResultCheck measures what checking a result against its type
// costs: the same JSON written with its declared type
// ("checked") and with none ("unchecked": still validated and compacted,
// which any reply needs). The ratio checked/unchecked is the check's price.
func BenchmarkResultCheck(b *testing.B) {
	ints := func() []byte { return []byte(intList(1_000_000, millionInts)) }
	rows := func() []byte {
		var sb strings.Builder
		sb.WriteByte('[')
		for i := 0; i < 100_000; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`{"name":"sample-`)
			sb.WriteString(strconv.Itoa(i))
			sb.WriteString(`","count":`)
			sb.WriteString(strconv.Itoa(i * 31))
			sb.WriteString(`,"score":`)
			sb.WriteString(strconv.FormatFloat(float64(i)*0.125+0.5, 'g', -1, 64))
			sb.WriteString(`,"tags":["a","bc"]}`)
		}
		sb.WriteByte(']')
		return []byte(sb.String())
	}
	for _, c := range []struct {
		name, schema string
		raw          []byte
	}{
		{"MillionInts", "aj", ints()},
		{"RecordRows", "am44names5countj5scoref84tagsas", rows()},
	} {
		ty, err := manifest.ParseType(c.schema)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name string
			ret  *manifest.Return
		}{{"checked", &manifest.Return{T: ty}}, {"unchecked", nil}} {
			b.Run(c.name+"/"+mode.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.raw)))
				for b.Loop() {
					if _, err := ResultValue(mode.ret, ndarray.Value{JSON: c.raw}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
