package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// Spec describes one manifest pool.
type Spec struct {
	Index int      // the pool's index in the manifest; Call names pools by it
	Lang  string   // "py", "r", "cpp", ...
	Exec  []string // argv; a relative first element with a slash is resolved against Dir
	Dir   string   // the manifest's directory: the pool's working directory
	// Workers is how many identical processes a nexus pool spreads calls
	// over; 0 means DefaultWorkers(Lang). A program's morloc pools run as
	// up to as many instances as the largest Workers among them says
	// (docs/spec.md §8.2); 0 means one per CPU.
	Workers int
	// ArgTypes sends each call its arguments' declared types ("takes"):
	// the manifest's metadata.arrays is "numpy".
	ArgTypes bool

	// Functions describes the pool's functions by mid, as the manifest
	// knows them: names for messages, timeouts. Calls of other mids are
	// still sent (the pool decides), and named by their mid.
	Functions map[int]Function

	// Runtime says which protocol the pool speaks: RuntimeNexus (or "")
	// for pools written against nexus's runtime, RuntimeMorloc for the
	// pools morloc compiles (docs/spec.md §8).
	Runtime string
	// Socket is a morloc pool's socket file name in the program's
	// temporary directory ("pipe-py"): where its sibling pools reach it.
	Socket string
	// PoolHash is the manifest's pool_hash, given to a morloc pool as
	// MORLOC_POOL_HASH; empty for manifests that have none (0.69).
	PoolHash string
	// DirErr, when set, says why Dir cannot be the pool's working directory
	// (manifest.CheckDir: a program moved from the build directory its
	// launcher records); every start of the pool fails with it.
	DirErr error
}

// The runtimes a Spec may name: the manifest's (manifest.Pool.Runtime).
const (
	RuntimeNexus  = manifest.RuntimeNexus  // nexus's own: frames on fds 3 and 4 (docs/internals.md)
	RuntimeMorloc = manifest.RuntimeMorloc // morloc's: packets over a Unix socket, one connection per call
)

// Function is what the manifest says about one of a pool's functions.
type Function struct {
	Name    string        // the command's name: "call to 'fighterDamage' timed out after 30s"
	Timeout time.Duration // bounds its calls: 0 takes Options.CallTimeout, negative means none

	// Args and Return are the function's schemas, which a morloc pool's
	// calls need: arguments travel as msgpack laid out exactly as their
	// schema says, and results come back as voidstar read by its schema.
	// A nexus pool does without them. A nil Return is read from the
	// schema the result packet carries.
	Args   []*manifest.Type
	Return *manifest.Type
	// Needs lists the other pools (by index) the function calls, the
	// manifest's needed_pools: a morloc pool's function reaches them over
	// their sockets itself, so its calls wait until they are up.
	Needs []int
}

// DefaultWorkers is how many processes a pool of lang runs when its Spec
// does not say. Python and C++ runtimes run each call on a thread of its own,
// so one process serves calls in parallel; R runs one call at a time, so it
// gets one process per CPU, up to four (each R process holds its own copy of
// the program's data, so more would mostly cost memory).
func DefaultWorkers(lang string) int {
	switch lang {
	case "r":
		return min(4, runtime.NumCPU())
	default:
		return 1
	}
}

// Event is a moment in a pool process's life, for Options.OnEvent.
type Event string

const (
	EventStarted   Event = "started"   // a process said it is ready
	EventCrashed   Event = "crashed"   // a ready process ended without being asked to
	EventRestarted Event = "restarted" // a process is started again: after a crash, or in place of a stuck one
)

