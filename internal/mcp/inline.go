package mcp

import (
	"context"
	"io"
	"sync"
	"syscall"
)

// A tools/call over stdio may run on the goroutine that reads stdin, with
// the pool call waiting for its reply and for stdin in one poll(2): with
// one call in flight, no goroutine is woken between the request line and
// the reply line, which is where a small call's CPU went
// (docs/performance.md). The rule that keeps every request answered: stdin
// is read by someone at all times a request may wait. So the call either
// waits inline, watching stdin, and hands stdin to another goroutine (a
// follower) as soon as it has input, or hands it over before it waits at
// all. Only a Caller that promises this (InlineCaller) is given the chance;
// for any other, stdin is handed over first.

// InlineWait lets a call wait for its reply on the goroutine that reads
// stdin (CallHooks.Inline). Fd is stdin's descriptor: the call may poll it
// but never read it. Once Fd has input, or before the call waits for
// anything without watching Fd, the call must call Yield, which hands the
// reading of stdin to another goroutine; it reports whether it did (false:
// stdin is read already, the request is past the point of waiting inline).
type InlineWait struct {
	Fd    int
	Yield func() bool
}

// InlineCaller is a Caller that honours CallHooks.Inline: every call given
// one either waits watching its Fd or calls its Yield before waiting for
// anything else (a pool to start, a pure command's evaluation, a pool of
// another runtime).
type InlineCaller interface {
	Caller
	TakesInline()
}

// inlineSlot is one stdin request running on the stdin reader: while it
// runs no one reads stdin, so its call must watch stdin or yield.
type inlineSlot struct {
	fd     int
	follow func() // starts a goroutine that reads stdin from now on

	mu      sync.Mutex
	active  bool // the request is running on the stdin reader
	claimed bool // a call took the InlineWait
	yielded bool // stdin is another goroutine's now
}

type inlineKey struct{}

func withInline(ctx context.Context, s *inlineSlot) context.Context {
	return context.WithValue(ctx, inlineKey{}, s)
}

// inlineFor returns the InlineWait a call to caller may take: one per
// request, for an InlineCaller; for another caller, stdin is handed over
// now, before it may wait.
func inlineFor(ctx context.Context, caller Caller) *InlineWait {
	s, _ := ctx.Value(inlineKey{}).(*inlineSlot)
	if s == nil {
		return nil
	}
	if _, ok := caller.(InlineCaller); !ok {
		s.yield()
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.active || s.claimed || s.yielded {
		return nil
	}
	s.claimed = true
	return &InlineWait{Fd: s.fd, Yield: s.yield}
}

// yield hands stdin to a follower, once, while the request runs on the
// stdin reader, and reports whether it did.
func (s *inlineSlot) yield() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.active || s.yielded {
		return false
	}
	s.yielded = true
	s.follow()
	return true
}

// done ends the request's run on the stdin reader and reports whether
// stdin was handed over meanwhile (then this goroutine reads it no more).
func (s *inlineSlot) done() (yielded bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = false
	return s.yielded
}

// pollableFd returns r's descriptor when poll(2) can watch it for input (a
// pipe, a socket, a terminal), or -1: a regular file is always readable,
// and a reader without a descriptor cannot be watched at all.
func pollableFd(r io.Reader) int {
	sc, ok := r.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if rc.Control(func(d uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(d), &st) != nil {
			return
		}
		switch uint32(st.Mode) & syscall.S_IFMT {
		case syscall.S_IFIFO, syscall.S_IFSOCK, syscall.S_IFCHR:
			fd = int(d)
		}
	}) != nil {
		return -1
	}
	return fd
}
