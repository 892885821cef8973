package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// worker is one process slot of a pool. Its process starts with the set,
// is started again at once when it dies, and with a growing delay when it
// keeps failing (see Options.RestartDelay).
type worker struct {
	set      *Set
	spec     *Spec
	driver   driver // its pool's
	number   int    // from 1
	label    string // "py", or "py#2" when the pool has several workers
	inflight int    // guarded by poolGroup.mu

	mu       sync.Mutex
	cur      *attempt      // the latest start, nil before the first
	closed   bool          // the set is closing: start nothing more
	failures int           // failed starts and deaths before health, in a row
	retryAt  time.Time     // after failures: no start before this
	lastErr  error         // why the last start or process failed
	restart  *time.Timer   // a restart scheduled after a death
	retired  []poolProcess // replaced while a call was stuck in them, finishing their other calls
	// spare is a start begun in advance, for a morloc pool, while a call
	// given up on in the current process waits out its cancel grace: it
	// takes over at once should the call be stuck (see prepare).
	spare *attempt
}

// poolProcess is one running pool process as its worker supervises it,
// whichever protocol it speaks: *process (nexus's runtime: frames on fds 3
// and 4) or *morlocProcess (morloc's own pools: packets over a Unix
// socket), each a child (child.go) with its driver's wire. Restarts,
// backoff, timeouts, stuck calls, events and Close work the same for both
// through it.
type poolProcess interface {
	// call runs one call; an *unstartedError means the process never
	// began it, so that it may be sent to a fresh process.
	call(ctx context.Context, c *callRequest) (ndarray.Value, error)
	alive() bool          // it can still take calls
	answeredAny() bool    // it has answered a call: it works
	markAnswered()        // a call that needed it succeeded: it works
	upFor() time.Duration // how long it has been ready
	// awaitEnd reports whether the process has died, even if nexus has
	// not seen it yet, waiting then until its worker has started the next.
	awaitEnd() bool
	// retire takes it out of service because a call in it is stuck; it
	// stops once the calls it still runs are done.
	retire(why string)
	stop()                  // ends it and returns once it is gone
	ended() <-chan struct{} // closed once it is gone
	pid() int
}

// driver starts the processes of the pools that speak one protocol, and
// tells the shared layer (set.go, worker.go) how their calls differ:
// nexusDriver (nexusproc.go) and morlocProgram (morloc.go).
type driver interface {
	// start starts one process of worker w from cfg, adding the
	// protocol's own arguments and environment.
	start(ctx context.Context, w *worker, cfg childConfig) (poolProcess, error)
	// maxWorkers bounds how many processes one pool runs; 0: no bound.
	maxWorkers() int
	// inlineCalls reports whether a call may wait for its reply on its
	// caller's goroutine (CallOptions.Inline).
	inlineCalls() bool
	// awaitsNeeds reports whether a call waits until the other pools its
	// function calls (Function.Needs) have a live process.
	awaitsNeeds() bool
	// watchedBy tells the reaper what the driver's pools leave on disk,
	// before any starts; cleanup removes it once they are gone.
	watchedBy(r *reaper)
	cleanup()
}

// errExpired is returned by worker.process when the call's timeout passed
// while it waited for the pool to start.
var errExpired = errors.New("the call's time ran out")

// attempt is one start of a worker's process.
type attempt struct {
	done   chan struct{} // closed when the start has succeeded or failed
	proc   poolProcess   // nil when the start failed
	err    error
	cancel context.CancelFunc // abandons a spare's start (see prepare); nil otherwise
}

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
	select {
	case <-a.done:
		return a.proc, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-expired:
		return nil, errExpired
	}
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
	wait := time.Until(w.retryAt)
	if w.lastErr == nil || wait <= 0 || w.closed {
		return nil
	}
	return fmt.Errorf("pool %s is down after %d failures in a row; next start in %s. Last failure: %w",
		w.label, w.failures, wait.Round(time.Millisecond), w.lastErr)
}

// launch begins a new start of the worker's process. w.mu is held.
func (w *worker) launch() *attempt {
	a := w.begin(w.set.ctx)
	w.cur = a
	return a
}