// Options tunes a Set. Zero values take the defaults.
type Options struct {
	Stderr io.Writer // where pool output goes, line by line and prefixed; default os.Stderr
	// OutputLog, when set, takes pool output instead of Stderr: each line
	// is a record ("pool output", pool, text), so that a JSON log stays
	// JSON lines (nexus --log-format json).
	OutputLog *slog.Logger
	// OnEvent, when set, learns of each pool process's life (nexus serve's
	// /metrics): lang is the pool's language ("py", "r", "cpp"). It is
	// called with the pool's lock held and must not block.
	OnEvent      func(lang string, e Event)
	Logger       *slog.Logger  // default slog.Default()
	StartTimeout time.Duration // how long a pool may take to become ready; default 30s
	StopGrace    time.Duration // how long a pool may take to exit at each stop step; default 2s

	// A process that dies is restarted at once. One that dies (or fails to
	// start) again before it is healthy waits RestartDelay, then twice that
	// after the next failure, and so on up to MaxRestartDelay; calls made
	// meanwhile fail at once with the reason. A process is healthy once it
	// has answered a call or stayed up for HealthyAfter. Defaults: 100ms,
	// 30s, 1 minute.
	RestartDelay    time.Duration
	MaxRestartDelay time.Duration
	HealthyAfter    time.Duration

	// CallTimeout bounds calls whose CallOptions set no Timeout; 0: none.
	CallTimeout time.Duration
	// CancelGrace is how long a call may take to stop once cancelled (by
	// its caller or its timeout) before its process is replaced; default 2s.
	// A morloc pool cannot cancel a call: its instance is retired at once.
	CancelGrace time.Duration

	// InstanceIdle is how long a morloc instance beyond the first may stay
	// idle before it stops; default 30s.
	InstanceIdle time.Duration

	// StartDelay holds back the start of every pool that no call has asked
	// for yet: until the pool of the first call is ready, or, if no call
	// comes, for StartDelay. On a machine with few cores, an interpreter
	// starting for nothing slows the one a client is waiting for. 0 starts
	// every pool at once.
	StartDelay time.Duration

	// OutputDir is nexus's output directory, given to every pool as
	// NEXUS_OUTPUT_DIR: where functions write the files they return.
	OutputDir string

	// Reaper starts a reaper process that kills the pools' process groups
	// if this program dies without stopping them (see reaper). The program
	// must call RunReaperIfAsked first in main.
	Reaper bool

	// Morloc is what the program says about its morloc pools as a whole
	// (the Specs whose Runtime is RuntimeMorloc).
	Morloc MorlocOptions
}

// MorlocOptions are a program's settings for its morloc pools.
type MorlocOptions struct {
	// WireVersion is the morloc version whose pool wire format the pools
	// speak ("0.69.0", "0.98.2"): the manifest's WireVersion.
	WireVersion string
	// InlineSize, NoShm and TmpDir are the manifest's inline_size, no_shm
	// and tmpdir (0.98): given to every pool as MORLOC_INLINE_SIZE,
	// MORLOC_NO_SHM=1 and MORLOC_TMPDIR when set.
	InlineSize *int64
	NoShm      bool
	TmpDir     string
}

// Hooks receive what a pool reports while a call runs. Any may be nil.
// Progress and Log run on the pool's reader goroutine, in the order the pool
// sent them, and never after Call has returned, so they must be quick.
type Hooks struct {
	// Progress receives the call's progress. A call asks the pool for
	// progress only when Progress is set.
	Progress func(progress float64, total *float64, message string)
	// Log receives the call's log records, with an MCP level ("info",
	// "warning", ...). Without it they go to the Logger.
	Log func(level string, data json.RawMessage)
	// Content receives a result's content blocks (an array of MCP content
	// blocks: text, image, audio, resource), when the function returned
	// some, just before Call returns the result's value. Without it the
	// blocks are dropped.
	Content func(blocks json.RawMessage)
	// Ask answers a request the function makes of the client while it runs
	// (an `ask` message, docs/internals.md): kind is "elicit", "sample"
	// or "roots"; key the name the function gave the question ("" for
	// none; 2026-07-28 inputRequests keys); params the MCP request's params (elicitation/create,
	// sampling/createMessage, roots/list). It returns the client's result
	// object, or an error whose text the function sees. It runs on a
	// goroutine of its own and may block; ctx ends with the call, and what
	// it returns after that is dropped (Call may have returned by then).
	// Without it the function's ask fails ("this call cannot ask the client").
	Ask func(ctx context.Context, kind, key string, params json.RawMessage) (json.RawMessage, error)
}

// CallError reports that the pool's function failed (it raised, or its
// result could not be encoded), or that the pool has no such function.
type CallError struct {
	Lang      string // the pool's language
	Message   string // "ValueError: bad AC"
	Traceback string // may be empty
}

func (e *CallError) Error() string { return e.Message }

// FunctionFailed reports true: the function failed, not its pool (how mcp
// tells a task's tool error from a failed task without knowing this type).
func (e *CallError) FunctionFailed() bool { return true }

// errClosed is returned by calls made after Close.
var errClosed = errors.New("the pools are shut down")

