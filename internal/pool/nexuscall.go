package pool

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// pendingCall is a call sent to the process and not yet answered.
type pendingCall struct {
	reply   chan callReply // buffered: the reader never blocks on it
	written atomic.Bool    // its frame has reached the pipe

	hookMu   sync.Mutex // hooks never run after the caller has returned
	hooks    Hooks
	finished bool

	// For asks (nexusask.go), made on the first one: a call that never asks
	// costs no context. ctx is the caller's; askCtx ends at finish.
	ctx       context.Context
	askCtx    context.Context
	askCancel context.CancelFunc
}

// concurrency is how a runtime runs calls, from its ready message.
type concurrency int

const (
	// concurrencyUnknown: the runtime did not say; nexus assumes calls may
	// run at once and may have begun, so it never runs one twice.
	concurrencyUnknown concurrency = iota
	// sequential: one call at a time, in the order sent ("concurrent": false).
	sequential
	// concurrent: each call runs by itself, e.g. on its own thread ("concurrent": true).
	concurrent
)

// call sends one call and waits for its reply. When ctx ends or the call's
// timeout passes first, it tells the pool to cancel the call and returns at
// once; the process is replaced if the call does not stop.
func (p *process) call(ctx context.Context, c *callRequest) (ndarray.Value, error) {
	h := c.opts.Hooks
	p.mu.Lock()
	if err := p.unusableErr(); err != nil {
		p.mu.Unlock()
		return ndarray.Value{}, &unstartedError{err}
	}
	p.nextID++
	id := p.nextID
	p.mu.Unlock()
	args, arrays, err := p.adaptArrays(c.args, c.opts.Arrays)
	if err == nil {
		err = checkArgs(args)
	}
	if err != nil {
		return ndarray.Value{}, fmt.Errorf("pool %s: encoding the call's arguments: %w", p.label, err)
	}
	ret := c.opts.Ret
	if ret != nil && ret.Rank > 0 && len(p.dtypes) == 0 {
		ret = &ndarray.Ret{Type: ret.Type, Args: ret.Args} // no arrays: the declared types alone
	}
	payload := appendCall(id, c.mid, validUTF8(args), h.Progress != nil, arrays, ret, p.argTypes)
	if len(payload)-frameHeader > MaxFrameSize {
		return ndarray.Value{}, fmt.Errorf("pool %s: the call's arguments take %d bytes, over the %d MiB frame limit", p.label, len(payload)-frameHeader, MaxFrameSize>>20)
	}
	for i := range arrays {
		// Refused here, the call fails; refused by writeBlob, the writer
		// stopped and the call waited for a reply that could never come.
		if n := len(arrays[i].Data); n > MaxFrameSize {
			return ndarray.Value{}, fmt.Errorf("pool %s: an array argument takes %d bytes, over the %d MiB frame limit", p.label, n, MaxFrameSize>>20)
		}
	}
	pc := &pendingCall{hooks: h, ctx: ctx, reply: make(chan callReply, 1)}
	p.mu.Lock()
	if err := p.unusableErr(); err != nil {
		p.mu.Unlock()
		return ndarray.Value{}, &unstartedError{err}
	}
	p.inflight[id] = pc
	p.mu.Unlock()
	f := outFrame{payload: payload, arrays: arrays, id: id, call: pc}
	if c.opts.GiveArrays {
		f.given = c.opts.Arrays
	}
	if len(arrays) > 0 || len(f.given) > 0 || !p.writeNow(f) {
		p.out.push(f)
	}

	expired := false
	in := c.opts.Inline
	if in != nil && p.takeInline() {
		r, ok, exp := p.awaitInline(ctx, c, pc, in)
		if ok {
			return p.replied(pc, r)
		}
		expired = exp
	} else {
		p.readToLoop() // someone must read the reply
	}
	if in != nil {
		in.Yield() // the wait below does not watch the caller's input
	}
	if expired {
		return p.expire(id, pc, c)
	}
	select {
	case r := <-pc.reply:
		return p.replied(pc, r)
	case <-ctx.Done():
		p.giveUp(id, pc, c.name(), "cancelled")
		return ndarray.Value{}, ctx.Err()
	case <-c.expired:
		return p.expire(id, pc, c)
	}
}

// replied ends a call with its reply.
func (p *process) replied(pc *pendingCall, r callReply) (ndarray.Value, error) {
	pc.finish()
	if h := pc.hooks; r.content != nil && r.err == nil && h.Content != nil {
		h.Content(r.content)
	}
	return r.value, r.err
}

// expire ends a call whose time ran out.
func (p *process) expire(id uint64, pc *pendingCall, c *callRequest) (ndarray.Value, error) {
	if r, answered := p.giveUp(id, pc, c.name(), "timed out"); answered {
		return r.value, r.err // the reply came as the time ran out
	}
	return ndarray.Value{}, c.timedOut("")
}

