package metrics

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
)

// userHZ is the kernel's clock tick for /proc's times, 100 on every Linux
// nexus runs on (as Prometheus's client assumes).
const userHZ = 100

// processFamilies reads the process's series from /proc/self.
func processFamilies() []family {
	var fams []family
	if st, ok := readProcStat(); ok {
		fams = append(fams,
			procCPU.family(float64(st.utime+st.stime)/userHZ),
			procVSize.family(float64(st.vsize)),
			procRSS.family(float64(st.rss*uint64(os.Getpagesize()))))
		if boot, ok := bootTime(); ok {
			fams = append(fams, procStartTime.family(float64(boot)+float64(st.starttime)/userHZ))
		}
	}
	if n, ok := openFDs(); ok {
		fams = append(fams, procOpenFDs.family(float64(n)))
	}
	fams = append(fams, limitFamilies()...)
	if in, out, ok := netOctets(); ok {
		fams = append(fams, procNetIn.family(in), procNetOut.family(out))
	}
	return fams
}

type procStat struct{ utime, stime, starttime, vsize, rss uint64 }

// readProcStat reads /proc/self/stat: the fields after the command's name
// (which may hold spaces and parentheses) from the state on, the 3rd.
func readProcStat() (procStat, bool) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 22 {
		return procStat{}, false
	}
	// man 5 proc: utime is field 14, stime 15, starttime 22, vsize 23, rss 24.
	var st procStat
	for _, v := range []struct {
		field int
		into  *uint64
	}{{14, &st.utime}, {15, &st.stime}, {22, &st.starttime}, {23, &st.vsize}, {24, &st.rss}} {
		n, err := strconv.ParseUint(f[v.field-3], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		*v.into = n
	}
	return st, true
}

// bootTime is /proc/stat's btime: when the system booted, in seconds.
// It never changes, so /proc/stat (long on a machine of many CPUs) is
// read once.
var bootTime = sync.OnceValues(func() (uint64, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
})

// openFDs counts the process's open descriptors: /proc/self/fd's size
// where the kernel gives it (Linux 6.2 on), else its entries, which
// include the one reading them.
func openFDs() (int, bool) {
	if fi, err := os.Stat("/proc/self/fd"); err == nil && fi.Size() > 0 {
		return int(fi.Size()), true
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return len(names), err == nil
}

// netOctets reads IpExt's InOctets and OutOctets from
// /proc/self/net/netstat (0 where missing): the bytes the process's
// network namespace received and sent.
func netOctets() (in, out float64, ok bool) {
	data, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		names := strings.Split(sc.Text(), " ")
		sc.Scan()
		values := strings.Split(sc.Text(), " ")
		if len(names) != len(values) {
			return 0, 0, false
		}
		if names[0] != "IpExt:" {
			continue
		}
		for i := 1; i < len(names); i++ {
			switch names[i] {
			case "InOctets", "OutOctets":
				x, err := strconv.ParseFloat(values[i], 64)
				if err != nil {
					return 0, 0, false
				}
				if names[i] == "InOctets" {
					in = x
				} else {
					out = x
				}
			}
		}
	}
	return in, out, true
}