// Set runs the pools of one program and routes calls to them.
type Set struct {
	opts   Options
	reaper *reaper // nil without Options.Reaper, or if it could not start
	// gate closes when pools no call has asked for may start (StartDelay):
	// after the delay, or, once a call has come (called), when its pool
	// is ready.
	gate     chan struct{}
	gateOnce sync.Once
	called   atomic.Bool
	pools    map[int]poolRoute // by manifest index: where a pool's calls go
	runners  []runner          // each once: Start starts them, close stops them
	ctx      context.Context   // ends when the set closes: starts in progress give up
	cancel   context.CancelFunc
	// started closes once every pool's first start has ended; startErr
	// is then the first failure (see Ready).
	started  chan struct{}
	startErr error

	closeOnce sync.Once
}

// poolRoute is one manifest pool as the Set knows it: its spec, and the
// runner that drives it.
type poolRoute struct {
	spec   *Spec
	runner runner
}

// Start starts every pool in the background and returns at once. Calls wait
// for a pool that is still starting. When ctx ends, starts in progress are
// abandoned and no pool is started again; Close still has to be called.
func Start(ctx context.Context, specs []Spec, opts Options) *Set {
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	opts.Stderr = &lockedWriter{w: opts.Stderr}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 2 * time.Second
	}
	if opts.RestartDelay <= 0 {
		opts.RestartDelay = 100 * time.Millisecond
	}
	if opts.MaxRestartDelay <= 0 {
		opts.MaxRestartDelay = 30 * time.Second
	}
	if opts.HealthyAfter <= 0 {
		opts.HealthyAfter = time.Minute
	}
	if opts.CancelGrace <= 0 {
		opts.CancelGrace = 2 * time.Second
	}
	if opts.InstanceIdle <= 0 {
		opts.InstanceIdle = 30 * time.Second
	}
	s := &Set{opts: opts, pools: make(map[int]poolRoute), gate: make(chan struct{}), started: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(ctx)
	// The reaper's pipe is made now, and its process started in the
	// background: Start returns at once, nexus answers its client while
	// processes are forked, and pools tell the pipe of their groups
	// without waiting for the reaper to run.
	if opts.Reaper {
		warn := func(err error) { opts.Logger.Warn("pools may outlive nexus if it is killed", "err", err) }
		r, err := startReaper(os.Stderr, warn)
		if err != nil {
			warn(err)
		}
		s.reaper = r
	}
	if opts.StartDelay > 0 {
		time.AfterFunc(opts.StartDelay, func() {
			if !s.called.Load() { // else the called pool opens it once ready
				s.openGate()
			}
		})
	} else {
		s.openGate()
	}

	var morloc []Spec
	seen := map[int]bool{}
	for _, spec := range specs {
		if seen[spec.Index] {
			opts.Logger.Error("two pools with one index: keeping the first", "index", spec.Index, "lang", spec.Lang)
			continue
		}
		seen[spec.Index] = true
		// The choice of a runner is the one place the Set tells the
		// runtimes apart: morloc's takes all of a program's pools at once.
		if spec.Runtime == RuntimeMorloc {
			morloc = append(morloc, spec)
			continue
		}
		group := newPoolGroup(s, spec)
		s.pools[spec.Index] = poolRoute{&group.spec, group}
		s.runners = append(s.runners, group)
	}
	if len(morloc) > 0 {
		m := newMorlocProgram(s, morloc)
		for _, i := range m.order {
			s.pools[i] = poolRoute{m.specs[i], m}
		}
		s.runners = append(s.runners, m)
	}

	var g errgroup.Group
	for _, r := range s.runners {
		r.firstStarts(func(start func() error) {
			g.Go(func() error {
				select {
				case <-s.gate:
				case <-s.ctx.Done():
					return s.ctx.Err()
				}
				return start()
			})
		})
	}
	go func() {
		started := time.Now()
		err := g.Wait()
		if err == nil {
			opts.Logger.Debug("all pools ready", "pools", len(specs), "took", time.Since(started))
		}
		s.startErr = err
		close(s.started)
	}()
	return s
}

