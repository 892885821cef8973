package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// poolGroup is one manifest pool written against nexus's runtime: one or
// more worker processes, over which its calls spread. It is the pool's
// runner.
type poolGroup struct {
	set     *Set
	spec    Spec
	mu      sync.Mutex // guards every worker's inflight
	workers []*worker
}

// newPoolGroup makes the workers of the pool spec, Spec.Workers of them
// (DefaultWorkers without), none started yet.
func newPoolGroup(s *Set, spec Spec) *poolGroup {
	if spec.Workers <= 0 {
		spec.Workers = DefaultWorkers(spec.Lang)
	}
	n := spec.Workers
	g := &poolGroup{set: s, spec: spec}
	for i := 1; i <= n; i++ {
		label := spec.Lang
		if n > 1 {
			label = fmt.Sprintf("%s#%d", spec.Lang, i)
		}
		g.workers = append(g.workers, &worker{set: s, spec: &g.spec, number: i, label: label})
	}
	return g
}

// firstStarts starts every worker's process: pools are started with the
// set, not on a first call.
func (g *poolGroup) firstStarts(run func(start func() error)) {
	for _, w := range g.workers {
		run(func() error {
			_, err := w.process(g.set.ctx, nil)
			return err
		})
	}
}

// call runs c on the worker with the fewest calls in flight, waiting for
// its process to start if need be.
func (g *poolGroup) call(ctx context.Context, _ *Spec, c *callRequest) (ndarray.Value, error) {
	s := g.set
	w := g.pick()
	defer g.release(w)
	for tries := 1; ; tries++ {
		if c.opts.Inline != nil && (tries > 1 || !w.ready()) {
			// Only a process up and running waits for its reply watching
			// the caller's input: anything else the call waits for, it
			// waits for without.
			c.yieldInline()
		}
		p, err := w.process(ctx, c.expired)
		s.openGate() // the pool a client waited for is up (or failed): start the others
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return ndarray.Value{}, ctx.Err()
			case err == errExpired:
				return ndarray.Value{}, c.timedOut(w.label)
			}
			return ndarray.Value{}, err
		}
		value, err := p.call(ctx, c)
		if err != nil && unstarted(err) && tries < maxTries && s.ctx.Err() == nil {
			continue // the process went away before it began the call: a fresh one may take it
		}
		return value, err
	}
}

// pick chooses the worker with the fewest calls in flight and counts the
// new call against it.
func (g *poolGroup) pick() *worker {
	g.mu.Lock()
	defer g.mu.Unlock()
	best := g.workers[0]
	for _, w := range g.workers[1:] {
		if w.inflight < best.inflight {
			best = w
		}
	}
	best.inflight++
	return best
}

func (g *poolGroup) release(w *worker) {
	g.mu.Lock()
	w.inflight--
	g.mu.Unlock()
}

// stop stops every worker. A nexus pool may have work to finish, so it is
// stopped even when the set is abandoned.
func (g *poolGroup) stop(bool) {
	var wg sync.WaitGroup
	for _, w := range g.workers {
		wg.Go(w.stop)
	}
	wg.Wait()
}

// worker is one process slot of a pool written against nexus's runtime.
// Its process starts with the set, is started again at once when it dies,
// and with a growing delay when it keeps failing (see Options.RestartDelay).
// A program's morloc pools run as instances instead (morloc.go).
type worker struct {
	set      *Set
	spec     *Spec
	number   int    // from 1
	label    string // "py", or "py#2" when the pool has several workers
	inflight int    // guarded by poolGroup.mu

	mu sync.Mutex
	backoff
	cur     *attempt      // the latest start, nil before the first
	closed  bool          // the set is closing: start nothing more
	restart *time.Timer   // a restart scheduled after a death
	retired []poolProcess // replaced while a call was stuck in them, finishing their other calls
}

// poolProcess is one running pool process, whichever protocol it speaks:
// a worker's *process (nexus's runtime: frames on fds 3 and 4) or a morloc
// instance's *morlocProcess (packets over a Unix socket, a connection per
// call). Each is a child (child.go) with its protocol's wire, and tells
// its owner of its life through processHooks.
type poolProcess interface {
	// call runs one call; an *unstartedError means the process never
	// began it, so that it may be sent to a fresh process.
	call(ctx context.Context, c *callRequest) (ndarray.Value, error)
	alive() bool          // it can still take calls
	answeredAny() bool    // it has answered a call: it works
	upFor() time.Duration // how long it has been ready
	// retire takes it out of service because a call in it is stuck; it
	// stops once the calls it still runs are done.
	retire(why string)
	stop()                  // ends it and returns once it is gone
	ended() <-chan struct{} // closed once it is gone
	pid() int
}

// errExpired is returned by worker.process when the call's timeout passed
// while it waited for the pool to start.
var errExpired = errors.New("the call's time ran out")

// processStart is one start of a pool process: a worker's (attempt) or
// a morloc instance's (morlocSlot).
type processStart[P any] struct {
	done chan struct{} // closed when the start has succeeded or failed
	proc P             // the zero P when the start failed
	err  error
}

func newProcessStart[P any]() processStart[P] { return processStart[P]{done: make(chan struct{})} }

// wait returns the process once the start has ended, or gives up when ctx
// ends or expired (the call's timeout) fires first.
func (s *processStart[P]) wait(ctx context.Context, expired <-chan time.Time) (P, error) {
	var none P
	select {
	case <-s.done:
		return s.proc, s.err
	case <-ctx.Done():
		return none, ctx.Err()
	case <-expired:
		return none, errExpired
	}
}

