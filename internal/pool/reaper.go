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

// reaperScript is the reaper as a POSIX shell script, the same protocol as
// runReaper: a shell holds a megabyte where a second Go runtime holding
// nexus's whole program image would hold ten (issue 9 wants the reaper
// at 3 MB or less). The groups are kept in g as " pgid pgid ... ".
const reaperScript = `trap '' INT HUP PIPE
g=' '
while IFS= read -r l; do
  case $l in
  =) exit 0 ;;
  [+-][0-9]*)
    p=${l#?}
    case $p in *[!0-9]*) continue ;; esac
    [ "$p" -gt 1 ] || continue
    case $l in
    +*) g="$g$p " ;;
    *) case $g in *" $p "*) g="${g%% $p *} ${g#* $p }" ;; esac ;;
    esac ;;
  esac
done
for p in $g; do kill -s KILL -- "-$p" 2>/dev/null; done
exit 0
`

// reaperShell is the shell that runs reaperScript; without it nexus runs
// a copy of itself (RunReaperIfAsked).
const reaperShell = "/bin/sh"

// startReaper starts the reaper: reaperScript in the system's shell, or
// this program again with reaperEnv set, whose main must then call
// RunReaperIfAsked first thing.
func startReaper(stderr *os.File) (*reaper, error) {
	var cmd *exec.Cmd
	if _, err := os.Stat(reaperShell); err == nil {
		cmd = exec.Command(reaperShell)
		// ps shows "nexus-reaper -c eval ...", not the script.
		cmd.Args = []string{"nexus-reaper", "-c", `eval "$NEXUS_REAPER_SCRIPT"`}
		cmd.Env = append(os.Environ(), "NEXUS_REAPER_SCRIPT="+reaperScript)
	} else {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("starting the reaper: %w", err)
		}
		cmd = exec.Command(self)
		cmd.Args = []string{"nexus-reaper"} // what ps shows
		cmd.Env = append(os.Environ(), reaperEnv+"=1")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
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
