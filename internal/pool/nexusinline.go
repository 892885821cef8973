package pool

import (
	"context"
	"encoding/binary"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A call waiting inline reads its own reply from fd 4, on its caller's
// goroutine, instead of waiting for readLoop to hand it over.
// With one call in flight, nexus's stdin reader then sends the call, waits
// for the pool and for stdin in one poll(2), and writes the reply, with no
// goroutine woken in between: what a minimal relay does. A goroutine
// woken per call cost more CPU than all of nexus's own work on a small
// call (docs/performance.md, "A small call's per-call work").
//
// fd 4 is read by one holder at a time: readLoop (from the start, and
// whenever a call waits the ordinary way), a call waiting inline, or no
// one. readLoop lets go of it when a call asked to wait inline and nothing
// is in flight; a call that read its own reply leaves it free, and
// readLoop takes it back after reclaimAfter without an inline call, so
// that output between calls (logs, the end of fd 4) is read.

// Inline asks a call to wait for its reply on the caller's goroutine
// (CallOptions.Inline). The caller is also the only reader of Fd (nexus's
// stdin); once Fd has input the call calls Yield, which must hand that
// reading to another goroutine and report whether it did, and then
// waits the ordinary way.
type Inline struct {
	Fd    int
	Yield func() bool
}

// reclaimAfter is how long fd 4 may go unread between inline calls; each
// process keeps the value it started with (fd4Reader.reclaimAfter). A test
// of a stream of calls sets it longer before it starts its pool, so that a
// loaded machine's pause between two calls does not count as calls
// stopping.
var reclaimAfter = 20 * time.Millisecond

// inlinePoll bounds one poll, so that a cancelled or timed-out call, or a
// pool that is gone, is noticed within it.
const inlinePoll = 50 * time.Millisecond

type readerState uint8

const (
	readerLoop   readerState = iota // readLoop reads fd 4
	readerFree                      // no one does: nothing is in flight
	readerInline                    // a call reads it on its caller's goroutine
)

// fd4Reader says who reads fd 4.
type fd4Reader struct {
	rc   syscall.RawConn // fd 4, for poll(2) while its descriptor stays open
	wake chan struct{}   // readLoop's turn again
	over chan struct{}   // closed once fd 4 can be read no more
	// overOnce closes over (process.readEnded).
	overOnce sync.Once

	mu           sync.Mutex
	state        readerState
	wantInline   bool   // a call asked to wait inline while readLoop read
	takes        uint64 // inline takes so far
	reclaim      *time.Timer
	reclaimAfter time.Duration
	armed        bool   // reclaim will fire
	seen         uint64 // takes when reclaim was armed
}

func newFD4Reader(f *os.File) fd4Reader {
	rc, _ := f.SyscallConn() // an *os.File pipe always has one
	return fd4Reader{rc: rc, wake: make(chan struct{}, 1), over: make(chan struct{}), reclaimAfter: reclaimAfter}
}

// loopYields reports whether readLoop lets go of fd 4 now: a call asked
// to read inline, nothing is in flight, and no message is half read. It
// then waits for its turn (wake) or the end (over).
func (p *process) loopYields() bool {
	p.rd.mu.Lock()
	defer p.rd.mu.Unlock()
	if !p.rd.wantInline || len(p.blobs) > 0 || !p.readyRead {
		return false
	}
	p.mu.Lock()
	busy := len(p.inflight) > 0
	p.mu.Unlock()
	if busy {
		return false
	}
	p.rd.wantInline = false
	p.rd.state = readerFree
	p.armReclaim()
	return true
}

// takeInline gives fd 4 to a call that will read its own reply, when no
// one reads it; otherwise it asks readLoop to let go of it once idle, for
// the next call, and reports false.
func (p *process) takeInline() bool {
	if p.rd.rc == nil {
		return false
	}
	p.rd.mu.Lock()
	defer p.rd.mu.Unlock()
	switch p.rd.state {
	case readerFree:
		p.rd.state = readerInline
		p.rd.takes++
		return true
	case readerLoop:
		p.rd.wantInline = true
	}
	return false
}

// releaseInline ends a call's inline reading: fd 4 goes back to readLoop
// when other calls wait for replies, and is left free otherwise.
func (p *process) releaseInline() {
	p.rd.mu.Lock()
	defer p.rd.mu.Unlock()
	p.mu.Lock()
	busy := len(p.inflight) > 0
	p.mu.Unlock()
	if busy || len(p.blobs) > 0 {
		p.toLoopLocked()
		return
	}
	p.rd.state = readerFree
	p.armReclaim()
}

// readToLoop gives fd 4 to readLoop (a call waits the ordinary way, or the
// process is ending); a call reading inline keeps it until it lets go.
func (p *process) readToLoop() {
	p.rd.mu.Lock()
	defer p.rd.mu.Unlock()
	if p.rd.state == readerFree {
		p.toLoopLocked()
	}
}

// inlineToLoop ends a call's inline reading and gives fd 4 to readLoop.
func (p *process) inlineToLoop() {
	p.rd.mu.Lock()
	defer p.rd.mu.Unlock()
	p.toLoopLocked()
}

// toLoopLocked wakes readLoop to read fd 4. p.rd.mu is held.
func (p *process) toLoopLocked() {
	if p.rd.state == readerLoop {
		return
	}
	p.rd.state = readerLoop
	select {
	case p.rd.wake <- struct{}{}:
	default:
	}
}

// armReclaim sets readLoop to take fd 4 back if no inline call takes it
// within p.rd.reclaimAfter. A timer armed stays armed: a stream of calls resets
// nothing per call. p.rd.mu is held.
func (p *process) armReclaim() {
	if p.rd.armed {
		return
	}
	p.rd.armed = true
	p.rd.seen = p.rd.takes
	if p.rd.reclaim == nil {
		p.rd.reclaim = time.AfterFunc(p.rd.reclaimAfter, p.reclaimRead)
	} else {
		p.rd.reclaim.Reset(p.rd.reclaimAfter)
	}
}

func (p *process) reclaimRead() {
	p.rd.mu.Lock()
	defer p.rd.mu.Unlock()
	p.rd.armed = false
	if p.rd.state != readerFree {
		return // read by someone; the next release arms it again
	}
	if p.rd.takes != p.rd.seen {
		p.armReclaim() // calls came and went: look again later
		return
	}
	p.toLoopLocked()
}

// awaitInline waits for call pc's reply reading fd 4 itself, while also
// watching in.Fd. It returns the reply and true, or false when the call
// must wait the ordinary way: fd 4 is readLoop's again (input on in.Fd, a
// reply too large for the read buffer, the call cancelled, the pool gone
// or fd 4 at its end), and expired reports whether the call's time ran out.
func (p *process) awaitInline(ctx context.Context, c *callRequest, pc *pendingCall, in *Inline) (r callReply, ok, expired bool) {
	fds := []unix.PollFd{{Fd: -1, Events: unix.POLLIN}, {Fd: int32(in.Fd), Events: unix.POLLIN}}
	timeout := int(inlinePoll / time.Millisecond)
	for {
		select {
		case r := <-pc.reply:
			p.releaseInline()
			return r, true, false
		default:
		}
		switch p.bufferedFrame() {
		case frameWhole:
			if err := p.readMessage(); err != nil {
				p.readEnded(err)
				p.inlineToLoop()
				return callReply{}, false, false
			}
			continue
		case frameTooLarge:
			p.inlineToLoop()
			return callReply{}, false, false
		}
		var pollErr error
		err := p.rd.rc.Read(func(fd uintptr) bool {
			fds[0].Fd = int32(fd)
			fds[0].Revents, fds[1].Revents = 0, 0
			_, pollErr = unix.Poll(fds, timeout)
			return true
		})
		if err == nil && pollErr != nil && pollErr != unix.EINTR {
			err = pollErr
		}
		switch {
		case err != nil:
			p.inlineToLoop() // fd 4 closed: readLoop meets it and ends
			return callReply{}, false, false
		case fds[1].Revents != 0:
			in.Yield() // input: stdin is someone else's to read from now on
			p.inlineToLoop()
			return callReply{}, false, false
		case fds[0].Revents != 0:
			// One read of what has come, without waiting for more.
			if _, err := p.br.Peek(p.br.Buffered() + 1); err != nil && p.bufferedFrame() != frameWhole {
				p.inlineToLoop() // the end of fd 4, or an error: readLoop's to meet
				return callReply{}, false, false
			}
			continue
		}
		// The poll timed out: is the call still waited for?
		select {
		case <-ctx.Done():
		case <-c.expired:
			p.inlineToLoop()
			return callReply{}, false, true
		case <-p.exited:
		default:
			continue
		}
		p.inlineToLoop()
		return callReply{}, false, false
	}
}

type frameState uint8

const (
	frameNone     frameState = iota // the buffer holds less than a whole frame
	frameWhole                      // a whole frame is buffered: reading it does not block
	frameTooLarge                   // the frame at hand does not fit in the buffer
)

// bufferedFrame says whether the next frame on fd 4 is whole in the read
// buffer.
func (p *process) bufferedFrame() frameState {
	n := p.br.Buffered()
	if n < frameHeader {
		return frameNone
	}
	head, _ := p.br.Peek(frameHeader)
	size := int(binary.BigEndian.Uint32(head) &^ blobBit)
	switch {
	case frameHeader+size > p.br.Size():
		return frameTooLarge
	case n >= frameHeader+size:
		return frameWhole
	}
	return frameNone
}
