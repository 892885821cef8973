package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/httpserve"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/reload"
)

// Hot reload (issue 12 §4): --watch, and SIGHUP for nexus serve. A
// reload loads and checks the programs as at start, starts their pools
// and waits until they are ready, then swaps them in (mcp.Server.SetTools,
// httpserve.Server.Reload); the old pools stop once the calls still
// running on them have ended. A rebuild that fails anywhere on the way
// leaves the old programs serving, and says why on stderr and to the
// clients that asked for log messages (slog's default logger is the LogHub).

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

// swapFunc serves a new generation of programs and returns a channel that
// closes once no call uses the previous one.
type swapFunc func(programs []httpserve.Program, loaded []*loaded) (<-chan struct{}, error)

// reloader reloads the served programs when their files change (a
// Watcher, --watch) or when told to (SIGHUP), one reload at a time.
type reloader struct {
	g       *globalFlags
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
func newReloader(g *globalFlags, targets []string, running []*loaded, pools *livePools, current *poolsOf, swap swapFunc, watch bool) (*reloader, error) {
	r := &reloader{g: g, targets: targets, log: slog.Default(), pools: pools, current: current, swap: swap, files: programFiles(running)}
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
func programFiles(programs []*loaded) []string {
	var files []string
	for _, l := range programs {
		files = append(files, reload.ProgramFiles(l.m)...)
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
	programs, loaded, pools, err := r.start(ctx)
	if err == nil {
		var drained <-chan struct{}
		if drained, err = r.swap(programs, loaded); err == nil {
			r.pools.retire(r.current, drained)
			r.current = r.pools.add(pools)
		} else {
			pools()
		}
	}
	if err != nil {
		r.log.Error("reload failed: still serving the previous program", "why", why, "err", err)
		r.rewatch()
		return
	}
	if files := programFiles(loaded); !slices.Equal(files, r.files) {
		// Read after the load: a write in between would look loaded already.
		r.files, r.digest = files, ""
	}
	r.rewatch()
	tools := 0
	names := make([]string, len(loaded))
	for i, l := range loaded {
		tools += len(l.tools)
		names[i] = l.m.Name
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
func (r *reloader) start(ctx context.Context) ([]httpserve.Program, []*loaded, func(), error) {
	var programs []httpserve.Program
	var loadedAll []*loaded
	var callers []programCaller
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	for _, t := range r.targets {
		p, l, err := loadServed(t)
		if err != nil {
			stopAll()
			return nil, nil, nil, err
		}
		caller, stop := l.caller(r.g)
		stops = append(stops, stop)
		p.Caller = caller
		programs = append(programs, p)
		loadedAll = append(loadedAll, l)
		callers = append(callers, caller)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*r.g.startTimeout)
	defer cancel()
	for i, c := range callers {
		if c.set == nil {
			continue // every command is pure
		}
		if err := c.set.Ready(ctx); err != nil {
			stopAll()
			return nil, nil, nil, fmt.Errorf("%s: %w", loadedAll[i].m.Path, err)
		}
	}
	return programs, loadedAll, stopAll, nil
}

// watchStdio reloads a stdio server's program when its files change
// (nexus mcp --watch); the function returned stops watching.
func watchStdio(g *globalFlags, target string, running *loaded, pools *livePools, current *poolsOf, srv *mcp.Server) (func(), error) {
	swap := func(programs []httpserve.Program, loaded []*loaded) (<-chan struct{}, error) {
		l := loaded[0]
		drained := srv.SetSurface(l.surface(programs[0].Caller))
		srv.NotifyToolsChanged()
		return drained, nil
	}
	r, err := newReloader(g, []string{target}, []*loaded{running}, pools, current, swap, true)
	if err != nil {
		return nil, err
	}
	return r.background(nil), nil
}

// serveReloads reloads an HTTP server's programs on SIGHUP, and when their
// files change with watch; the function returned stops.
func serveReloads(g *globalFlags, targets []string, running []*loaded, pools *livePools, current *poolsOf, srv *httpserve.Server, watch bool) (func(), error) {
	swap := func(programs []httpserve.Program, _ []*loaded) (<-chan struct{}, error) {
		return srv.Reload(serveInfo(programs), programs)
	}
	r, err := newReloader(g, targets, running, pools, current, swap, watch)
	if err != nil {
		return nil, err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	// hup stays registered: a SIGHUP during shutdown is ignored, not fatal.
	return r.background(hup), nil
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
