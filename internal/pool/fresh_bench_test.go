package pool

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// BenchmarkPoolFreshMemory measures what a large echo costs each runtime
// in its own process, the first time and again (docs/performance.md,
// "Fresh memory"): on a VM a
// page touched for the first time costs some 20 µs, so a runtime that
// touches fresh memory on every large call pays for it every time.
//
//	PATH=/usr/bin:$PATH go test ./internal/pool/ -run '^$' -bench PoolFreshMemory -benchtime 1x
//	NEXUS_FRESH_MB=10,100 NEXUS_FRESH_LANGS=cpp,py,r NEXUS_FRESH_WARM=3 (the defaults)
//
// Each language, kind and size gets a pool of its own; after a small
// warm-up call it echoes the payload once (cold) and NEXUS_FRESH_WARM
// times more (warm), as nexus would send it (an i8 or f8 array; i4 to R,
// which takes no i8). Reported per call, from /proc/<pid>/stat (CPU in
// 10 ms ticks, all threads): minor faults and CPU, cold and warm (the
// mean), the pool's peak RSS and its RSS after the last call (what it
// keeps between calls).
func BenchmarkPoolFreshMemory(b *testing.B) {
	sizes := []float64{10, 100}
	if s := os.Getenv("NEXUS_FRESH_MB"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				b.Fatalf("NEXUS_FRESH_MB: %v", err)
			}
			sizes = append(sizes, v)
		}
	}
	langs := []string{"cpp", "py", "r"}
	if s := os.Getenv("NEXUS_FRESH_LANGS"); s != "" {
		langs = strings.Split(s, ",")
	}
	warm := 3
	if s := os.Getenv("NEXUS_FRESH_WARM"); s != "" {
		warm, _ = strconv.Atoi(s)
	}
	for _, lang := range langs {
		for _, kind := range []string{"ints", "matrix"} {
			for _, mb := range sizes {
				b.Run(fmt.Sprintf("%s/%s/%gMB", lang, kind, mb), func(b *testing.B) {
					freshEcho(b, lang, kind, mb, warm)
				})
			}
		}
	}
}

// freshPayload is what nexus sends for make bench's payload of mb MB of
// JSON: random integers 0..999999 (6.9 bytes of JSON each) or a square
// matrix of reals in [1, 1000) (18 bytes each).
func freshPayload(kind, lang string, mb float64) (blob []byte, desc string) {
	rng := rand.New(rand.NewSource(1))
	if kind == "ints" {
		n := int(mb * 1e6 / 6.9)
		if lang == "r" {
			blob = make([]byte, 4*n)
			for i := range n {
				binary.LittleEndian.PutUint32(blob[4*i:], uint32(rng.Int63n(1_000_000)))
			}
			return blob, fmt.Sprintf(`{"path":[0],"dtype":"i4","shape":[%d]}],"ret":{"rank":1,"number":"int"},"returns":{"list":"int"}`, n)
		}
		blob = make([]byte, 8*n)
		for i := range n {
			binary.LittleEndian.PutUint64(blob[8*i:], uint64(rng.Int63n(1_000_000)))
		}
		return blob, fmt.Sprintf(`{"path":[0],"dtype":"i8","shape":[%d]}],"ret":{"rank":1,"number":"int"},"returns":{"list":"int"}`, n)
	}
	n := int(math.Round(math.Sqrt(mb * 1e6 / 18)))
	blob = make([]byte, 8*n*n)
	for i := range n * n {
		binary.LittleEndian.PutUint64(blob[8*i:], math.Float64bits(1+rng.Float64()*999))
	}
	return blob, fmt.Sprintf(`{"path":[0],"dtype":"f8","shape":[%d,%d]}],"ret":{"rank":2,"number":"real"},"returns":{"list":{"list":"real"}}`, n, n)
}

// procCounters are a process's minor faults, CPU ticks and RSS so far.
type procCounters struct {
	minflt, ticks uint64
	rssKB, hwmKB  uint64
}

func readCounters(b *testing.B, pid int) procCounters {
	f, err := testenv.ProcStat(pid)
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	// f[0] is field 3 (state): minflt is field 10, utime 14, stime 15.
	var c procCounters
	c.minflt, _ = strconv.ParseUint(f[7], 10, 64)
	ut, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	c.ticks = ut + st
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSuffix(strings.TrimSpace(v), " kB")
		switch k {
		case "VmRSS":
			c.rssKB, _ = strconv.ParseUint(v, 10, 64)
		case "VmHWM":
			c.hwmKB, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return c
}

func freshEcho(b *testing.B, lang, kind string, mb float64, warm int) {
	p, intsMid, matrixMid := startEchoPool(b, lang)
	mid := intsMid
	if kind == "matrix" {
		mid = matrixMid
	}
	pid := p.cmd.Process.Pid
	blob, desc := freshPayload(kind, lang, mb)
	call := func(blob []byte, desc string) {
		if reply, blobs := p.call(b, mid, "[null]", `,"arrays":[`+desc, blob); len(blobs) != 1 || len(blobs[0]) != len(blob) {
			b.Fatalf("reply %.300s with %d blobs", reply, len(blobs))
		}
	}
	small, smallDesc := freshPayload(kind, lang, 0.01)
	call(small, smallDesc)                                                // the runtime's code paths warm, as nexus's warm-up call makes them
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) // resets VmHWM
	c0 := readCounters(b, pid)
	call(blob, desc)
	c1 := readCounters(b, pid)
	for range warm {
		call(blob, desc)
	}
	c2 := readCounters(b, pid)
	// What it keeps: after a small call, once the large one's memory is
	// surely let go (a Python worker thread may still be freeing it).
	time.Sleep(200 * time.Millisecond)
	call(small, smallDesc)
	kept := readCounters(b, pid)
	b.ReportMetric(float64(c1.minflt-c0.minflt), "cold-faults")
	b.ReportMetric(float64(c1.ticks-c0.ticks)*10, "cold-cpu-ms")
	if warm > 0 {
		b.ReportMetric(float64(c2.minflt-c1.minflt)/float64(warm), "warm-faults")
		b.ReportMetric(float64(c2.ticks-c1.ticks)*10/float64(warm), "warm-cpu-ms")
	}
	b.ReportMetric(float64(c2.hwmKB)/1e3, "peak-MB")
	b.ReportMetric(float64(kept.rssKB)/1e3, "kept-MB")
	b.ReportMetric(float64(len(blob))/1e6, "blob-MB")
}
