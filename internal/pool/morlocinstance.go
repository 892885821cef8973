package pool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// morlocInstance is one instance of a morloc program (see morlocProgram):
// what morloc's nexus sets up for a program (docs/spec.md §8.2), a private
// temporary directory holding the pools' sockets and one shared-memory
// basename, and a process of each pool, started when a call first needs
// it. Its processes reach each other at <tmpdir>/<socket>. It serves one
// call at a time; once retired it stops its processes, then removes its
// files.
type morlocInstance struct {
	prog     *morlocProgram
	num      int    // from 1: names its processes "py", "py#2", ...
	tmpdir   string // "/tmp/morloc.123456"; "" when it could not be made
	basename string // "morloc-<nexus pid>-<16 hex digits>"
	wire     *morlocWire
	wake     *wakePipe // wakes its call when the caller gives up or a process is gone
	err      error     // why its pools cannot start, if so
	// ctx ends when the instance stops: starts under way give up.
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	slots map[int]*morlocSlot // by pool index, once a start has begun

	// shm is held by the first start that may create shared-memory
	// volume 0 (see firstStart); shmUp is set once the volume exists.
	shm   sync.Mutex
	shmUp atomic.Bool

	// Guarded by prog.mu.
	busy     bool        // a call has it
	retired  bool        // it takes no more calls
	idleStop *time.Timer // stops it once idle long enough (morlocProgram.idle)

	cleanOnce sync.Once
}

// morlocSlot is the process of one pool in an instance: started once;
// the instance is retired if it fails to start or dies.
type morlocSlot struct{ processStart[*morlocProcess] }

// newMorlocInstance makes an instance's temporary directory and basename,
// and tells the reaper of them before any of its pools starts. A failure
// is kept and reported by every start in it.
func newMorlocInstance(m *morlocProgram, num int) *morlocInstance {
	inst := &morlocInstance{prog: m, num: num, slots: map[int]*morlocSlot{}}
	inst.ctx, inst.cancel = context.WithCancel(m.set.ctx)
	var tag [8]byte
	_, _ = rand.Read(tag[:])
	// 0.98's form, which both versions take as an opaque name; the pid
	// lets a sweep find what a dead nexus left.
	inst.basename = "morloc-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(tag[:])
	if m.err != nil {
		inst.err = m.err
		return inst
	}
	wake, err := newWakePipe()
	if err != nil {
		inst.err = fmt.Errorf("making the instance's wake pipe: %w", err)
		return inst
	}
	inst.wake = wake
	dir, err := os.MkdirTemp("", "morloc.")
	if err != nil {
		inst.err = fmt.Errorf("making the program's temporary directory: %w", err)
		return inst
	}
	inst.tmpdir = dir
	inst.wire = m.wire.withMemory(inst.basename, dir)
	for _, f := range []struct {
		kind byte
		name string
	}{{'d', inst.tmpdir}, {'s', inst.basename}} {
		if err := m.set.reaper.removeAfter(f.kind, f.name); err != nil {
			m.set.opts.Logger.Warn("morloc files may outlive nexus if it is killed", "err", err)
		}
	}
	return inst
}

// label names the instance's process of pool spec: "py", or "py#2" in
// the second instance.
func (inst *morlocInstance) label(spec *Spec) string {
	if inst.num == 1 {
		return spec.Lang
	}
	return spec.Lang + "#" + strconv.Itoa(inst.num)
}

// take marks the instance busy. prog.mu is held.
func (inst *morlocInstance) take() {
	inst.busy = true
	inst.idleFor(0)
}

// idleFor has the instance stopped once it has stayed idle for d
// (morlocProgram.idle); d 0 cancels that. One timer serves every call.
// prog.mu is held.
func (inst *morlocInstance) idleFor(d time.Duration) {
	switch {
	case d <= 0:
		if inst.idleStop != nil {
			inst.idleStop.Stop()
		}
	case inst.idleStop == nil:
		inst.idleStop = time.AfterFunc(d, func() { inst.prog.idle(inst) })
	default:
		inst.idleStop.Reset(d)
	}
}

