package morlocwire

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// The benchmarks of a 1M-element [Real] and [Int] result and argument,
// each beside encoding/json doing the same job on the same numbers: the
// floor (docs/performance.md, "Go micro-benchmarks").

const benchN = 1 << 20

// benchRun measures fn as the sub-benchmark name, n bytes a run.
func benchRun(b *testing.B, name string, n int64, fn func() error) {
	b.Run(name, func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			if err := fn(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchReals() []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, benchN)
	for i := range xs {
		xs[i] = r.NormFloat64() * 1000
	}
	return xs
}

func benchInts() []int32 {
	r := rand.New(rand.NewPCG(3, 4))
	xs := make([]int32, benchN)
	for i := range xs {
		xs[i] = int32(r.Uint32())
	}
	return xs
}

// rptrResult builds an RPTR result whose list lives in a shared-memory
// volume file (0.69 layout: {size, data} then the numbers), opened as
// morloc's file-backed fallback, as a pool's > 64 KiB result is read.
func rptrResult(b *testing.B, data []byte) (*Packet, *Memory) {
	dir := b.TempDir()
	basename := "morloc-bench-" + filepath.Base(dir)
	region := binary.LittleEndian.AppendUint64(nil, benchN)
	region = binary.LittleEndian.AppendUint64(region, 16)
	region = append(region, data...)
	writeVolume(b, dir, basename, 0, C, region)
	p := &Packet{Header: Header{Magic: Magic, Command: [8]byte{TypeData, SourceRptr, FormatVoidstar}, Length: 8}, Payload: make([]byte, 8)}
	return p, OpenMemory(basename, dir, C)
}

func BenchmarkDecodeReals1M(b *testing.B) {
	xs := benchReals()
	data := make([]byte, 0, 8*benchN)
	for _, x := range xs {
		data = binary.LittleEndian.AppendUint64(data, math.Float64bits(x))
	}
	benchDecode(b, "af8", xs, data, func(p *Packet, ty *manifest.Type, mem *Memory) error {
		v, err := p.Value(ty, C, mem)
		if err != nil {
			return err
		}
		_, err = ndarray.AppendJSONSpelled(make([]byte, 0, ndarray.JSONSize(&v.Arrays[0], ndarray.Real)), &v.Arrays[0], ndarray.Real, ndarray.ClientSpelling)
		return err
	})
}

func BenchmarkDecodeInts1M(b *testing.B) {
	xs := benchInts()
	data := make([]byte, 0, 4*benchN)
	for _, x := range xs {
		data = binary.LittleEndian.AppendUint32(data, uint32(x))
	}
	benchDecode(b, "ai4", xs, data, nil)
}

// benchDecode measures reading data, the numbers xs as a pool's result of
// type schema, beside encoding/json writing xs; valueJSON, when given, is
// measured too, as "morlocwire/Value+JSON".
func benchDecode(b *testing.B, schema string, xs any, data []byte, valueJSON func(*Packet, *manifest.Type, *Memory) error) {
	p, mem := rptrResult(b, data)
	defer mem.Close()
	ty := mustType(b, schema)
	n := int64(len(data))
	benchRun(b, "morlocwire/Result", n, func() error {
		_, err := p.Result(ty, C, mem)
		return err
	})
	if valueJSON != nil {
		benchRun(b, "morlocwire/Value+JSON", n, func() error { return valueJSON(p, ty, mem) })
	}
	benchRun(b, "encoding-json/Marshal", n, func() error {
		_, err := json.Marshal(xs)
		return err
	})
}

func BenchmarkEncodeReals1M(b *testing.B) {
	xs := benchReals()
	a := ndarray.Array{DType: ndarray.F8, Shape: []int{benchN}}
	for _, x := range xs {
		a.Data = binary.LittleEndian.AppendUint64(a.Data, math.Float64bits(x))
	}
	benchEncode(b, "af8", xs, a, 8)
}

func BenchmarkEncodeInts1M(b *testing.B) {
	xs := benchInts()
	a := ndarray.Array{DType: ndarray.I8, Shape: []int{benchN}}
	for _, x := range xs {
		a.Data = binary.LittleEndian.AppendUint64(a.Data, uint64(int64(x)))
	}
	benchEncode(b, "ai4", xs, a, 4)
}

// benchEncode measures writing xs as an argument of type schema, from the
// array a and from its JSON, beside encoding/json reading that JSON; width
// is the bytes of one number.
func benchEncode[E any](b *testing.B, schema string, xs []E, a ndarray.Array, width int64) {
	text, _ := json.Marshal(xs)
	ty := mustType(b, schema)
	benchRun(b, "morlocwire/AppendArrayArg", width*benchN, func() error {
		_, err := AppendArrayArg(nil, ty, a, C)
		return err
	})
	benchRun(b, "morlocwire/AppendArg-from-JSON", width*benchN, func() error {
		_, err := AppendArg(nil, ty, text, C)
		return err
	})
	benchRun(b, "encoding-json/Unmarshal", width*benchN, func() error {
		var out []E
		return json.Unmarshal(text, &out)
	})
}