// adaptArrays fits a call's arrays to the dtypes the process takes: an
// i8 array becomes i4 when the pool takes only that and every element
// fits; an array the pool cannot take goes into its argument as JSON.
func (p *process) adaptArrays(args []json.RawMessage, arrays []ndarray.Array) ([]json.RawMessage, []ndarray.Array, error) {
	if args == nil {
		args = []json.RawMessage{} // the protocol wants an array, never null
	}
	if len(arrays) == 0 {
		return args, nil, nil
	}
	var kept []ndarray.Array
	copied := false
	for i := range arrays {
		a := arrays[i]
		if p.takes(a.DType) {
			kept = append(kept, a)
			continue
		}
		if a.DType == ndarray.I8 && p.takes(ndarray.I4) {
			if narrow, ok := ndarray.NarrowI8(&a); ok {
				kept = append(kept, narrow)
				continue
			}
		}
		text, err := ndarray.AppendPoolJSON(nil, &a)
		if err != nil {
			return nil, nil, err
		}
		idx, ok := a.Path[0].(int)
		if !ok || idx < 0 || idx >= len(args) {
			return nil, nil, fmt.Errorf("array path %v names no argument", a.Path)
		}
		if !copied {
			args = append([]json.RawMessage(nil), args...)
			copied = true
		}
		placed, err := ndarray.Place(args[idx], a.Path[1:], text)
		if err != nil {
			return nil, nil, err
		}
		args[idx] = placed
	}
	return args, kept, nil
}

// checkArgs makes sure every argument is one JSON value: a broken one
// would break the protocol and cost the pool its life.
func checkArgs(args []json.RawMessage) error {
	for i, a := range args {
		if _, _, err := jsontext.Whole(a); err != nil {
			return fmt.Errorf("argument %d is not valid JSON: %v", i+1, err)
		}
	}
	return nil
}

// takes reports whether the process accepts arrays of dtype d.
func (p *process) takes(d ndarray.DType) bool {
	for _, t := range p.dtypes {
		if t == d {
			return true
		}
	}
	return false
}

// giveUp forgets a pending call, tells the pool to cancel it and watches
// whether it stops. If the reply came at the same moment it returns it.
func (p *process) giveUp(id uint64, pc *pendingCall, name, how string) (callReply, bool) {
	defer pc.finish()
	p.mu.Lock()
	if _, pending := p.inflight[id]; !pending {
		p.mu.Unlock()
		return <-pc.reply, true // answered, or failed by the process's end
	}
	delete(p.inflight, id)
	if p.err == nil {
		p.abandoned[id] = abandonedCall{name: name, how: how}
	}
	drained := p.retiring && len(p.inflight) == 0
	p.mu.Unlock()
	p.out.push(outFrame{payload: cancelFrame(id)})
	time.AfterFunc(p.cancelGrace, func() { p.checkStuck(id) })
	if drained {
		go p.stop()
	}
	return callReply{}, false
}

// checkStuck replaces the process if the abandoned call id has still not
// answered its cancel. In a pool that runs one call at a time, a call that
// waits behind an earlier one has not begun and is not stuck (yet).
func (p *process) checkStuck(id uint64) {
	p.mu.Lock()
	ac, stuck := p.abandoned[id]
	if !stuck || p.err != nil || p.retiring {
		p.mu.Unlock()
		return
	}
	if p.mode != concurrent {
		for other := range p.inflight {
			if other < id {
				p.mu.Unlock()
				time.AfterFunc(p.cancelGrace, func() { p.checkStuck(id) })
				return
			}
		}
	}
	p.mu.Unlock()
	why := fmt.Sprintf("%s did not stop within %s of being %s", ac.name, shortDuration(p.cancelGrace), ac.how)
	p.onStuck(p, why)
}

// retireCalls: a concurrent runtime keeps running its other calls and is
// stopped once they are done; in a sequential one they wait behind the
// stuck call and never began, so they go back to be sent to a fresh
// process; for a runtime that did not say, they fail, since they may have
// begun. p.mu is held.
func (p *process) retireCalls(why string) (after func(), drained bool) {
	var orphans []*pendingCall
	if p.mode != concurrent {
		for id, pc := range p.inflight {
			orphans = append(orphans, pc)
			delete(p.inflight, id)
		}
	}
	drained = len(p.inflight) == 0
	if len(orphans) == 0 {
		return nil, drained
	}
	mode := p.mode
	return func() {
		replaced := fmt.Errorf("pool %s was replaced: %s", p.label, why)
		for _, pc := range orphans {
			if mode == sequential {
				pc.reply <- callReply{err: &unstartedError{replaced}}
			} else {
				pc.reply <- callReply{err: replaced}
			}
		}
	}, drained
}

