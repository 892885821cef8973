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

	"github.com/nexus-mcp/nexus/internal/bundle/morlochome"
)

// morlocProgram is the driver of a program's morloc pools, and what they
// share, as morloc's own nexus sets it up (docs/spec.md §8.2): a private
// temporary directory holding their sockets, one
// shared-memory basename, and the readers of the pools' wire format and
// shared memory. Every morloc pool of the program starts, so that pools
// reach each other at <tmpdir>/<socket> for cross-language calls.
type morlocProgram struct {
	set      *Set
	tmpdir   string // "/tmp/morloc.123456"; "" when it could not be made
	basename string // "morloc-<nexus pid>-<16 hex digits>"
	err      error  // why the program's morloc pools cannot start, if so
	wire     *morlocWire
	gen      atomic.Int64 // numbers each process start: its own socket path

	// shm is held by the first start that may create shared-memory
	// volume 0 (see firstStart); shmUp is set once the volume exists.
	shm   sync.Mutex
	shmUp atomic.Bool

	cleanOnce sync.Once
}

// newMorlocProgram makes the program's temporary directory and basename.
// A failure is kept and reported by every pool's start.
func newMorlocProgram(s *Set) *morlocProgram {
	m := &morlocProgram{set: s}
	var tag [8]byte
	_, _ = rand.Read(tag[:])
	// 0.98's form, which both versions take as an opaque name; the pid
	// lets a sweep find what a dead nexus left.
	m.basename = "morloc-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(tag[:])
	wire, err := newMorlocWire(s.opts.Morloc.WireVersion)
	if err != nil {
		m.err = err
		return m
	}
	m.wire = wire
	wire.inline = inlineLimit(&s.opts.Morloc)
	dir, err := os.MkdirTemp("", "morloc.")
	if err != nil {
		m.err = fmt.Errorf("making the program's temporary directory: %w", err)
		return m
	}
	m.tmpdir = dir
	// Generations of pool processes bind their sockets here (see start).
	if err := os.Mkdir(filepath.Join(dir, morlocGenDir), 0o700); err != nil {
		m.err = fmt.Errorf("making the program's temporary directory: %w", err)
	}
	m.wire.openMemory(m.basename, dir)
	return m
}

// morlocGenDir, inside the temporary directory, holds each process start's
// own socket; <tmpdir>/<socket> is a symbolic link to the live one.
const morlocGenDir = ".nexus"

// watchedBy tells the reaper what to remove should nexus die without
// cleaning up.
func (m *morlocProgram) watchedBy(r *reaper) {
	if r == nil {
		return
	}
	for _, f := range []struct {
		kind byte
		name string
	}{{'d', m.tmpdir}, {'s', m.basename}} {
		if f.name == "" {
			continue
		}
		if err := r.removeAfter(f.kind, f.name); err != nil {
			m.set.opts.Logger.Warn("morloc files may outlive nexus if it is killed", "err", err)
		}
	}
}

