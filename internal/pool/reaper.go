//go:build unix

package pool

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// reaperEnv marks a process started as nexus's reaper.
const reaperEnv = "NEXUS_REAPER"

// reaper is nexus's end of its reaper: a copy of the nexus binary, in a
// process group of its own, that outlives nexus to kill its pools' process
// groups should nexus die without stopping them (SIGKILL, a crash). nexus
// tells it each group as a pool starts ("+pgid") and once it is gone
// ("-pgid"); when the pipe ends without nexus having closed it (nexus is
// gone) the reaper kills every group it was told of and exits. Runtimes that
// kill their own group when nexus goes cover most of this; the reaper covers
// the rest: R, which cannot catch SIGTERM, a runtime stuck in a call, a
// runtime that does not try.
type reaper struct {
	mu     sync.Mutex
	w      *os.File // the reaper's stdin
	cmd    *exec.Cmd
	exited chan struct{}
}

// startReaper starts the reaper: this program, again, with reaperEnv set;
// its main must call RunReaperIfAsked first thing.
func startReaper(stderr *os.File) (*reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Args = []string{"nexus-reaper"} // what ps shows
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	cmd.Stdin = r
	cmd.Stderr = stderr
	// Its own group: a terminal's Ctrl-C to nexus's group must not take it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	r.Close()
	rp := &reaper{w: w, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(rp.exited) }()
	return rp, nil
}

// watch tells the reaper of a pool's process group.
func (r *reaper) watch(pgid int) { r.send('+', pgid) }

// forget tells the reaper that a pool's process group is gone.
func (r *reaper) forget(pgid int) { r.send('-', pgid) }

func (r *reaper) send(op byte, pgid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		fmt.Fprintf(r.w, "%c%d\n", op, pgid)
	}
}

// close ends the reaper once every pool is stopped: it is told to exit
// ("=") and its pipe is closed.
func (r *reaper) close(logger *slog.Logger) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.w != nil {
		fmt.Fprint(r.w, "=\n")
		r.w.Close()
		r.w = nil
	}
	r.mu.Unlock()
	select {
	case <-r.exited:
	case <-time.After(5 * time.Second):
		logger.Warn("the reaper did not exit; killing it", "pid", r.cmd.Process.Pid)
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
}

// RunReaperIfAsked makes this process serve as nexus's reaper, and exit,
// when it was started as one (see reaper); otherwise it returns at once.
// A program that starts pools with Options.Reaper calls it first in main.
func RunReaperIfAsked() {
	if os.Getenv(reaperEnv) != "1" {
		return
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	os.Exit(runReaper(os.Stdin))
}

// runReaper reads "+pgid", "-pgid" and "=" lines; at the end of its input,
// unless "=" came first, it kills every group still listed.
func runReaper(in *os.File) int {
	groups := map[int]bool{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if line == "=" {
			return 0 // nexus stopped its pools itself
		}
		if len(line) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(line[1:])
		if err != nil || pgid <= 1 {
			continue
		}
		switch line[0] {
		case '+':
			groups[pgid] = true
		case '-':
			delete(groups, pgid)
		}
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	return 0
}
