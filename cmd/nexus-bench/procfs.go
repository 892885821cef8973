package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// It is 100 on every Linux architecture Go runs on (getconf CLK_TCK).
const clockTicks = 100

// procStat is what the driver reads from /proc/<pid>/stat.
type procStat struct {
	ppid  int
	ticks uint64 // utime + stime: CPU time of every thread, exited ones included
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// comm, field 2, is in parentheses and may hold spaces: count from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no ')' in %q", pid, b)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields after comm", pid, len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	ut, err2 := strconv.ParseUint(f[11], 10, 64)
	st, err3 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: bad fields %q", pid, f[:13])
	}
	return procStat{ppid: ppid, ticks: ut + st}, nil
}

// cpuTicks sums utime+stime of pids; a pid that is gone counts 0.
func cpuTicks(pids ...int) uint64 {
	var t uint64
	for _, pid := range pids {
		if st, err := readStat(pid); err == nil {
			t += st.ticks
		}
	}
	return t
}

// machineTicks is the time every CPU of the machine has spent busy
// (user, nice, system, irq, softirq) and stolen by the hypervisor, from
// the first line of /proc/stat, in clock ticks.
func machineTicks() (busy, steal uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := strings.Fields(string(line))
	// cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: first line %q", line)
	}
	var v [8]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: field %d of %q", i+1, line)
		}
	}
	return v[0] + v[1] + v[2] + v[5] + v[6], v[7], nil
}

// ticksToMicros converts a tick count to microseconds.
func ticksToMicros(t uint64) float64 { return float64(t) * 1e6 / clockTicks }

// children lists the processes whose parent is pid.
func children(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(child); err == nil && st.ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// cmdline is the process's argv joined by spaces ("" when it is gone).
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// memory is a process's resident set now and at its high-water mark, in bytes.
type memory struct{ rss, hwm int64 }

func readMemory(pid int) (memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	var m memory
	for line := range strings.SplitSeq(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return memory{}, fmt.Errorf("/proc/%d/status: %s: %q", pid, key, val)
		}
		if key == "VmRSS" {
			m.rss = kb * 1024
		} else {
			m.hwm = kb * 1024
		}
	}
	if m.rss == 0 {
		return memory{}, fmt.Errorf("/proc/%d/status has no VmRSS (a zombie?)", pid)
	}
	return m, nil
}

// resetPeak makes VmHWM start again from the current RSS (Linux 4.0+:
// writing 5 to clear_refs resets the peak resident set size).
func resetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// family is a nexus process and the children it started, found in /proc.
type family struct {
	nexus  int
	reaper int              // 0 when not found
	pools  map[string][]int // by pool language, one pid per worker
}

// findFamily classifies nexus's children: the reaper says so in its argv
// ("nexus-reaper"), a pool by its exec's last word (pool.py, pool.R,
// pool-cpp.out). Anything else is ignored.
func findFamily(nexus int, pools []manifestPool) family {
	f := family{nexus: nexus, pools: map[string][]int{}}
	for _, pid := range children(nexus) {
		cl := cmdline(pid)
		if strings.Contains(cl, "nexus-reaper") {
			f.reaper = pid
			continue
		}
		for _, p := range pools {
			if p.marker != "" && strings.Contains(cl, p.marker) {
				f.pools[p.lang] = append(f.pools[p.lang], pid)
				break
			}
		}
	}
	return f
}

// poolMarker is the word of a pool's exec that shows in its process's
// argv whatever the interpreter makes of it (Rscript becomes R --file=...).
func poolMarker(exec []string) string {
	if len(exec) == 0 {
		return ""
	}
	return filepath.Base(exec[len(exec)-1])
}
