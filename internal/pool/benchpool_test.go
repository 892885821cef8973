package pool

// What the benchmarks of the language runtimes share: a test pool on bare
// pipes, with no Set between (benchPool), its CPU per call, and the sizes
// they run.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// benchPool is a pool process on bare pipes, past its ready message.
type benchPool struct {
	*rawPool
	id     int  // the last call's
	arrays bool // its ready message listed dtypes
}

// startBenchPool starts argv in dir as a pool of lang and reads its ready
// message.
func startBenchPool(b *testing.B, lang, dir string, argv ...string) *benchPool {
	b.Helper()
	p := &benchPool{rawPool: startRawProcess(b, &rawPool{}, lang, dir, argv, nil)}
	body, _ := p.recvExact(b)
	var ready struct{ Arrays []string }
	json.Unmarshal(body, &ready)
	p.arrays = len(ready.Arrays) > 0
	return p
}

// startEchoPool starts lang's test pool that echoes arrays and returns
// it with the mids of its echoes of a list of integers and of a matrix of
// reals.
func startEchoPool(b *testing.B, lang string) (p *benchPool, intsMid, matrixMid int) {
	b.Helper()
	switch lang {
	case "cpp":
		exe := buildCppTestPool(b)
		return startBenchPool(b, "cpp", filepath.Dir(exe), exe), cppEchoI64s, cppEchoGrid
	case "py":
		testenv.NeedPython(b)
		return startBenchPool(b, "py", testdataPath(b, "pools"), "python3", "arrays.py"), arrEcho, arrEcho
	case "r":
		testenv.NeedR(b)
		return startBenchPool(b, "r", rTestdata(b), "Rscript", "arrays.R"), raEcho, raEcho
	}
	b.Fatalf("unknown language %q", lang)
	return nil, 0, 0
}

// call sends a call of mid with args (a JSON array) and extra fields of
// the message, its blobs first, and returns the result message and the
// blobs before it; any other reply fails b.
func (p *benchPool) call(b *testing.B, mid int, args, extra string, blobs ...[]byte) ([]byte, [][]byte) {
	p.id++
	for _, d := range blobs {
		p.sendBlob(b, d)
	}
	p.send(b, `{"type":"call","id":`+strconv.Itoa(p.id)+`,"mid":`+strconv.Itoa(mid)+`,"args":`+args+extra+`}`)
	reply, replyBlobs := p.recvExact(b)
	if !bytes.Contains(reply, []byte(`"type":"result"`)) {
		b.Fatalf("reply %.300s", reply)
	}
	return reply, replyBlobs
}

// measure runs call once to warm up, then b.N times, and returns the
// pool's CPU time per call as cpu counts it.
func (p *benchPool) measure(b *testing.B, cpu func(*testing.B) time.Duration, call func()) time.Duration {
	call()
	b.ResetTimer()
	before := cpu(b)
	for range b.N {
		call()
	}
	used := cpu(b) - before
	b.StopTimer()
	return used / time.Duration(b.N)
}

// cpu is the CPU time the process has used, all its threads included,
// those that ended too (the C++ and Python runtimes run each call on a
// thread of its own), in 10 ms ticks: for many calls.
func (p *benchPool) cpu(b *testing.B) time.Duration {
	f, err := testenv.ProcStat(p.cmd.Process.Pid)
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// threadCPU is the CPU time of the process's live threads, from the
// scheduler's own count (schedstat, in ns): for a pool that runs calls on
// one thread (R), in bursts of microseconds that ticks misjudge.
func (p *benchPool) threadCPU(b *testing.B) time.Duration {
	pid := p.cmd.Process.Pid
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Skip("no /proc: cannot measure the pool's CPU")
	}
	var total time.Duration
	for _, task := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, task.Name()))
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

// benchSizes is sizes, or under -short only the smallest: make test runs
// every benchmark once with -short so that none can rot, and quickly.
func benchSizes(sizes []int) []int {
	if testing.Short() {
		return sizes[:1]
	}
	return sizes
}
