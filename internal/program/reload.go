package program

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/reload"
)

// Hot reload: --watch, and SIGHUP for nexus serve. A reload loads and
// checks the programs as at start, starts their pools and waits until they
// are ready, then swaps them in (mcp.Server.SetSurface,
// httpserve.Server.Reload); the old pools stop once the calls still running
// on them have ended. A rebuild that fails anywhere on the way leaves the
// old programs serving, and says why on stderr and to the clients that
// asked for log messages (slog's default logger is the LogHub).

// livePools are the pools of every generation still running: the current
// one, and older ones whose calls in flight have not ended yet.
type livePools struct {
	mu      sync.Mutex
	live    map[*poolsOf]struct{}
	stopped bool
}

// poolsOf stops one generation's pools.
type poolsOf struct{ stop func() }

func newLivePools() *livePools { return &livePools{live: map[*poolsOf]struct{}{}} }

// add records a generation's pools; after stopAll they are stopped at once.
func (lp *livePools) add(stop func()) *poolsOf {
	p := &poolsOf{stop: stop}
	lp.mu.Lock()
	stopped := lp.stopped
	if !stopped {
		lp.live[p] = struct{}{}
	}
	lp.mu.Unlock()
	if stopped {
		stop()
	}
	return p
}

// retire stops a generation's pools once drained closes.
func (lp *livePools) retire(p *poolsOf, drained <-chan struct{}) {
	go func() {
		<-drained
		lp.mu.Lock()
		_, live := lp.live[p]
		delete(lp.live, p)
		lp.mu.Unlock()
		if live {
			p.stop()
		}
	}()
}

// stopAll stops every generation's pools (nexus is exiting).
func (lp *livePools) stopAll() {
	lp.mu.Lock()
	lp.stopped = true
	all := make([]*poolsOf, 0, len(lp.live))
	for p := range lp.live {
		all = append(all, p)
	}
	clear(lp.live)
	lp.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range all {
		wg.Go(p.stop)
	}
	wg.Wait()
}

// running is a program whose pools are started, with what calls it.
type running struct {
	*Program
	caller *Caller
}

// swapFunc serves a new generation of programs and returns a channel that
// closes once no call uses the previous one.
type swapFunc func(next []running) (<-chan struct{}, error)

// reloader reloads the served programs when their files change (a
// Watcher, --watch) or when told to (SIGHUP), one reload at a time.
type reloader struct {
	o       *Options
	targets []string
	log     *slog.Logger
	pools   *livePools
	current *poolsOf
	swap    swapFunc
	watcher *reload.Watcher // nil without --watch
	files   []string        // the current programs' files
	digest  string          // of files, as last loaded or tried
}

// newReloader takes over the running generation (its programs and pools);
// with watch it watches their files.
func newReloader(o *Options, targets []string, programs []*Program, pools *livePools, current *poolsOf, swap swapFunc, watch bool) (*reloader, error) {
	r := &reloader{o: o, targets: targets, log: slog.Default(), pools: pools, current: current, swap: swap, files: programFiles(programs)}
	r.digest = reload.Digest(r.files)
	if watch {
		w, err := reload.New(reload.DefaultDebounce, r.log)
		if err != nil {
			return nil, err
		}
		if err := w.Watch(r.files); err != nil {
			w.Close()
			return nil, err
		}
		r.watcher = w
	}
	return r, nil
}

// programFiles lists the files of the programs, manifests and pool files.
func programFiles(programs []*Program) []string {
	var files []string
	for _, p := range programs {
		files = append(files, reload.ProgramFiles(p.Manifest)...)
	}
	return files
}

// run reloads on each change or signal until ctx ends.
func (r *reloader) run(ctx context.Context, hup <-chan os.Signal) {
	var changes <-chan struct{}
	if r.watcher != nil {
		changes = r.watcher.Changes()
		defer r.watcher.Close()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			r.reload(ctx, "a watched file changed", false)
		case <-hup:
			r.reload(ctx, "SIGHUP", true)
		}
	}
}

// reload loads the programs again and swaps them in; force reloads files
// whose bytes did not change too (SIGHUP: the operator asked).
func (r *reloader) reload(ctx context.Context, why string, force bool) {
	digest := reload.Digest(r.files)
	if !force && digest == r.digest {
		r.log.Debug("watched files changed, but not their contents: not reloading")
		return
	}
	r.digest = digest // a failed reload is not tried again until the files change
	started := time.Now()
	r.log.Info("reloading", "why", why)
	next, stop, err := r.start(ctx)
	if err == nil {
		var drained <-chan struct{}
		if drained, err = r.swap(next); err == nil {
			r.pools.retire(r.current, drained)
			r.current = r.pools.add(stop)
		} else {
			stop()
		}
	}
	if err != nil {
		r.log.Error("reload failed: still serving the previous program", "why", why, "err", err)
		r.rewatch()
		return
	}
	programs := make([]*Program, len(next))
	for i, n := range next {
		programs[i] = n.Program
	}
	if files := programFiles(programs); !slices.Equal(files, r.files) {
		// Read after the load: a write in between would look loaded already.
		r.files, r.digest = files, ""
	}
	r.rewatch()
	tools := 0
	names := make([]string, len(programs))
	for i, p := range programs {
		tools += len(p.Tools)
		names[i] = p.Manifest.Name
	}
	r.log.Info("reloaded", "program", strings.Join(names, ","), "tools", tools, "took", time.Since(started).Round(time.Millisecond))
}

// rewatch watches the current files again: a directory replaced whole
// (rm -r, then a copy) needs a new watch.
func (r *reloader) rewatch() {
	if r.watcher == nil {
		return
	}
	if err := r.watcher.Watch(r.files); err != nil {
		r.log.Warn("cannot watch every file of the program", "err", err)
	}
}

// start loads every target as at start-up and starts its pools, waiting
// until they are ready; on an error it stops what it started. It returns
// what stops the pools.
func (r *reloader) start(ctx context.Context) ([]running, func(), error) {
	var next []running
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	for _, t := range r.targets {
		p, err := Load(t, r.o)
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		caller, stop := p.Start(r.o)
		stops = append(stops, stop)
		next = append(next, running{Program: p, caller: caller})
	}
	ctx, cancel := context.WithTimeout(ctx, 2*r.o.StartTimeout)
	defer cancel()
	for _, n := range next {
		if n.caller.pools == nil {
			continue // every command is pure
		}
		if err := n.caller.pools.Ready(ctx); err != nil {
			stopAll()
			return nil, nil, fmt.Errorf("%s: %w", n.Manifest.Path, err)
		}
	}
	return next, stopAll, nil
}

// background runs the reloader in the background until the function returned
// is called, which waits for a reload under way to end (its pools
// stopped).
func (r *reloader) background(hup <-chan os.Signal) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx, hup)
	}()
	return func() {
		cancel()
		<-done
	}
}