// cleanup removes what the program's pools leave behind once they are
// gone: the temporary directory (sockets, and shared-memory volumes that
// fell back to files there) and every /dev/shm/<basename>_* file, as
// morloc's nexus does at exit.
func (m *morlocProgram) cleanup() {
	m.cleanOnce.Do(func() {
		if m.wire != nil {
			m.wire.closeMemory()
		}
		if m.tmpdir != "" {
			if err := os.RemoveAll(m.tmpdir); err != nil {
				m.set.opts.Logger.Warn("removing the morloc pools' temporary directory", "dir", m.tmpdir, "err", err)
			}
		}
		removeShm(m.basename)
	})
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
func (m *morlocProgram) firstStart(start func() error) error {
	if m.shmUp.Load() {
		return start()
	}
	m.shm.Lock()
	defer m.shm.Unlock()
	if m.shmUp.Load() {
		return start()
	}
	err := start()
	if err == nil || m.volumeZeroExists() {
		m.shmUp.Store(true)
	}
	return err
}

// volumeZeroExists reports whether shared-memory volume 0 has been made,
// in /dev/shm or as the fallback file in the temporary directory.
func (m *morlocProgram) volumeZeroExists() bool {
	for _, f := range []string{filepath.Join(shmDir, m.basename+"_0"), filepath.Join(m.tmpdir, m.basename+"_0")} {
		if fi, err := os.Stat(f); err == nil && fi.Size() > 0 {
			return true
		}
	}
	return false
}

// start starts one process of worker w's morloc pool.
func (m *morlocProgram) start(ctx context.Context, w *worker, cfg childConfig) (poolProcess, error) {
	label := w.label
	if m.err != nil {
		return nil, fmt.Errorf("pool %s failed to start: %w", label, m.err)
	}
	spec := w.spec
	if spec.Socket == "" {
		return nil, fmt.Errorf("pool %s failed to start: its manifest entry names no socket", label)
	}
	if filepath.Base(spec.Socket) != spec.Socket || spec.Socket == "." || spec.Socket == ".." {
		return nil, fmt.Errorf("pool %s failed to start: its socket %q is not a plain file name", label, spec.Socket)
	}
	link := filepath.Join(m.tmpdir, spec.Socket)
	own := filepath.Join(m.tmpdir, morlocGenDir, spec.Socket+"."+strconv.FormatInt(m.gen.Add(1), 10))
	if len(own) >= maxSocketPath || len(link) >= maxSocketPath {
		return nil, fmt.Errorf("pool %s failed to start: its socket path %s is longer than Unix sockets allow (%d bytes); set TMPDIR to a shorter directory",
			label, own, maxSocketPath-1)
	}
	cfg.args = []string{own, m.tmpdir, m.basename}
	cfg.env = m.env(spec)
	mc := morlocConfig{
		socket:      own,
		link:        link,
		wire:        m.wire,
		dialTimeout: morlocDialTimeout,
		stuckIn:     func(pools []int, why string) { m.replaceNeeded(spec.Index, pools, why) },
	}
	var p *morlocProcess
	err := m.firstStart(func() error {
		var err error
		p, err = startMorlocProcess(ctx, cfg, mc)
		return err
	})
	if err != nil {
		return nil, err // never a nil *morlocProcess in the interface
	}
	return p, nil
}

// maxWorkers: a morloc pool runs its own workers, forked or threaded.
func (m *morlocProgram) maxWorkers() int { return 1 }

// inlineCalls: only nexus's own pools' replies can be waited for inline.
func (m *morlocProgram) inlineCalls() bool { return false }

// awaitsNeeds: a morloc pool's function reaches the pools it calls over
// their sockets itself, so its calls wait until they are up.
func (m *morlocProgram) awaitsNeeds() bool { return true }

// replaceNeeded replaces the processes of the pools (by index) that a
// stuck call of pool own needed: the part of it that does not end may be
// running in one of them (a Python function stuck in the C++ function it
// called), where it holds a worker, and morloc's pools start another
// worker only while all are waiting on other pools.
func (m *morlocProgram) replaceNeeded(own int, pools []int, why string) {
	for _, i := range pools {
		g := m.set.pools[i]
		if i == own || g == nil || g.driver != driver(m) {
			continue
		}
		for _, w := range g.workers {
			w.replaceLive("replacing a pool process a stuck call needed", why)
		}
	}
}

// maxSocketPath is the size of sockaddr_un's sun_path on Linux, its
// terminating NUL included.
const maxSocketPath = 108

// env is a morloc pool's environment: nexus's own, plus what morloc's
// nexus (0.98) adds: the pool's hash and the program's settings for
// inline results, shared memory and file packets; and, for a program
// unpacked from a bundle, the morloc runtime it carries on the loader's
// path (docs/bundles.md).
func (m *morlocProgram) env(spec *Spec) []string {
	env := morlochome.Env(spec.Dir, os.Environ())
	if spec.PoolHash != "" {
		env = append(env, "MORLOC_POOL_HASH="+spec.PoolHash)
	}
	o := &m.set.opts.Morloc
	if o.InlineSize != nil {
		env = append(env, "MORLOC_INLINE_SIZE="+strconv.FormatInt(*o.InlineSize, 10))
	}
	if o.NoShm {
		env = append(env, "MORLOC_NO_SHM=1")
	}
	if o.TmpDir != "" {
		env = append(env, "MORLOC_TMPDIR="+o.TmpDir)
	}
	return withOutputDir(env, m.set.opts.OutputDir)
}
