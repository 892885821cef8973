//go:build unix

package pool

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nexus-mcp/nexus/internal/morlocwire"
)

// reaperEnv marks a process started as nexus's reaper.
const reaperEnv = "NEXUS_REAPER"

// reaper is nexus's end of its reaper: a copy of the nexus binary, in a
// process group of its own, that outlives nexus to kill its pools' process
// groups should nexus die without stopping them (SIGKILL, a crash). nexus
// tells it each group as a pool starts ("+pgid") and once it is gone
// ("-pgid"), and what a morloc program leaves on disk: its temporary
// directory ("d/tmp/morloc.123") and its shared-memory basename
// ("smorloc-42-0123456789abcdef": /dev/shm/<basename>_* and .registry);
// when the pipe ends without nexus having said goodbye ("="; nexus is
// gone, or left the rest to it: Set.Abandon) the reaper kills every group
// it was told of, removes those files and exits, having let go of the
// stderr it shares with nexus first, so that whoever waits for nexus's
// output to end does not wait for it.
// Runtimes that
// kill their own group when nexus goes cover most of this; the reaper covers
// the rest: R, which cannot catch SIGTERM, a runtime stuck in a call, a
// runtime that does not try.
type reaper struct {
	mu     sync.Mutex
	w      *os.File      // the reaper's stdin; nil once closed, or if the reaper did not start
	cmd    *exec.Cmd     // set before up closes; nil if it did not start
	up     chan struct{} // closed once the reaper has started, or failed to
	exited chan struct{} // closed once it has exited
}

// reaperScript is the reaper as a POSIX shell script, the same protocol as
// runReaper: a shell holds a megabyte where a second Go runtime holding
// nexus's whole program image would hold ten. The groups are kept in g as " pgid pgid ... ".
// The directories and basenames, checked as reaperFile checks them, are
// kept in d and s, one a line after a first newline, so that one is
// forgotten ("D<dir>", "S<basename>") by matching a whole line. At the end
// it runs rm once, for what is still there, and not at all when nothing
// is (nexus removes a one-shot call's files itself: Set.Abandon), so that
// it forks nothing beside a nexus that is exiting.
const reaperScript = `trap '' INT HUP PIPE
nl='
'
g=' '
d=$nl
s=$nl
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
  d/*/morloc.?*)
    p=${l#d}
    case $p in */morloc.*/*|*/../*|*/./*|*//*|*[*?[\\]*) continue ;; esac
    d="$d$p$nl" ;;
  D?*)
    p=${l#D}
    case $d in *"$nl$p$nl"*) d="${d%%"$nl$p$nl"*}$nl${d#*"$nl$p$nl"}" ;; esac ;;
  smorloc-?*)
    p=${l#s}
    case $p in *[!A-Za-z0-9_-]*) continue ;; esac
    s="$s$p$nl" ;;
  S?*)
    p=${l#S}
    case $s in *"$nl$p$nl"*) s="${s%%"$nl$p$nl"*}$nl${s#*"$nl$p$nl"}" ;; esac ;;
  esac
done
exec 2>/dev/null
for p in $g; do kill -s KILL -- "-$p" 2>/dev/null; done
IFS=$nl
set --
for p in $d; do [ -e "$p" ] && set -- "$@" "$p"; done
for p in $s; do
  for f in /dev/shm/"$p"_* "/dev/shm/$p.registry"; do [ -e "$f" ] && set -- "$@" "$f"; done
done
[ $# -eq 0 ] || rm -rf -- "$@"
exit 0
`

// reaperShell is the shell that runs reaperScript; without it nexus runs
// a copy of itself (RunReaperIfAsked).
const reaperShell = "/bin/sh"

// startReaper makes the reaper's pipe and starts the reaper in the
// background: reaperScript in the system's shell, or this program again
// with reaperEnv set, whose main must then call RunReaperIfAsked first
// thing. What nexus tells it meanwhile waits in the pipe, so that no pool
// start waits for the reaper's; failed tells why it did not start.
func startReaper(stderr *os.File, failed func(error)) (*reaper, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	rp := &reaper{w: w, up: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(rp.up)
		defer r.Close()
		cmd, err := reaperCommand()
		if err == nil {
			cmd.Stdin = r
			cmd.Stderr = stderr
			// Its own group: a terminal's Ctrl-C to nexus's group must not take it.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			err = cmd.Start()
		}
		if err != nil {
			rp.mu.Lock()
			rp.w.Close()
			rp.w = nil
			rp.mu.Unlock()
			close(rp.exited)
			failed(fmt.Errorf("starting the reaper: %w", err))
			return
		}
		rp.cmd = cmd
		go func() { _ = cmd.Wait(); close(rp.exited) }()
	}()
	return rp, nil
}

