package pool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/bundle/morlochome"
)

// morlocProgram runs a program's morloc pools as instances (docs/spec.md
// §8.2; docs/morloc.md, "How nexus drives morloc pools"). An instance
// (morlocinstance.go) is a private temporary directory, a shared-memory
// basename and a process of each of the program's pools, started as
// calls need them; it serves one call at a time, with the cross-language
// calls that call makes inside it. morloc's runtime is built for that, as
// its one-shot CLI runs it: two pools allocating in one shared-memory
// volume at once corrupt it, and a pool frees a result's block when its
// worker starts its next job. Concurrency comes from instances: one
// starts on demand while all are busy, up to limit, and one beyond the
// last left stops once idle for Options.InstanceIdle. An instance in which
// a call was given up on, a process died or a call broke is retired: its
// processes stop and its files go, and calls go to the others or a fresh
// one.
type morlocProgram struct {
	set   *Set
	specs map[int]*Spec // the program's morloc pools, by index
	order []int         // their indices, in manifest order
	limit int           // how many instances may take calls at once
	wire  *morlocWire   // encodes calls; each instance reads its own results
	err   error         // why no pool can start (an unknown wire version)
	// runsIn lists, by pool and mid, the pools a function's calls run in
	// (see pools), made once.
	runsIn map[[2]int][]int

	mu      sync.Mutex
	live    []*morlocInstance      // taking calls, busy or idle, by number
	waiting []chan *morlocInstance // calls waiting for an instance, first come first
	health  map[int]*backoff       // each pool's failures, across instances
	warm    *time.Timer            // a fresh instance's start, after a backoff
	closed  bool
	// stopping counts the retired instances still stopping; Close waits
	// for them.
	stopping sync.WaitGroup
}

// newMorlocProgram takes the program's morloc pools and makes its first
// instance, which Start's first start and the first calls share.
func newMorlocProgram(s *Set, specs []Spec) *morlocProgram {
	m := &morlocProgram{set: s, specs: map[int]*Spec{}, health: map[int]*backoff{}, runsIn: map[[2]int][]int{}}
	for i := range specs {
		spec := specs[i]
		m.specs[spec.Index] = &spec
		m.order = append(m.order, spec.Index)
		m.health[spec.Index] = &backoff{}
		m.limit = max(m.limit, spec.Workers)
	}
	for _, spec := range m.specs {
		for mid, fn := range spec.Functions {
			m.runsIn[[2]int{spec.Index, mid}] = m.pools(spec.Index, fn)
		}
	}
	if m.limit <= 0 {
		m.limit = runtime.NumCPU()
	}
	m.wire, m.err = newMorlocWire(s.opts.Morloc.WireVersion)
	m.mu.Lock()
	m.add()
	m.mu.Unlock()
	return m
}

// firstStarts starts every pool of the first instance (docs/spec.md
// §8.2: a server starts them all, since pools call each other), as one
// start whose failure is the first of them.
func (m *morlocProgram) firstStarts(run func(start func() error)) { run(m.startFirst) }

func (m *morlocProgram) startFirst() error {
	m.mu.Lock()
	var first *morlocInstance
	if len(m.live) > 0 {
		first = m.live[0]
	}
	m.mu.Unlock()
	if first == nil {
		return nil
	}
	return first.startAll()
}

// add makes an instance, numbered with the smallest number no live
// instance has, and counts it live. m.mu is held.
func (m *morlocProgram) add() *morlocInstance {
	num := 1
	for _, inst := range m.live { // sorted by number
		if inst.num != num {
			break
		}
		num++
	}
	inst := newMorlocInstance(m, num)
	i, _ := slices.BinarySearchFunc(m.live, num, func(x *morlocInstance, n int) int { return x.num - n })
	m.live = slices.Insert(m.live, i, inst)
	return inst
}