// deliverReply hands a reply to its call; a reply to an abandoned call
// shows that it stopped, and is dropped.
func (p *process) deliverReply(id uint64, r callReply) {
	p.answered.Store(true)
	p.mu.Lock()
	pc := p.inflight[id]
	delete(p.inflight, id)
	delete(p.abandoned, id)
	drained := pc != nil && p.retiring && len(p.inflight) == 0
	p.mu.Unlock()
	if pc != nil { // else abandoned, or a duplicate: discarded
		pc.reply <- r
	}
	if drained {
		go p.stop()
	}
}

func (p *process) pending(id uint64) *pendingCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inflight[id]
}

func (c *pendingCall) progress(progress float64, total *float64, message string) {
	c.hookMu.Lock()
	defer c.hookMu.Unlock()
	if !c.finished && c.hooks.Progress != nil {
		c.hooks.Progress(progress, total, message)
	}
}

// log hands a record to the call's Log hook and reports whether it did.
func (c *pendingCall) log(level string, data json.RawMessage) bool {
	c.hookMu.Lock()
	defer c.hookMu.Unlock()
	if c.finished || c.hooks.Log == nil {
		return false
	}
	c.hooks.Log(level, data)
	return true
}

func (c *pendingCall) finish() {
	c.hookMu.Lock()
	c.finished = true
	cancelAsks := c.askCancel
	c.hookMu.Unlock()
	if cancelAsks != nil {
		cancelAsks() // the call is over: asks still waiting for the client give up
	}
}

// validUTF8 replaces invalid UTF-8 in arguments with U+FFFD: the protocol
// carries UTF-8 only, and a client may send anything. Outside strings JSON
// is ASCII, so the bytes replaced are always inside a string, which stays
// valid.
func validUTF8(args []json.RawMessage) []json.RawMessage {
	for i, a := range args {
		if !utf8.Valid(a) {
			args = append([]json.RawMessage(nil), args...)
			for j := i; j < len(args); j++ {
				args[j] = bytes.ToValidUTF8(args[j], []byte("\uFFFD"))
			}
			return args
		}
	}
	return args
}

// outFrame is one message waiting to be written to the pool, with the
// blobs of its arrays.
type outFrame struct {
	payload []byte          // frameHeader bytes of room, then the message
	arrays  []ndarray.Array // their data goes out as blobs before the message
	// given are the call's arrays as its caller handed them over
	// (CallOptions.GiveArrays), which arrays copies, narrows or turns into
	// JSON: once sent, their data may go too.
	given []ndarray.Array
	id    uint64       // a call's id; 0 for other messages
	call  *pendingCall // the call, for a call frame
	// rest, when set, is the unwritten end of a frame a caller began to
	// write (writeNow): bytes to send as they are, before anything else.
	rest []byte
}

// outbox queues the frames for one process and writes them, in order, on
// its own goroutine, so that no caller ever blocks on a full pipe: a pool
// that runs one call at a time reads its next call only when it is free.
type outbox struct {
	mu     sync.Mutex
	more   chan struct{} // signalled when frames are pushed, or the pipe is free again
	queue  []outFrame
	closed bool
	// Who is writing: writeLoop with frames it took, or a caller writing
	// its own frame at once (writeNow). Never both: frames keep their order.
	loopBusy, callerBusy bool
}

func newOutbox() *outbox { return &outbox{more: make(chan struct{}, 1)} }

func (o *outbox) push(f outFrame) {
	o.mu.Lock()
	if !o.closed {
		o.queue = append(o.queue, f)
	}
	o.mu.Unlock()
	select {
	case o.more <- struct{}{}:
	default:
	}
}

// close makes the writer stop once it is done with the frame in hand.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.queue = nil
	o.mu.Unlock()
	select {
	case o.more <- struct{}{}:
	default:
	}
}

// take returns the queued frames, waiting for some (and for a caller
// writing its own frame to finish); nil once closed. Calling it again
// means the frames it returned last are written.
func (o *outbox) take() []outFrame {
	for {
		o.mu.Lock()
		o.loopBusy = false
		if o.closed {
			o.mu.Unlock()
			return nil
		}
		if q := o.queue; len(q) > 0 && !o.callerBusy {
			o.queue = nil
			o.loopBusy = true
			o.mu.Unlock()
			return q
		}
		o.mu.Unlock()
		<-o.more
	}
}

func (o *outbox) signal() {
	select {
	case o.more <- struct{}{}:
	default:
	}
}

