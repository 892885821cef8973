package metrics

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Go's and the process's series hold this process's figures.
func TestGoAndProcessValues(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process's series differ by system")
	}
	_, page := scrape(t, New(), "/metrics")
	value := func(series string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no %s:\n%s", series, page)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("%s: %v", series, err)
		}
		return v
	}
	var nofile syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	now := float64(time.Now().Unix())
	for _, c := range []struct {
		series   string
		min, max float64
	}{
		{"go_sched_gomaxprocs_threads", float64(runtime.GOMAXPROCS(0)), float64(runtime.GOMAXPROCS(0))},
		{`go_info{version="` + runtime.Version() + `"}`, 1, 1},
		{"go_goroutines", 1, 1e4},
		{"go_threads", 1, 1e4},
		{"go_memstats_heap_alloc_bytes", 1, 1 << 40},
		{"go_memstats_mallocs_total", 1, 1 << 50},
		{"go_gc_gomemlimit_bytes", float64(debug.SetMemoryLimit(-1)), float64(debug.SetMemoryLimit(-1))},
		{"process_start_time_seconds", now - 3600, now + 1},
		{"process_cpu_seconds_total", 0, 3600},
		{"process_resident_memory_bytes", 1 << 20, 1 << 40},
		{"process_virtual_memory_bytes", 1 << 20, 1 << 50},
		{"process_open_fds", 3, float64(nofile.Cur)},
		{"process_max_fds", float64(nofile.Cur), float64(nofile.Cur)},
	} {
		if v := value(c.series); v < c.min || v > c.max {
			t.Errorf("%s = %v, want within [%v, %v]", c.series, v, c.min, c.max)
		}
	}
	if sys, heap := value("go_memstats_sys_bytes"), value("go_memstats_heap_sys_bytes"); sys < heap {
		t.Errorf("go_memstats_sys_bytes %v < go_memstats_heap_sys_bytes %v", sys, heap)
	}
}