// acquire takes an instance for call c: an idle one (the lowest numbered,
// so that the others idle out), or a new one while fewer than limit take
// calls, or the first to be released. A call that must wait for one stops
// watching its caller's input first (callRequest.yieldInline).
func (m *morlocProgram) acquire(ctx context.Context, c *callRequest) (*morlocInstance, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, fmt.Errorf("pool %s: %w", c.lang, errClosed)
	}
	for _, inst := range m.live {
		if !inst.busy {
			inst.take()
			m.mu.Unlock()
			return inst, nil
		}
	}
	if len(m.live) < m.limit {
		inst := m.add()
		inst.take()
		m.mu.Unlock()
		return inst, nil
	}
	ch := make(chan *morlocInstance, 1)
	m.waiting = append(m.waiting, ch)
	m.mu.Unlock()
	c.yieldInline()
	var err error
	select {
	case inst := <-ch:
		if inst == nil {
			return nil, fmt.Errorf("pool %s: %w", c.lang, errClosed)
		}
		return inst, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-c.expired:
		err = c.timedOut("")
	}
	m.mu.Lock()
	if i := slices.Index(m.waiting, ch); i >= 0 {
		m.waiting = slices.Delete(m.waiting, i, i+1)
		m.mu.Unlock()
		return nil, err
	}
	m.mu.Unlock()
	if inst := <-ch; inst != nil { // handed over as the wait ended
		m.release(inst)
	}
	return nil, err
}

// release gives a busy instance, its call done, to the first call waiting,
// or lets it idle.
func (m *morlocProgram) release(inst *morlocInstance) {
	m.mu.Lock()
	if inst.retired {
		m.mu.Unlock()
		return
	}
	if len(m.waiting) > 0 {
		ch := m.waiting[0]
		m.waiting = m.waiting[1:]
		m.mu.Unlock()
		ch <- inst
		return
	}
	inst.busy = false
	inst.idleFor(m.set.opts.InstanceIdle)
	m.mu.Unlock()
}

// idle stops an instance that stayed idle, unless it is the last one left.
func (m *morlocProgram) idle(inst *morlocInstance) {
	m.mu.Lock()
	if inst.busy || inst.retired || len(m.live) <= 1 {
		m.mu.Unlock()
		return
	}
	m.retireLocked(inst, false)
	m.mu.Unlock()
	m.set.opts.Logger.Info("stopping an idle morloc instance", "instance", inst.num, "idle", m.set.opts.InstanceIdle)
}

// retire takes an instance out of service and stops it: a call was given
// up on in it, or broke, or one of its processes died or failed to start
// (why says which, for the log). A call waiting for an instance gets a
// fresh one in its place. With warm, a program left with no instance
// starts a fresh one after warmAfter, so that the next call finds its
// pools up, as a restarted nexus pool would be. It reports whether it
// retired the instance, false if it was already.
func (m *morlocProgram) retire(inst *morlocInstance, why string, warm bool, warmAfter time.Duration) bool {
	m.mu.Lock()
	if inst.retired {
		m.mu.Unlock()
		return false
	}
	m.set.opts.Logger.Warn("retiring a morloc instance", "instance", inst.num, "why", why)
	m.retireLocked(inst, true)
	if warm && len(m.live) == 0 && !m.closed {
		m.warmAfter(warmAfter)
	}
	m.mu.Unlock()
	return true
}

// retireLocked retires inst (see retire): a call waiting for an instance
// gets a fresh one when replace. m.mu is held.
func (m *morlocProgram) retireLocked(inst *morlocInstance, replace bool) {
	inst.retired = true
	inst.idleFor(0)
	m.live = slices.DeleteFunc(m.live, func(x *morlocInstance) bool { return x == inst })
	if replace && len(m.waiting) > 0 && len(m.live) < m.limit && !m.closed {
		fresh := m.add()
		fresh.take()
		ch := m.waiting[0]
		m.waiting = m.waiting[1:]
		ch <- fresh // buffered
	}
	m.stopping.Add(1)
	go func() {
		defer m.stopping.Done()
		inst.stop()
	}()
}