// process returns the instance's process of pool i, starting it if no
// start has begun, and waiting for a start under way.
func (inst *morlocInstance) process(ctx context.Context, i int, expired <-chan time.Time) (*morlocProcess, error) {
	sl, err := inst.slot(i)
	if err != nil {
		return nil, err
	}
	return sl.wait(ctx, expired)
}

// ready reports whether the processes of pools are all up, and puts them
// in procs if so.
func (inst *morlocInstance) ready(pools []int, procs []*morlocProcess) bool {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	for k, i := range pools {
		sl := inst.slots[i]
		if sl == nil {
			return false
		}
		select {
		case <-sl.done:
			if sl.err != nil || !sl.proc.alive() {
				return false
			}
			procs[k] = sl.proc
		default:
			return false
		}
	}
	return true
}

// slot returns the slot of pool i, beginning its start if need be: unless
// the pool keeps failing (see backoff), or the instance is stopping.
func (inst *morlocInstance) slot(i int) (*morlocSlot, error) {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if sl := inst.slots[i]; sl != nil {
		return sl, nil
	}
	spec := inst.prog.specs[i]
	if inst.ctx.Err() != nil {
		return nil, &unstartedError{fmt.Errorf("pool %s: %w", inst.label(spec), errRetired)}
	}
	if err := inst.prog.holdsBack([]int{i}); err != nil {
		return nil, err
	}
	sl := &morlocSlot{newProcessStart[*morlocProcess]()}
	inst.slots[i] = sl
	go inst.start(sl, spec)
	return sl, nil
}

