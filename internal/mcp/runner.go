package mcp

import (
	"sync"
	"time"
)

// runner runs functions on goroutines it keeps between requests. A fresh
// goroutine per tools/call started with a small stack and grew it on every
// call (the stack copies were a fifth of nexus's CPU on a small call); a
// kept one has grown already. Goroutines idle for runnerIdle exit.
type runner struct {
	jobs chan func() // unbuffered: a send succeeds only when a goroutine is idle
	wg   sync.WaitGroup
}

const runnerIdle = 10 * time.Second

func newRunner() *runner { return &runner{jobs: make(chan func())} }

// Go runs f on an idle goroutine, or on a new one when none is idle.
func (r *runner) Go(f func()) {
	r.wg.Add(1)
	select {
	case r.jobs <- f:
	default:
		go r.loop(f)
	}
}

func (r *runner) loop(job func()) {
	idle := time.NewTimer(runnerIdle)
	defer idle.Stop()
	for {
		r.run(job)
		idle.Reset(runnerIdle)
		var ok bool
		select {
		case job, ok = <-r.jobs:
			if !ok {
				return
			}
		case <-idle.C:
			return
		}
	}
}

// run runs one job and counts it done (a closure around f to do so was an
// allocation per request).
func (r *runner) run(job func()) {
	defer r.wg.Done()
	job()
}

// Wait waits for every function Go was given to return.
func (r *runner) Wait() { r.wg.Wait() }

// Close lets the idle goroutines go; Go must not be called after it.
func (r *runner) Close() { close(r.jobs) }