// writeNow writes a call's frame from the caller's goroutine when nothing
// else is being written or waits to be, sparing writeLoop a wake-up per
// call. It never blocks on the pipe: what the pipe does not take at once
// goes first in the queue, for writeLoop. It reports false when the frame
// must be queued instead.
func (p *process) writeNow(f outFrame) bool {
	o := p.out
	o.mu.Lock()
	if o.closed || o.loopBusy || o.callerBusy || len(o.queue) > 0 {
		o.mu.Unlock()
		return false
	}
	o.callerBusy = true
	o.mu.Unlock()
	f.call.written.Store(true) // before the write: never sent twice
	buf := f.payload
	n := len(buf) - frameHeader
	if n < minFrameSize || n > MaxFrameSize {
		buf = nil // writeHeaded's error, below, is writeLoop's to meet
	} else {
		binary.BigEndian.PutUint32(buf, uint32(n))
	}
	written := 0
	if buf != nil {
		p.writeMu.Lock()
		written = p.writeSome(buf)
		p.writeMu.Unlock()
	}
	o.mu.Lock()
	o.callerBusy = false
	if buf == nil {
		o.queue = append([]outFrame{f}, o.queue...)
	} else if written < len(buf) {
		o.queue = append([]outFrame{{rest: buf[written:]}}, o.queue...)
	}
	more := len(o.queue) > 0
	o.mu.Unlock()
	if more {
		o.signal()
	}
	return true
}

// writeSome writes what the pipe takes of buf without waiting for room
// and returns how much it took (0 when it is full or gone; a pipe that is
// gone is supervise's to notice). p.writeMu is held.
func (p *process) writeSome(buf []byte) int {
	rc, err := p.toPool.SyscallConn()
	if err != nil {
		return 0
	}
	written := 0
	_ = rc.Write(func(fd uintptr) bool {
		for written < len(buf) {
			n, err := syscall.Write(int(fd), buf[written:])
			if n > 0 {
				written += n
			}
			if err == syscall.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				break
			}
		}
		return true // never wait for room: writeLoop does that
	})
	return written
}

// writeLoop writes queued frames to the pool until the outbox closes or a
// write fails (the pool is going away; supervise says why). A call given
// up on before its turn is never sent.
func (p *process) writeLoop() {
	for {
		frames := p.out.take()
		if frames == nil {
			return
		}
		for _, f := range frames {
			if f.rest != nil {
				p.writeMu.Lock()
				_, err := p.toPool.Write(f.rest)
				p.writeMu.Unlock()
				if err != nil {
					return
				}
				continue
			}
			if f.call != nil {
				p.mu.Lock()
				live := p.inflight[f.id] == f.call
				if !live {
					delete(p.abandoned, f.id) // it never reached the pool: nothing to stop
				}
				p.mu.Unlock()
				if !live {
					continue
				}
			}
			if f.call != nil {
				// Before the write: a call that may have reached the pool
				// is never sent again.
				f.call.written.Store(true)
			}
			if err := p.writeMessage(f); err != nil {
				return
			}
		}
	}
}

// writeMessage writes one message and the blobs before it, as one unit.
func (p *process) writeMessage(f outFrame) error {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	for i := range f.arrays {
		if err := writeBlob(p.toPool, f.arrays[i].Data); err != nil {
			return err
		}
	}
	p.dropGiven(f)
	if err := writeHeaded(p.toPool, f.payload); err != nil {
		return err
	}
	// Sent: the pool has the arrays now, and a call that reached its pool
	// is never sent again, so their bytes may go (and the caller's, when
	// given: CallOptions.GiveArrays).
	sent := len(f.payload)
	for i := range f.arrays {
		sent += len(f.arrays[i].Data)
		f.arrays[i].Data = nil
	}
	if sent >= largeFrame {
		// Collect the arguments' buffers now, before the result's arrive:
		// left to the collector's pace, both would be in memory at once.
		runtime.GC()
	}
	return nil
}

// dropGiven lets the arrays a caller gave with call f go once their blobs
// are sent (CallOptions.GiveArrays), unless the call could be sent again.
// It runs under p.mu and before the message that lets the pool answer, so
// the reply, delivered under p.mu, comes after it: the caller never sees
// its arrays change once its call has returned.
func (p *process) dropGiven(f outFrame) {
	if len(f.given) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mayResend(f.id) {
		return
	}
	for i := range f.given {
		f.given[i].Data = nil
	}
}

// mayResend reports whether the sent call id could still be sent again, to
// a fresh process: in a sequential pool, a call ahead of it that gets
// stuck sends the calls waiting behind it there (retire). p.mu is held.
func (p *process) mayResend(id uint64) bool {
	if p.mode != sequential {
		return false // concurrent: they run on; unknown: they fail
	}
	for other := range p.inflight {
		if other < id {
			return true
		}
	}
	for other := range p.abandoned {
		if other < id {
			return true
		}
	}
	return false
}
