package pool

// Benchmarks of the R runtime over real pipes, with testdata/r/arrays.R:
//
//	go test ./internal/pool/ -run '^$' -bench R -benchtime 20x
//
// Besides the round trip they report the R process's own CPU per call
// (r-cpu-µs/op, from /proc), which a shared machine disturbs less, and for
// the large echoes jsonlite's floor for the same payload, measured in the
// same process (floor-cpu-ms), and the ratio of the two.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rFloor asks the pool for jsonlite's CPU time on payload.
func rFloor(b *testing.B, p *benchPool, payload string) time.Duration {
	arg, _ := json.Marshal(payload)
	reply, _ := p.call(b, raJSONFloor, `[`+string(arg)+`]`, "")
	var secs float64
	if _, err := fmt.Sscanf(string(reply[bytes.Index(reply, []byte(`"value":`))+8:]), "%g", &secs); err != nil {
		b.Fatalf("floor reply %.200s: %v", reply, err)
	}
	return time.Duration(secs * float64(time.Second))
}

// rRun checks the reply of a call of mid once, then times b.N calls and
// reports the pool's CPU per call.
func rRun(b *testing.B, p *benchPool, mid int, args, extra string, blobs [][]byte, check func([]byte, [][]byte)) time.Duration {
	check(p.call(b, mid, args, extra, blobs...))
	perCall := p.measure(b, p.threadCPU, func() { p.call(b, mid, args, extra, blobs...) })
	b.ReportMetric(float64(perCall.Microseconds()), "r-cpu-µs/op")
	return perCall
}

// wantValue checks that a reply's value begins with prefix.
func wantValue(b *testing.B, prefix string) func([]byte, [][]byte) {
	return func(reply []byte, _ [][]byte) {
		if !bytes.Contains(reply, []byte(`"value":`+prefix)) {
			b.Fatalf("reply %.200s, want a value %s...", reply, prefix)
		}
	}
}

func BenchmarkRSmallCall(b *testing.B) {
	p, _, _ := startEchoPool(b, "r")
	rRun(b, p, raAdd, `[2,3]`, "", nil, wantValue(b, `5}`))
}

// benchInts is n integers that fit 32 bits, as JSON and as an i4 blob.
func benchInts(n int) (string, []byte) {
	var sb strings.Builder
	data := make([]byte, 4*n)
	sb.WriteByte('[')
	for i := range n {
		v := int32(uint32(i)*2654435761) / 2
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(int(v)))
		binary.LittleEndian.PutUint32(data[4*i:], uint32(v))
	}
	sb.WriteByte(']')
	return sb.String(), data
}

// benchMatrix is rows×3 reals, as JSON (as nexus writes them to a pool) and
// as an f8 blob.
func benchMatrix(rows int) (string, []byte) {
	var sb strings.Builder
	data := make([]byte, 8*3*rows)
	sb.WriteByte('[')
	for i := range rows {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('[')
		for j := range 3 {
			v := math.Sin(float64(3*i+j)) * math.Pow(10, float64((3*i+j)%7))
			if j > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			binary.LittleEndian.PutUint64(data[8*(3*i+j):], math.Float64bits(v))
		}
		sb.WriteByte(']')
	}
	sb.WriteByte(']')
	return sb.String(), data
}

func BenchmarkREcho(b *testing.B) {
	type echoCase struct {
		name, json string
		blob       []byte
		desc, ret  string
	}
	var cases []echoCase
	for _, n := range benchSizes([]int{250_000, 1_000_000}) {
		ints, blob := benchInts(n)
		cases = append(cases, echoCase{fmt.Sprintf("ints-%d", n), ints, blob, fmt.Sprintf(`{"path":[0],"dtype":"i4","shape":[%d]}`, n), `{"rank":1,"number":"int"}`})
	}
	for _, rows := range benchSizes([]int{50_000, 200_000}) {
		matrix, blob := benchMatrix(rows)
		cases = append(cases, echoCase{fmt.Sprintf("matrix-%dx3", rows), matrix, blob, fmt.Sprintf(`{"path":[0],"dtype":"f8","shape":[%d,3]}`, rows), `{"rank":2,"number":"real"}`})
	}
	for _, c := range cases {
		b.Run(c.name+"/json", func(b *testing.B) {
			p, echo, _ := startEchoPool(b, "r")
			floor := rFloor(b, p, c.json)
			perCall := rRun(b, p, echo, `[`+c.json+`]`, "", nil, wantValue(b, `[`))
			b.ReportMetric(float64(len(c.json))/1e6, "MB")
			b.ReportMetric(float64(floor.Milliseconds()), "floor-cpu-ms")
			b.ReportMetric(float64(perCall)/float64(floor), "×floor")
		})
		b.Run(c.name+"/arrays", func(b *testing.B) {
			p, echo, _ := startEchoPool(b, "r")
			floor := rFloor(b, p, c.json)
			extra := `,"arrays":[` + c.desc + `],"ret":` + c.ret
			perCall := rRun(b, p, echo, `[null]`, extra, [][]byte{c.blob}, func(reply []byte, blobs [][]byte) {
				if len(blobs) != 1 || len(blobs[0]) != len(c.blob) {
					b.Fatalf("reply %.200s with %d blobs, want one array", reply, len(blobs))
				}
			})
			b.ReportMetric(float64(len(c.json))/1e6, "MB")
			b.ReportMetric(float64(floor.Milliseconds()), "floor-cpu-ms")
			b.ReportMetric(float64(perCall)/float64(floor), "×floor")
		})
	}
}