// Ready waits until every pool's first start has ended and returns the
// first failure, nil when every pool is ready. A reload waits on it, so
// that a rebuilt program whose pool cannot start leaves the old one serving.
func (s *Set) Ready(ctx context.Context) error {
	select {
	case <-s.started:
		return s.startErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Call runs function mid of pool (its manifest index) on args, one JSON
// value per manifest argument, and returns its JSON result. A function that
// raised gives a *CallError; a pool that cannot start or dies gives an error
// saying so with its last lines of output. When ctx ends, the pool is told to
// cancel the call and Call returns ctx.Err() at once. It is CallWith with
// hooks only.
func (s *Set) Call(ctx context.Context, pool, mid int, args []json.RawMessage, h Hooks) (json.RawMessage, error) {
	v, err := s.CallWith(ctx, pool, mid, args, CallOptions{Hooks: h})
	return v.JSON, err // without Ret the result holds no arrays
}

// maxTries bounds how often one call is sent to a fresh process after the
// process it was meant for went away before starting it.
const maxTries = 3

// CallWith is Call with options: a name for messages and a timeout. A call
// that times out returns a *TimeoutError at once; the pool is told to
// cancel it, and the process is replaced if it does not stop within
// Options.CancelGrace (docs/internals.md, "Cancellation, timeouts and
// stuck calls").
func (s *Set) CallWith(ctx context.Context, pool, mid int, args []json.RawMessage, opts CallOptions) (ndarray.Value, error) {
	route, ok := s.pools[pool]
	if !ok {
		return ndarray.Value{}, fmt.Errorf("no pool with index %d", pool)
	}
	spec := route.spec
	if s.ctx.Err() != nil {
		return ndarray.Value{}, fmt.Errorf("pool %s: %w", spec.Lang, errClosed)
	}
	fn := spec.Functions[mid]
	if opts.Name == "" {
		opts.Name = fn.Name
	}
	if opts.Timeout == 0 {
		opts.Timeout = fn.Timeout
	}
	c := &callRequest{mid: mid, args: args, opts: opts, lang: spec.Lang, timeout: opts.Timeout}
	if c.timeout == 0 {
		c.timeout = s.opts.CallTimeout
	}
	if c.timeout > 0 {
		timer := startTimer(c.timeout)
		defer stopTimer(timer)
		c.expired = timer.C
		c.deadline = time.Now().Add(c.timeout)
	}
	s.called.Store(true)
	return route.runner.call(ctx, spec, c)
}

// unstarted reports whether err says the process never began the call.
func unstarted(err error) bool {
	var us *unstartedError
	return errors.As(err, &us)
}

// timers holds stopped call timers for the next calls: nearly every call
// has a timeout (nexus's default is five minutes), and a timer made for
// each was three allocations of every small call. A timer is reused once
// the call that waited on it has returned, and only if it never fired, so
// that its channel holds no tick (whatever GODEBUG=asynctimerchan says).
var timers sync.Pool

func startTimer(d time.Duration) *time.Timer {
	if t, ok := timers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// stopTimer returns t to the pool; nothing may wait on t.C after it.
func stopTimer(t *time.Timer) {
	if t.Stop() {
		timers.Put(t)
	}
}

// openGate lets the pools no call has asked for start (StartDelay).
func (s *Set) openGate() { s.gateOnce.Do(func() { close(s.gate) }) }

// Close stops every pool (see child.stop) and waits for them to exit.
// Calls in flight fail. Close may be called more than once.
func (s *Set) Close() error {
	s.close(false)
	return nil
}

// Abandon is Close for a program about to exit, its answer given (a CLI
// run, as morloc's nexus exits as it prints): its morloc pools are left to
// the reaper, which kills them and removes their files at once, while
// nexus exits; nexus pools, which may have work to finish, are stopped as
// Close stops them. Without a reaper it is Close.
func (s *Set) Abandon() {
	s.close(s.reaper.running())
}

func (s *Set) close(abandon bool) {
	s.closeOnce.Do(func() {
		s.cancel()
		var wg sync.WaitGroup
		for _, r := range s.runners {
			wg.Go(func() { r.stop(abandon) })
		}
		wg.Wait()
		if abandon {
			s.reaper.leave()
			return
		}
		s.reaper.close(s.opts.Logger)
	})
}

// childConfig is what each start of a pool process begins with; its
// protocol adds args and env.
func (s *Set) childConfig(spec *Spec, label string, h processHooks) childConfig {
	o := &s.opts
	return childConfig{
		lang:         spec.Lang,
		runtime:      spec.Runtime,
		label:        label,
		argv:         spec.Exec,
		dir:          spec.Dir,
		stderr:       o.Stderr,
		outputLog:    o.OutputLog,
		logger:       o.Logger,
		startTimeout: o.StartTimeout,
		grace:        o.StopGrace,
		cancelGrace:  o.CancelGrace,
		reaper:       s.reaper,
		functions:    spec.Functions,
		processHooks: h,
	}
}

// event tells Options.OnEvent, if any, of e in a pool of lang.
func (s *Set) event(lang string, e Event) {
	if f := s.opts.OnEvent; f != nil {
		f(lang, e)
	}
}

// lockedWriter keeps lines from several pools whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
