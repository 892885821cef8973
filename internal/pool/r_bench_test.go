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
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// rBenchPool is testdata/r/arrays.R on bare pipes.
type rBenchPool struct{ *rawPool }

func startRBench(b *testing.B) *rBenchPool {
	b.Helper()
	if why := testenv.RMissing(); why != "" {
		b.Skip(why)
	}
	p := &rBenchPool{startRawProcess(b, &rawPool{}, "r", rTestdata(b), []string{"Rscript", "arrays.R"}, nil)}
	p.recvExact(b) // ready
	return p
}

// call sends blobs and a message and returns the reply and its blobs.
func (p *rBenchPool) call(b *testing.B, blobs [][]byte, msg string) (string, [][]byte) {
	for _, d := range blobs {
		p.sendBlob(b, d)
	}
	p.send(b, msg)
	reply, replyBlobs := p.recvExact(b)
	return string(reply), replyBlobs
}

// cpu is the R process's CPU time so far, from the scheduler's own count
// (schedstat, in ns): utime and stime come in 10 ms ticks, which misjudge
// a process that runs in bursts of microseconds.
func (p *rBenchPool) cpu(b *testing.B) time.Duration {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", p.cmd.Process.Pid))
	if err != nil {
		b.Skip("no /proc: cannot measure the pool's CPU")
	}
	var total time.Duration
	for _, task := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", p.cmd.Process.Pid, task.Name()))
		if err != nil {
			b.Skip("no schedstat: cannot measure the pool's CPU")
		}
		ns, err := strconv.ParseInt(strings.Fields(string(stat))[0], 10, 64)
		if err != nil {
			b.Fatalf("schedstat %q: %v", stat, err)
		}
		total += time.Duration(ns)
	}
	return total
}

// floor asks the pool for jsonlite's CPU time on payload.
func (p *rBenchPool) floor(b *testing.B, payload string) time.Duration {
	arg, _ := json.Marshal(payload)
	reply, _ := p.call(b, nil, `{"type":"call","id":1,"mid":7,"args":[`+string(arg)+`]}`)
	var secs float64
	if _, err := fmt.Sscanf(reply[strings.Index(reply, `"value":`)+8:], "%g", &secs); err != nil {
		b.Fatalf("floor reply %.200s: %v", reply, err)
	}
	return time.Duration(secs * float64(time.Second))
}

// run times msg b.N times and reports the pool's CPU per call.
func (p *rBenchPool) run(b *testing.B, blobs [][]byte, msg string, check func(string, [][]byte)) time.Duration {
	reply, rb := p.call(b, blobs, msg) // warm up, and look at the answer once
	check(reply, rb)
	before := p.cpu(b)
	b.ResetTimer()
	for range b.N {
		p.call(b, blobs, msg)
	}
	b.StopTimer()
	perCall := (p.cpu(b) - before) / time.Duration(b.N)
	b.ReportMetric(float64(perCall.Microseconds()), "r-cpu-µs/op")
	return perCall
}

func wantResult(b *testing.B, prefix string) func(string, [][]byte) {
	return func(reply string, _ [][]byte) {
		if !strings.HasPrefix(reply, prefix) {
			b.Fatalf("reply %.200s, want %s...", reply, prefix)
		}
	}
}

func BenchmarkRSmallCall(b *testing.B) {
	p := startRBench(b)
	p.run(b, nil, `{"type":"call","id":2,"mid":2,"args":[2,3]}`, wantResult(b, `{"type":"result","id":2,"value":5}`))
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
			p := startRBench(b)
			floor := p.floor(b, c.json)
			perCall := p.run(b, nil, `{"type":"call","id":3,"mid":1,"args":[`+c.json+`]}`, wantResult(b, `{"type":"result","id":3,"value":[`))
			b.ReportMetric(float64(len(c.json))/1e6, "MB")
			b.ReportMetric(float64(floor.Milliseconds()), "floor-cpu-ms")
			b.ReportMetric(float64(perCall)/float64(floor), "×floor")
		})
		b.Run(c.name+"/arrays", func(b *testing.B) {
			p := startRBench(b)
			floor := p.floor(b, c.json)
			msg := `{"type":"call","id":4,"mid":1,"args":[null],"arrays":[` + c.desc + `],"ret":` + c.ret + `}`
			perCall := p.run(b, [][]byte{c.blob}, msg, func(reply string, blobs [][]byte) {
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

// benchSizes is sizes, or under -short only the smallest: make test runs
// every benchmark once with -short so that none can rot, and quickly.
func benchSizes(sizes []int) []int {
	if testing.Short() {
		return sizes[:1]
	}
	return sizes
}