// startAll starts every pool of the program in the instance and returns
// the first failure.
func (inst *morlocInstance) startAll() error {
	var wg sync.WaitGroup
	errs := make([]error, len(inst.prog.order))
	for k, i := range inst.prog.order {
		wg.Go(func() { _, errs[k] = inst.process(inst.ctx, i, nil) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// start starts the process of pool spec in slot sl.
func (inst *morlocInstance) start(sl *morlocSlot, spec *Spec) {
	defer close(sl.done) // after a failure is counted: the next call sees it
	label := inst.label(spec)
	switch {
	case spec.DirErr != nil:
		sl.err = fmt.Errorf("pool %s failed to start: %w", label, spec.DirErr)
	case inst.err != nil:
		sl.err = fmt.Errorf("pool %s failed to start: %w", label, inst.err)
	default:
		sl.proc, sl.err = inst.startProcess(spec, label)
	}
	if inst.ctx.Err() != nil {
		return // a start nexus abandoned is no failure of the pool
	}
	if sl.err != nil {
		inst.prog.startFailed(inst, spec, sl.err)
		return
	}
	inst.prog.set.event(spec.Lang, EventStarted)
}

// startProcess starts a process of pool spec and waits until it is ready.
func (inst *morlocInstance) startProcess(spec *Spec, label string) (*morlocProcess, error) {
	if spec.Socket == "" {
		return nil, fmt.Errorf("pool %s failed to start: its manifest entry names no socket", label)
	}
	if filepath.Base(spec.Socket) != spec.Socket || spec.Socket == "." || spec.Socket == ".." {
		return nil, fmt.Errorf("pool %s failed to start: its socket %q is not a plain file name", label, spec.Socket)
	}
	socket := filepath.Join(inst.tmpdir, spec.Socket)
	if len(socket) >= maxSocketPath {
		return nil, fmt.Errorf("pool %s failed to start: its socket path %s is longer than Unix sockets allow (%d bytes); set TMPDIR to a shorter directory",
			label, socket, maxSocketPath-1)
	}
	m := inst.prog
	hooks := processHooks{onDeath: func(p poolProcess, err error) { m.died(inst, spec, p, err) }}
	cfg := m.set.childConfig(spec, label, hooks)
	cfg.args = []string{socket, inst.tmpdir, inst.basename}
	cfg.env = m.env(spec)
	mc := morlocConfig{socket: socket, wire: inst.wire, wake: inst.wake, dialTimeout: morlocDialTimeout}
	var p *morlocProcess
	err := inst.firstStart(func() error {
		var err error
		p, err = startMorlocProcess(inst.ctx, cfg, mc)
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// firstStart runs start, the start of one pool process, alone when shared
// memory volume 0 may not exist yet. Each of morloc's pools creates volume
// 0 if it is missing (shinit), but shm.c's shinit is not safe against two
// processes creating it at once: it opens with O_CREAT and no O_EXCL, and
// a process that sees the volume still empty initialises its header,
// allocator and process-shared lock again, under another that may already
// use them. morloc's nexus creates the volume itself before any pool
// starts; nexus does not write into morloc's shared memory, so it lets one
// pool make it: the first start runs alone until the pool is ready (a pool
// answers a ping only after its start_daemon's shinit), and the others
// start together once the volume exists.
func (inst *morlocInstance) firstStart(start func() error) error {
	if inst.shmUp.Load() {
		return start()
	}
	inst.shm.Lock()
	defer inst.shm.Unlock()
	if inst.shmUp.Load() {
		return start()
	}
	err := start()
	if err == nil || inst.volumeZeroExists() {
		inst.shmUp.Store(true)
	}
	return err
}

// volumeZeroExists reports whether shared-memory volume 0 has been made,
// in /dev/shm or as the fallback file in the temporary directory.
func (inst *morlocInstance) volumeZeroExists() bool {
	for _, f := range []string{filepath.Join(shmDir, inst.basename+"_0"), filepath.Join(inst.tmpdir, inst.basename+"_0")} {
		if fi, err := os.Stat(f); err == nil && fi.Size() > 0 {
			return true
		}
	}
	return false
}

// started lists the slots whose start has begun.
func (inst *morlocInstance) started() []*morlocSlot {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	slots := make([]*morlocSlot, 0, len(inst.slots))
	for _, sl := range inst.slots {
		slots = append(slots, sl)
	}
	return slots
}

// stop stops the instance's processes (starts under way give up) and
// removes its files once they are gone.
func (inst *morlocInstance) stop() {
	inst.cancel()
	var wg sync.WaitGroup
	for _, sl := range inst.started() {
		wg.Go(func() {
			<-sl.done
			if sl.proc != nil {
				sl.proc.stop()
			}
		})
	}
	wg.Wait()
	inst.cleanup()
}

// abandon is stop for a nexus about to exit, which leaves its processes
// to the reaper: starts under way give up, and the processes' ends, when
// the reaper kills them, are no deaths. Their files go now, which takes
// no waiting: the reaper, woken as nexus exits, then has no rm to fork
// beside it (on a busy machine that delayed a one-shot CLI call's exit by
// half a millisecond). The reaper is not told they are gone, so that it
// still removes what a process still starting makes again before it is
// killed.
func (inst *morlocInstance) abandon() {
	inst.cancel()
	for _, sl := range inst.started() {
		select {
		case <-sl.done:
			if sl.proc != nil {
				sl.proc.leftToReaper()
			}
		default:
		}
	}
	if inst.tmpdir != "" {
		_ = os.RemoveAll(inst.tmpdir)
	}
	removeShm(inst.basename)
}

// cleanup removes what the instance's pools leave behind once they are
// gone: the temporary directory (sockets, and shared-memory volumes that
// fell back to files there) and every /dev/shm/<basename>_* file, as
// morloc's nexus does at exit.
func (inst *morlocInstance) cleanup() {
	inst.cleanOnce.Do(func() {
		if inst.wire != nil {
			inst.wire.closeMemory()
		}
		if inst.wake != nil {
			inst.wake.close()
		}
		r := inst.prog.set.reaper
		if inst.tmpdir != "" {
			if err := os.RemoveAll(inst.tmpdir); err != nil {
				inst.prog.set.opts.Logger.Warn("removing the morloc pools' temporary directory", "dir", inst.tmpdir, "err", err)
			} else {
				r.forgetFile('d', inst.tmpdir)
			}
		}
		removeShm(inst.basename)
		r.forgetFile('s', inst.basename)
	})
}