// warmAfter starts, after delay, a fresh instance with every pool, if
// the program has none by then. m.mu is held.
func (m *morlocProgram) warmAfter(delay time.Duration) {
	if m.warm != nil {
		m.warm.Stop()
	}
	if delay <= 0 {
		m.warmNow()
		return
	}
	m.warm = time.AfterFunc(delay, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.warmNow()
	})
}

// warmNow starts a fresh instance with every pool, unless the program
// has one or is closed. m.mu is held.
func (m *morlocProgram) warmNow() {
	if m.closed || len(m.live) > 0 {
		return
	}
	inst := m.add()
	go inst.startAll() // its failures are logged, and counted (health)
}

// died learns that process p of pool spec in inst ended on its own, and
// retires the instance. The process calls it before any call can see it
// gone, so that the next call sees the backoff.
func (m *morlocProgram) died(inst *morlocInstance, spec *Spec, p poolProcess, err error) {
	m.mu.Lock()
	if inst.retired || m.closed {
		m.mu.Unlock()
		return
	}
	healthy := p.answeredAny() || p.upFor() >= m.set.opts.HealthyAfter
	h := m.health[spec.Index]
	delay := h.failed(err, healthy, &m.set.opts)
	failures := h.failures
	m.mu.Unlock()
	m.set.opts.Logger.Info("restarting pool", "pool", inst.label(spec), "in", delay, "failures", failures)
	m.set.event(spec.Lang, EventCrashed)
	m.set.event(spec.Lang, EventRestarted)
	m.retire(inst, fmt.Sprintf("its %s pool's process died", spec.Lang), true, delay)
}

// startFailed learns that pool spec failed to start in inst, and retires
// the instance; the next call starts it again in another, unless it keeps
// failing (holdsBack).
func (m *morlocProgram) startFailed(inst *morlocInstance, spec *Spec, err error) {
	m.mu.Lock()
	m.health[spec.Index].failed(err, false, &m.set.opts)
	m.mu.Unlock()
	m.set.opts.Logger.Error("pool failed to start", "pool", inst.label(spec), "err", err)
	m.retire(inst, fmt.Sprintf("its %s pool failed to start", spec.Lang), false, 0)
}

// holdsBack returns why one of pools (indices) may not start now, having
// failed again and again (Options.RestartDelay), or nil.
func (m *morlocProgram) holdsBack(pools []int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, i := range pools {
		if err := m.health[i].holdsBack(m.specs[i].Lang); err != nil {
			return err
		}
	}
	return nil
}

// stop retires every instance and waits until their processes are gone
// and their files removed. With abandon it waits for nothing: it removes
// the files, and the reaper kills the processes (Set.Abandon).
func (m *morlocProgram) stop(abandon bool) {
	m.mu.Lock()
	m.closed = true
	if m.warm != nil {
		m.warm.Stop()
	}
	live := m.live
	m.live = nil
	for _, ch := range m.waiting {
		ch <- nil
	}
	m.waiting = nil
	for _, inst := range live {
		inst.retired = true
		inst.idleFor(0)
	}
	m.mu.Unlock()
	if abandon {
		for _, inst := range live {
			inst.abandon()
		}
		return
	}
	var wg sync.WaitGroup
	for _, inst := range live {
		wg.Go(inst.stop)
	}
	wg.Wait()
	m.stopping.Wait()
}

// pools lists the pools a call of function fn of pool own runs in: own
// first, then the other pools of the program it calls.
func (m *morlocProgram) pools(own int, fn Function) []int {
	pools := []int{own}
	for _, i := range fn.Needs {
		if m.specs[i] != nil && !slices.Contains(pools, i) {
			pools = append(pools, i)
		}
	}
	return pools
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

// errRetired is the error of a start in an instance already retired.
var errRetired = errors.New("its instance was retired")