// reaperCommand is the reaper's command line: the shell's, or this
// program's.
func reaperCommand() (*exec.Cmd, error) {
	if _, err := os.Stat(reaperShell); err == nil {
		cmd := exec.Command(reaperShell)
		// ps shows "nexus-reaper -c eval ...", not the script.
		cmd.Args = []string{"nexus-reaper", "-c", `eval "$NEXUS_REAPER_SCRIPT"`}
		cmd.Env = append(os.Environ(), "NEXUS_REAPER_SCRIPT="+reaperScript)
		return cmd, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Args = []string{"nexus-reaper"} // what ps shows
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	return cmd, nil
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

// removeAfter tells the reaper of files to remove once it has killed the
// groups: a morloc instance's temporary directory (kind 'd') or its
// shared-memory basename (kind 's'). Both reapers refuse what reaperFile
// refuses, so that a bad line cannot make them remove anything else.
func (r *reaper) removeAfter(kind byte, name string) error {
	if r == nil {
		return nil
	}
	if !reaperFile(kind, name) {
		return fmt.Errorf("the reaper cannot remove %q: an unusual name", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		fmt.Fprintf(r.w, "%c%s\n", kind, name)
	}
	return nil
}

// forgetFile tells the reaper that nexus has removed a morloc instance's
// files (removeAfter's kind and name): a server whose instances come and
// go for weeks does not leave it a long list to remove at the end.
func (r *reaper) forgetFile(kind byte, name string) {
	if r == nil || !reaperFile(kind, name) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		fmt.Fprintf(r.w, "%c%s\n", kind-'a'+'A', name)
	}
}

// reaperFile reports whether a reaper may remove name, of kind 'd' (a
// directory: an absolute, clean path whose last element starts with
// "morloc.", with no glob characters) or 's' (a shared-memory basename:
// "morloc-" then letters, digits, '_' and '-').
func reaperFile(kind byte, name string) bool {
	switch kind {
	case 'd':
		base := filepath.Base(name)
		return filepath.IsAbs(name) && filepath.Clean(name) == name && len(base) > len("morloc.") &&
			strings.HasPrefix(base, "morloc.") && filepath.Dir(name) != "/" &&
			!strings.ContainsAny(name, "*?[\\\n")
	case 's':
		rest, ok := strings.CutPrefix(name, "morloc-")
		if !ok || rest == "" {
			return false
		}
		for _, c := range rest {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return false
			}
		}
		return true
	}
	return false
}

// removeShm removes a morloc program's shared-memory files:
// /dev/shm/<basename>_<i> and /dev/shm/<basename>.registry.
func removeShm(basename string) {
	for _, f := range shmFiles(basename) {
		_ = os.Remove(f)
	}
}

// shmDir is where POSIX shared memory objects live on Linux.
const shmDir = morlocwire.ShmDir

// running reports whether the reaper has started, waiting for it.
func (r *reaper) running() bool {
	if r == nil {
		return false
	}
	<-r.up
	return r.cmd != nil
}

// leave closes the reaper's pipe without a goodbye: it kills the groups
// and removes the files it knows of at once, nexus exiting meanwhile.
func (r *reaper) leave() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		r.w.Close()
		r.w = nil
	}
}

// close ends the reaper once every pool is stopped: it is told to exit
// ("=") and its pipe is closed, and close returns once it has exited.
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
	if !r.running() {
		return
	}
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
	os.Exit(runReaper(os.Stdin, func() {
		// As the script's exec 2>/dev/null: nexus's stderr is let go.
		if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
			_ = unix.Dup2(int(null.Fd()), 2)
			null.Close()
		}
	}))
}

// runReaper reads "+pgid", "-pgid", "d<dir>", "s<basename>", "D<dir>",
// "S<basename>" and "=" lines; at the end of its input, unless "=" came
// first, it calls atEnd (if not nil), kills every group still listed and
// removes the files it was told of and not told to forget.
func runReaper(in *os.File, atEnd func()) int {
	groups := map[int]bool{}
	dirs, shms := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if line == "=" {
			return 0 // nexus stopped its pools itself
		}
		if len(line) < 2 {
			continue
		}
		switch kind, name := line[0], line[1:]; {
		case kind == 'd' && reaperFile(kind, name):
			dirs[name] = true
			continue
		case kind == 's' && reaperFile(kind, name):
			shms[name] = true
			continue
		case kind == 'D':
			delete(dirs, name)
			continue
		case kind == 'S':
			delete(shms, name)
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
	if atEnd != nil {
		atEnd()
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	for d := range dirs {
		_ = os.RemoveAll(d)
	}
	for b := range shms {
		removeShm(b)
	}
	return 0
}
