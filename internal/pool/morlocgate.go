package pool

import (
	"context"
	"sync"
	"time"
)

// resultGate orders the calls nexus sends one morloc pool process so that
// a result in shared memory is held (morlocwire's Packet.Hold) before the
// pool can free it. A Python or C++ pool frees a result's block when the
// worker that made it starts its next job (morloc 0.69's pool.py run_job
// and pool.cpp cpp_local_dispatch flush the worker's tracker first thing),
// and the next allocation takes the freed block: a job sent while a result
// is on its way back may be that next job, and nexus would read its value
// instead (docs/spec.md §8.5). So a call whose result may
// come in shared memory runs alone: it waits until the calls in flight are
// done, and the calls after it wait until its result is copied out, or it
// was given up on. Calls whose results always come inline run together.
// Waiters go in the order they came, so neither kind starves.
type resultGate struct {
	mu      sync.Mutex
	shared  int  // calls in flight together
	alone   bool // a call in flight alone
	waiting []*gateTicket
}

type gateTicket struct {
	alone   bool
	granted bool
	ready   chan struct{} // closed when granted
}

// enter waits until the call may be sent (alone: it must be the only call
// in flight) and returns the function that lets the next calls in, which
// may be called more than once. It gives up when ctx ends
// (ctx.Err()) or expired fires (errExpired).
func (g *resultGate) enter(ctx context.Context, expired <-chan time.Time, alone bool) (leave func(), err error) {
	t := &gateTicket{alone: alone, ready: make(chan struct{})}
	g.mu.Lock()
	g.waiting = append(g.waiting, t)
	g.wake()
	g.mu.Unlock()
	leave = sync.OnceFunc(func() { g.leave(t) })
	select {
	case <-t.ready:
		return leave, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
		err = errExpired
	}
	g.mu.Lock()
	if !t.granted {
		for i, w := range g.waiting {
			if w == t {
				g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
				break
			}
		}
		g.wake() // a call behind this one may go now
		g.mu.Unlock()
		return nil, err
	}
	g.mu.Unlock()
	leave() // granted as the wait ended
	return nil, err
}

func (g *resultGate) leave(t *gateTicket) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.alone {
		g.alone = false
	} else {
		g.shared--
	}
	g.wake()
}

// wake lets in the waiters at the head of the line that may go now.
// g.mu is held.
func (g *resultGate) wake() {
	for len(g.waiting) > 0 {
		t := g.waiting[0]
		if g.alone || t.alone && g.shared > 0 {
			return
		}
		if t.alone {
			g.alone = true
		} else {
			g.shared++
		}
		t.granted = true
		close(t.ready)
		g.waiting = g.waiting[1:]
	}
}