// begin begins a start of the worker's process, current or spare, which
// ctx abandons. w.mu is held.
func (w *worker) begin(ctx context.Context) *attempt {
	a := &attempt{done: make(chan struct{})}
	s := w.set
	if w.closed || s.ctx.Err() != nil {
		a.err = fmt.Errorf("pool %s: %w", w.label, errClosed)
		close(a.done)
		return a
	}
	go func() {
		defer close(a.done) // after the failure is recorded: the next call sees it
		<-s.reaperUp        // so that the reaper learns of this pool's group
		hooks := processHooks{
			onDeath: func(p poolProcess, err error) { w.died(a, p, err) },
			onStuck: func(p poolProcess, why string) { w.stuck(a, p, why) },
			onBroken: func(p poolProcess, why string) {
				w.replace(a, p, "replacing a pool process whose worker died", why)
			},
			prepare:   func(ready func()) { w.prepare(a, ready) },
			unprepare: func() { w.unprepare(a) },
		}
		if w.spec.DirErr != nil {
			a.err = fmt.Errorf("pool %s failed to start: %w", w.label, w.spec.DirErr)
		} else {
			a.proc, a.err = w.driver.start(ctx, w, w.config(hooks))
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.closed || ctx.Err() != nil {
			return // a start nexus abandoned is no failure of the pool
		}
		if a.err != nil {
			w.failed(a.err, false)
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
	delay := w.failed(err, healthy)
	w.set.opts.Logger.Info("restarting pool", "pool", w.label, "in", delay, "failures", w.failures)
	w.event(EventCrashed)
	w.event(EventRestarted)
	if w.spare != nil {
		w.cur, w.spare = w.spare, nil // already starting (prepare)
		return
	}
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
	w.replace(a, p, "replacing a stuck pool process", why)
}

// replace starts a fresh process in place of p, the process of attempt a,
// and retires p; msg says why, for the log.
func (w *worker) replace(a *attempt, p poolProcess, msg, why string) {
	w.mu.Lock()
	if !w.closed {
		w.set.opts.Logger.Warn(msg, "pool", w.label, "pid", p.pid(), "why", why)
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
			if w.spare != nil {
				w.cur, w.spare = w.spare, nil // started in advance (prepare)
			} else {
				w.launch()
			}
		}
	}
	w.mu.Unlock()
	p.retire(why)
}

// config is what each start of w's process begins with.
func (w *worker) config(h processHooks) childConfig {
	o := &w.set.opts
	return childConfig{
		lang:         w.spec.Lang,
		runtime:      w.spec.Runtime,
		label:        w.label,
		argv:         w.spec.Exec,
		dir:          w.spec.Dir,
		stderr:       o.Stderr,
		outputLog:    o.OutputLog,
		logger:       o.Logger,
		startTimeout: o.StartTimeout,
		grace:        o.StopGrace,
		cancelGrace:  o.CancelGrace,
		reaper:       w.set.reaper,
		functions:    w.spec.Functions,
		processHooks: h,
	}
}

// withOutputDir adds NEXUS_OUTPUT_DIR, the directory where a function may
// write the files it returns (a command's metadata.result "file"), when
// nexus has one: every driver gives it to its pools.
func withOutputDir(env []string, dir string) []string {
	if dir == "" {
		return env
	}
	return append(env, "NEXUS_OUTPUT_DIR="+dir)
}

// replaceLive replaces the worker's process, if one is up, as replace
// does; msg says why, for the log.
func (w *worker) replaceLive(msg, why string) {
	w.mu.Lock()
	a := w.cur
	w.mu.Unlock()
	if a == nil {
		return
	}
	select {
	case <-a.done:
	default:
		return // still starting: nothing of the call is in it
	}
	if a.proc != nil && a.proc.alive() {
		w.replace(a, a.proc, msg, why)
	}
}

// prepare begins starting, as a spare, the process that would replace the
// one of attempt a should a call given up on in it not end (a morloc pool
// cannot cancel a call, and calls wait while it may still end), and calls
// ready once the spare is up.
func (w *worker) prepare(a *attempt, ready func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.cur != a || w.spare != nil {
		return
	}
	ctx, cancel := context.WithCancel(w.set.ctx)
	sp := w.begin(ctx)
	sp.cancel = cancel
	w.spare = sp
	go func() {
		<-sp.done
		if sp.err == nil {
			ready()
		}
	}()
}

// unprepare drops the spare of attempt a: the calls given up on in its
// process ended within their grace.
func (w *worker) unprepare(a *attempt) {
	w.mu.Lock()
	sp := w.spare
	if w.cur != a || sp == nil {
		w.mu.Unlock()
		return
	}
	w.spare = nil
	w.mu.Unlock()
	sp.cancel() // a start still under way is abandoned
	go func() {
		<-sp.done
		if sp.proc != nil {
			sp.proc.stop()
		}
	}()
}

// failed records a failed start or a death, and returns how long the
// worker now waits before starting again. A failure after a healthy run
// starts the count afresh. w.mu is held.
func (w *worker) failed(err error, healthy bool) time.Duration {
	if healthy {
		w.failures = 0
	}
	w.failures++
	w.lastErr = err
	var delay time.Duration
	if w.failures > 1 {
		opts := &w.set.opts
		delay = opts.MaxRestartDelay
		if shift := w.failures - 2; shift < 32 {
			delay = min(opts.RestartDelay<<shift, opts.MaxRestartDelay)
		}
	}
	w.retryAt = time.Now().Add(delay)
	return delay
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
	starts := []*attempt{w.cur, w.spare}
	retired := w.retired
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range retired {
		wg.Go(p.stop)
	}
	for _, a := range starts {
		if a != nil {
			wg.Go(func() {
				<-a.done
				if a.proc != nil {
					a.proc.stop()
				}
			})
		}
	}
	wg.Wait()
}

// event tells Options.OnEvent, if any, of e.
func (w *worker) event(e Event) {
	if f := w.set.opts.OnEvent; f != nil {
		f(w.spec.Lang, e)
	}
}
