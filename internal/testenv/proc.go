package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The tests that check that nexus leaves no process behind read this
// machine's processes from /proc (proc(5)).

// ProcStat is the fields of /proc/PID/stat after the command name: the
// state is [0] ("Z" for a zombie), the parent's pid [1], the process
// group [2], and so on.
func ProcStat(pid int) ([]string, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	// The command name is in parentheses and may hold spaces: split after the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name in %q", pid, stat)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 3 {
		return nil, fmt.Errorf("/proc/%d/stat: too few fields in %q", pid, stat)
	}
	return f, nil
}

// Running reports whether process pid runs: it exists and is neither a
// zombie nor dead (reaping an orphan is init's business, and may take it a
// moment). On a machine without /proc, a process that exists runs.
func Running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	f, err := ProcStat(pid)
	if err != nil {
		_, noProc := os.Stat("/proc/self")
		return errors.Is(noProc, fs.ErrNotExist)
	}
	return f[0] != "Z" && f[0] != "X"
}

// Pids lists the processes of this machine, as /proc has them.
func Pids() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
