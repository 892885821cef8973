package metrics

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// processFamilies reads what macOS gives a process without cgo, as
// Prometheus's client does there: its start, CPU, open descriptors and
// limits (no memory or network figures).
func processFamilies() []family {
	var fams []family
	if procs, err := unix.SysctlKinfoProcSlice("kern.proc.pid", os.Getpid()); err == nil && len(procs) == 1 {
		fams = append(fams, procStartTime.family(float64(procs[0].Proc.P_starttime.Nano()/1e9)))
	}
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err == nil {
		fams = append(fams, procCPU.family(time.Duration(ru.Stime.Nano()+ru.Utime.Nano()).Seconds()))
	}
	if n, ok := openFDs(); ok {
		fams = append(fams, procOpenFDs.family(float64(n)))
	}
	return append(fams, limitFamilies()...)
}

// openFDs counts the entries of /dev/fd but the one reading it.
func openFDs() (int, bool) {
	d, err := os.Open("/dev/fd")
	if err != nil {
		return 0, false
	}
	defer d.Close()
	names, err := d.Readdirnames(0)
	return len(names) - 1, err == nil
}
