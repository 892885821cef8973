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
	jobs chan job // unbuffered: a send succeeds only when a goroutine is idle
	wg   sync.WaitGroup
}

// job is f, or run with its reply handed to then: a request's run and a
// then made once per session need no closure of their own per request.
type job struct {
	f    func()
	run  func() *Response
	then func(*Response)
}

const runnerIdle = 10 * time.Second

func newRunner() *runner { return &runner{jobs: make(chan job)} }

// Go runs f on an idle goroutine, or on a new one when none is idle.
func (r *runner) Go(f func()) { r.submit(job{f: f}) }

// GoReply runs run on an idle goroutine, or on a new one, and hands its
// reply to then.
func (r *runner) GoReply(run func() *Response, then func(*Response)) {
	r.submit(job{run: run, then: then})
}

func (r *runner) submit(j job) {
	r.wg.Add(1)
	select {
	case r.jobs <- j:
	default:
		go r.loop(j)
	}
}

func (r *runner) loop(j job) {
	idle := time.NewTimer(runnerIdle)
	defer idle.Stop()
	for {
		r.run(j)
		idle.Reset(runnerIdle)
		var ok bool
		select {
		case j, ok = <-r.jobs:
			if !ok {
				return
			}
		case <-idle.C:
			return
		}
	}
}

// run runs one job and counts it done (a closure around the job to do so
// was an allocation per request).
func (r *runner) run(j job) {
	defer r.wg.Done()
	if j.f != nil {
		j.f()
		return
	}
	j.then(j.run())
}

// Wait waits for every function Go was given to return.
func (r *runner) Wait() { r.wg.Wait() }

// Close lets the idle goroutines go; Go must not be called after it.
func (r *runner) Close() { close(r.jobs) }
