package pool

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The C++ runtime's costs against its floors, measured in the pool
// process (its CPU time from /proc), not in the Go driver:
//
//	go test ./internal/pool/ -run '^$' -bench Cpp -benchtime 20000x   (small calls)
//	go test ./internal/pool/ -run '^$' -bench CppEcho -benchtime 5x
//
// "bare" is testdata/cpp/bare.cpp, a loop of read, nlohmann parse, dump and
// write with no runtime; "floor" is nlohmann's parse + dump of the same
// payload in one process, no pipe.

// reportPoolCPU reports the pool's CPU per call, in unit ("us" or "ms").
func reportPoolCPU(b *testing.B, unit string, perCall time.Duration) {
	switch unit {
	case "us":
		b.ReportMetric(float64(perCall.Microseconds()), "pool-µs/call")
	default:
		b.ReportMetric(float64(perCall.Milliseconds()), "pool-ms/call")
	}
}

// measureCpp runs call as benchPool.measure does and reports the pool's
// CPU per call.
func measureCpp(b *testing.B, p *benchPool, unit string, call func()) {
	reportPoolCPU(b, unit, p.measure(b, p.cpu, call))
}

func BenchmarkCppSmallCall(b *testing.B) {
	bareExe := buildCppProgram(b, "bare.cpp")
	b.Run("runtime", func(b *testing.B) {
		p, _, _ := startEchoPool(b, "cpp")
		measureCpp(b, p, "us", func() { p.call(b, cppAddInts, `[20,22]`, "") })
	})
	b.Run("bare", func(b *testing.B) {
		p := startBenchPool(b, "cpp", filepath.Dir(bareExe), bareExe)
		measureCpp(b, p, "us", func() { p.call(b, 1, `[20,22]`, "") })
	})
}

// echoPayload is a list of n random integers (ints) or a grid of random
// reals of about the given size in JSON, with its numbers.
func echoPayload(kind string, size int) (text string, ints []int64, reals []float64, shape []int) {
	rng := rand.New(rand.NewSource(1))
	var sb strings.Builder
	if kind == "ints" {
		sb.WriteByte('[')
		for sb.Len() < size {
			if len(ints) > 0 {
				sb.WriteByte(',')
			}
			v := rng.Int63n(1_000_000)
			ints = append(ints, v)
			sb.WriteString(strconv.FormatInt(v, 10))
		}
		sb.WriteByte(']')
		return sb.String(), ints, nil, []int{len(ints)}
	}
	const cols = 1000
	rows := 0
	sb.WriteByte('[')
	for sb.Len() < size {
		if rows > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('[')
		for j := 0; j < cols; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			v := rng.Float64() * 1000
			reals = append(reals, v)
			sb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		sb.WriteByte(']')
		rows++
	}
	sb.WriteByte(']')
	return sb.String(), nil, reals, []int{rows, cols}
}

func BenchmarkCppEcho(b *testing.B) {
	bareExe := buildCppProgram(b, "bare.cpp")
	for _, kind := range []string{"ints", "grid"} {
		for _, mb := range benchSizes([]int{7, 20}) {
			text, ints, reals, shape := echoPayload(kind, mb<<20)
			mid, dtype, rank, number := cppEchoI64s, "i8", 1, "int"
			blob := make([]byte, 0, 8*max(len(ints), len(reals)))
			for _, v := range ints {
				blob = binary.LittleEndian.AppendUint64(blob, uint64(v))
			}
			if kind == "grid" {
				mid, dtype, rank, number = cppEchoGrid, "f8", 2, "real"
				for _, v := range reals {
					blob = binary.LittleEndian.AppendUint64(blob, math.Float64bits(v))
				}
			}
			shapeText, _ := json.Marshal(shape)
			name := fmt.Sprintf("%s-%dMB", kind, mb)
			b.Run(name+"/floor", func(b *testing.B) {
				file := filepath.Join(b.TempDir(), "payload.json")
				if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
					b.Fatal(err)
				}
				for i := 0; i < b.N; i++ {
					out, err := exec.Command(bareExe, "floor", file, "3").Output()
					if err != nil {
						b.Fatal(err)
					}
					us, _ := strconv.ParseFloat(strings.Fields(string(out))[0], 64)
					b.ReportMetric(us/1000, "floor-ms")
				}
			})
			b.Run(name+"/bare", func(b *testing.B) {
				p := startBenchPool(b, "cpp", filepath.Dir(bareExe), bareExe)
				measureCpp(b, p, "ms", func() { p.call(b, 2, "["+text+"]", "") })
			})
			b.Run(name+"/runtime", func(b *testing.B) {
				p, _, _ := startEchoPool(b, "cpp")
				measureCpp(b, p, "ms", func() { p.call(b, mid, "["+text+"]", "") })
			})
			b.Run(name+"/arrays", func(b *testing.B) {
				p, _, _ := startEchoPool(b, "cpp")
				if !p.arrays {
					b.Skip("the pool takes no arrays")
				}
				extra := `,"arrays":[{"path":[0],"dtype":"` + dtype + `","shape":` + string(shapeText) + `}],"ret":{"rank":` +
					strconv.Itoa(rank) + `,"number":"` + number + `"}`
				measureCpp(b, p, "ms", func() {
					if _, blobs := p.call(b, mid, "[null]", extra, blob); len(blobs) != 1 || len(blobs[0]) != len(blob) {
						b.Fatalf("the result came as %d blobs, want one of %d bytes", len(blobs), len(blob))
					}
				})
			})
		}
	}
}