// attempt is one start of a worker's process.
type attempt struct{ processStart[poolProcess] }

// process returns the worker's live process, starting one when there is
// none (or the last one died or failed to start), and waiting for a start
// in progress. While the worker backs off after failures it returns the
// last failure at once.
func (w *worker) process(ctx context.Context, expired <-chan time.Time) (poolProcess, error) {
	w.mu.Lock()
	a := w.cur
	if a == nil || a.unusable() {
		if err := w.backingOff(); err != nil {
			w.mu.Unlock()
			return nil, err
		}
		a = w.launch()
	}
	w.mu.Unlock()
	return a.wait(ctx, expired)
}

// ready reports whether the worker has a process up that can take a call
// now, without waiting for a start.
func (w *worker) ready() bool {
	w.mu.Lock()
	a := w.cur
	w.mu.Unlock()
	if a == nil {
		return false
	}
	select {
	case <-a.done:
		return a.err == nil && a.proc.alive()
	default:
		return false
	}
}

// unusable reports whether a finished start left nothing to call.
func (a *attempt) unusable() bool {
	select {
	case <-a.done:
		return a.err != nil || !a.proc.alive()
	default:
		return false // still starting
	}
}

// backingOff returns an error saying why no process may start yet, or nil.
// w.mu is held.
func (w *worker) backingOff() error {
	if w.closed {
		return nil
	}
	return w.holdsBack(w.label)
}

// launch begins a new start of the worker's process. w.mu is held.
func (w *worker) launch() *attempt {
	a := &attempt{newProcessStart[poolProcess]()}
	w.cur = a
	s := w.set
	ctx := s.ctx
	if w.closed || ctx.Err() != nil {
		a.err = fmt.Errorf("pool %s: %w", w.label, errClosed)
		close(a.done)
		return a
	}
	go func() {
		defer close(a.done) // after the failure is recorded: the next call sees it
		hooks := processHooks{
			onDeath: func(p poolProcess, err error) { w.died(a, p, err) },
			onStuck: func(p poolProcess, why string) { w.stuck(a, p, why) },
		}
		if w.spec.DirErr != nil {
			a.err = fmt.Errorf("pool %s failed to start: %w", w.label, w.spec.DirErr)
		} else {
			a.proc, a.err = startNexus(ctx, w, w.set.childConfig(w.spec, w.label, hooks))
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.closed || ctx.Err() != nil {
			return // a start nexus abandoned is no failure of the pool
		}
		if a.err != nil {
			w.failed(a.err, false, &s.opts)
			s.opts.Logger.Error("pool failed to start", "pool", w.label, "err", a.err)
		} else {
			w.event(EventStarted)
		}
	}()
	return a
}

// died learns that the process of attempt a ended on its own, and starts
// the next one: at once, or after the backoff delay. The process calls it
// before any call can see it gone, so the next call sees the backoff.
func (w *worker) died(a *attempt, p poolProcess, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.cur != a {
		return
	}
	healthy := p.answeredAny() || p.upFor() >= w.set.opts.HealthyAfter
	delay := w.failed(err, healthy, &w.set.opts)
	w.set.opts.Logger.Info("restarting pool", "pool", w.label, "in", delay, "failures", w.failures)
	w.event(EventCrashed)
	w.event(EventRestarted)
	if delay == 0 {
		w.launch()
		return
	}
	w.restart = time.AfterFunc(delay, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.closed && w.cur == a {
			w.launch()
		}
	})
}

// stuck replaces the process of attempt a, in which a call did not stop
// when cancelled: a fresh process takes new calls at once, and the old one
// is retired (see process.retire). This is not a failure of the pool.
func (w *worker) stuck(a *attempt, p poolProcess, why string) {
	w.mu.Lock()
	if !w.closed {
		w.set.opts.Logger.Warn("replacing a stuck pool process", "pool", w.label, "pid", p.pid(), "why", why)
		w.event(EventRestarted)
		live := w.retired[:0]
		for _, r := range w.retired {
			select {
			case <-r.ended():
			default:
				live = append(live, r)
			}
		}
		w.retired = append(live, p)
		if w.cur == a {
			w.launch()
		}
	}
	w.mu.Unlock()
	p.retire(why)
}

// withOutputDir adds NEXUS_OUTPUT_DIR, the directory where a function may
// write the files it returns (a command's metadata.result "file"), when
// nexus has one: both kinds of pool get it.
func withOutputDir(env []string, dir string) []string {
	if dir == "" {
		return env
	}
	return append(env, "NEXUS_OUTPUT_DIR="+dir)
}

// stop stops the worker's process, once any start in progress has ended
// (Close has cancelled the set's context, so that is prompt), and starts
// nothing more.
func (w *worker) stop() {
	w.mu.Lock()
	w.closed = true
	if w.restart != nil {
		w.restart.Stop()
	}
	a := w.cur
	retired := w.retired
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range retired {
		wg.Go(p.stop)
	}
	if a != nil {
		wg.Go(func() {
			<-a.done
			if a.proc != nil {
				a.proc.stop()
			}
		})
	}
	wg.Wait()
}

// event tells Options.OnEvent, if any, of e.
func (w *worker) event(e Event) { w.set.event(w.spec.Lang, e) }
