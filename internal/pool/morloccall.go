package pool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

const (
	// morlocDialTimeout bounds the connection of a call to its pool; a
	// full listen backlog (16 in morloc's pools) is waited out that long.
	morlocDialTimeout = 5 * time.Second
	// morlocDeathWait is how long a call whose connection closed without a
	// reply waits to learn whether its whole process died (then the death,
	// with the pool's last output, is the better message).
	morlocDeathWait = 200 * time.Millisecond
)

// morlocCall is one call to a morloc pool: one connection, one call
// packet out, one result packet back.
type morlocCall struct {
	conn  net.Conn
	name  string         // "call to 'x'"
	needs []int          // the other pools its function calls (Function.Needs)
	reply chan callReply // buffered: exchange never blocks on it
	leave func()         // lets the next calls through the result gate; idempotent
}

// call runs one call on its own connection (morloc's pools take one
// request per connection). When ctx ends or the call's timeout passes
// first it returns at once. morloc's pools have no cancel message, so the
// function runs on: its connection stays open to see it end, a spare
// process starts, and if the call has not ended when the spare is up (or
// Options.CancelGrace has passed) it is stuck, and the spare replaces the
// process (docs/spec.md §8.3).
func (p *morlocProcess) call(ctx context.Context, c *callRequest) (ndarray.Value, error) {
	fn := p.functions[c.mid]
	packet, err := p.wire.callPacket(c.mid, fn.Args, c.args, c.opts.Arrays)
	if err != nil {
		return ndarray.Value{}, fmt.Errorf("pool %s: encoding the arguments of the %s: %w", p.label, c.name(), err)
	}
	if p.awaitEnd() { // killed, and nexus does not know yet
		return ndarray.Value{}, &unstartedError{p.deathErr()}
	}
	leave, err := p.admit(ctx, c, !p.wire.inlineOnly(fn.Return))
	if err != nil {
		return ndarray.Value{}, err
	}
	conn, err := p.dial(ctx)
	if err != nil {
		leave()
		return ndarray.Value{}, err
	}
	mc := &morlocCall{conn: conn, name: c.name(), needs: fn.Needs, reply: make(chan callReply, 1), leave: leave}
	p.mu.Lock()
	if err := p.unusableErr(); err != nil {
		p.mu.Unlock()
		conn.Close()
		leave()
		return ndarray.Value{}, &unstartedError{err}
	}
	p.inflight[mc] = true
	p.mu.Unlock()
	asArrays := c.opts.Ret != nil && c.opts.Ret.Rank > 0 // the caller writes arrays in the result
	var given []ndarray.Array                            // the caller's, dropped once sent (CallOptions.GiveArrays)
	if c.opts.GiveArrays {
		given = c.opts.Arrays
	}
	go p.exchange(mc, packet, fn.Return, asArrays, given)

	select {
	case r := <-mc.reply:
		return r.value, r.err
	case <-ctx.Done():
		if r, answered := p.giveUp(mc, c.name(), "cancelled"); answered {
			return r.value, r.err
		}
		return ndarray.Value{}, ctx.Err()
	case <-c.expired:
		if r, answered := p.giveUp(mc, c.name(), "timed out"); answered {
			return r.value, r.err // the reply came as the time ran out
		}
		return ndarray.Value{}, c.timedOut("")
	}
}

// admit waits until the call may be sent: no call given up on in the
// process is waiting out its grace (waitSettled), and the result gate lets
// it in (alone: its result may come in shared memory). leave lets the next
// calls in; the call calls it once its result is copied out, or it is given
// up on.
func (p *morlocProcess) admit(ctx context.Context, c *callRequest, alone bool) (leave func(), err error) {
	for {
		if err := p.waitSettled(ctx, c); err != nil {
			return nil, err
		}
		leave, err := p.gate.enter(ctx, c.expired, alone)
		switch {
		case err == errExpired:
			return nil, c.timedOut("")
		case err != nil:
			return nil, err
		}
		p.mu.Lock()
		settled := p.settled
		p.mu.Unlock()
		if settled == nil {
			return leave, nil
		}
		leave() // a call was given up on while this one waited: wait for it again
	}
}

// waitSettled holds a call back while a call given up on in this process
// waits out its cancel grace. morloc's pools run one call at a time per
// worker and cannot cancel one, so a call sent now would queue behind it;
// held back, it goes to this process if that call ends, or to the fresh one
// that replaces the process if not (as an unstarted call, it is safe to
// send again).
func (p *morlocProcess) waitSettled(ctx context.Context, c *callRequest) error {
	for {
		p.mu.Lock()
		if err := p.unusableErr(); err != nil {
			p.mu.Unlock()
			return &unstartedError{err}
		}
		settled := p.settled
		p.mu.Unlock()
		if settled == nil {
			return nil
		}
		select {
		case <-settled:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.expired:
			return c.timedOut("")
		}
	}
}

// dial connects to the process's own socket. A connection refused, or a
// socket gone, means the process is going away: the call never reached it.
func (p *morlocProcess) dial(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{Timeout: p.dialTimeout}
	deadline := time.Now().Add(p.dialTimeout)
	for {
		conn, err := d.DialContext(ctx, "unix", p.socket)
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, syscall.EAGAIN) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // its listen backlog is full
			continue
		}
		timer := time.NewTimer(morlocDeathWait)
		defer timer.Stop()
		select {
		case <-p.gone:
			return nil, &unstartedError{p.goneErr()}
		case <-timer.C:
		}
		return nil, &unstartedError{fmt.Errorf("pool %s: connecting to its socket: %w", p.label, err)}
	}
}

// exchange sends the call and reads its reply, on its own goroutine, so
// that the caller may return while the pool works. A result in shared
// memory is copied out at once: the pool frees it when its worker starts
// its next call.
func (p *morlocProcess) exchange(mc *morlocCall, packet *morlocPacket, ret *manifest.Type, asArrays bool, arrays []ndarray.Array) {
	err := packet.writeTo(mc.conn)
	// Sent: a large argument's buffers may go (CallOptions.GiveArrays).
	for i := range arrays {
		arrays[i].Data = nil
	}
	if packet.len() >= largeFrame {
		packet = nil
		runtime.GC()
	}
	var r callReply
	if err != nil {
		r.err = p.lost(err, mc)
	} else if reply, err := p.wire.readReply(mc.conn); err != nil {
		r.err = p.lost(err, mc)
	} else {
		p.answered.Store(true)
		if p.pending(mc) { // else given up on: nobody wants the value
			v, err := p.wire.result(reply, ret, asArrays, p.lang)
			if ce := (*CallError)(nil); err != nil && !errors.As(err, &ce) {
				err = fmt.Errorf("pool %s sent a result nexus cannot read: %w", p.label, err)
			}
			r = callReply{value: v, err: err}
		}
	}
	mc.conn.Close()
	p.finish(mc, r)
}

// lost says why a call's connection ended without a reply: the process
// died (its death, with its last output, says more), or only the worker
// that ran the call did (morloc's pools abort on a value they cannot
// read); then the process is replaced (see processHooks.onBroken).
func (p *morlocProcess) lost(err error, mc *morlocCall) error {
	deadline := time.Now().Add(morlocDeathWait)
	for !p.awaitEnd() {
		if !time.Now().Before(deadline) {
			p.mu.Lock()
			replace := p.err == nil && !p.retiring && !p.stopping
			p.mu.Unlock()
			if replace {
				why := "its worker running the " + mc.name + " died"
				go p.handOver(p.onBroken, why)
			}
			return errors.New(p.withTail(fmt.Sprintf("pool %s: the call ended without a reply (%v): the pool's worker running it died", p.label, err)))
		}
		select {
		case <-p.exited:
		case <-time.After(10 * time.Millisecond):
		}
	}
	return p.deathErr()
}

// deathErr is the error of calls to a process that died.
func (p *morlocProcess) deathErr() error {
	if err := p.goneErr(); err != nil {
		return err
	}
	return fmt.Errorf("pool %s died", p.label)
}

func (p *morlocProcess) pending(mc *morlocCall) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inflight[mc]
}

// finish hands a call its reply, unless it was given up on; a retired
// process whose last call this was is stopped.
func (p *morlocProcess) finish(mc *morlocCall, r callReply) {
	mc.leave() // its result, if any, is copied out
	p.mu.Lock()
	pending := p.inflight[mc]
	delete(p.inflight, mc)
	_, abandoned := p.abandoned[mc]
	delete(p.abandoned, mc)
	p.settle()
	drained := pending && p.retiring && len(p.inflight) == 0
	// The last call given up on ended in its grace: no replacement needed.
	unneeded := abandoned && len(p.abandoned) == 0 && !p.retiring && p.err == nil
	p.mu.Unlock()
	if pending {
		mc.reply <- r
	}
	if drained {
		go p.stop()
	}
	if unneeded && p.unprepare != nil {
		p.unprepare()
	}
}

// giveUp forgets a call its caller no longer waits for and watches
// whether it ends within the cancel grace. If the reply came at the same
// moment it returns it.
func (p *morlocProcess) giveUp(mc *morlocCall, name, how string) (callReply, bool) {
	p.mu.Lock()
	if !p.inflight[mc] {
		p.mu.Unlock()
		return <-mc.reply, true // answered, or failed by the process's end
	}
	delete(p.inflight, mc)
	mc.leave() // nobody reads its result: the calls behind it may go
	if p.err == nil {
		p.abandoned[mc] = abandonedCall{name: name, how: how, at: time.Now()}
		if p.settled == nil && !p.retiring {
			p.settled = make(chan struct{})
		}
	}
	drained := p.retiring && len(p.inflight) == 0
	watch := p.err == nil && !p.retiring
	p.mu.Unlock()
	if watch {
		if p.prepare != nil {
			p.prepare(p.spareReady)
		}
		time.AfterFunc(p.cancelGrace, func() { p.checkStuck(mc) })
	}
	if drained {
		go p.stop()
	}
	return callReply{}, false
}

// spareReady is called when the process that would replace this one is
// up: if a call given up on has still not ended, there is no reason to
// wait longer for it (its caller is gone, and calls wait behind it), so
// the spare takes over now.
func (p *morlocProcess) spareReady() {
	p.mu.Lock()
	var mc *morlocCall
	for c := range p.abandoned {
		mc = c
		break
	}
	p.mu.Unlock()
	if mc != nil {
		p.checkStuck(mc)
	}
}

// checkStuck replaces the process if a call given up on has still not
// ended: the pool cannot be told to stop it, and calls would queue behind it.
func (p *morlocProcess) checkStuck(mc *morlocCall) {
	p.mu.Lock()
	ac, stuck := p.abandoned[mc]
	if !stuck || p.err != nil || p.retiring || p.stuck {
		p.mu.Unlock()
		return
	}
	p.stuck = true // once: several calls given up on are one replacement
	p.mu.Unlock()
	why := fmt.Sprintf("%s had not ended %s after being %s (morloc's pools cannot cancel a call)",
		ac.name, shortDuration(time.Since(ac.at).Round(time.Millisecond)), ac.how)
	// The work that does not end may be in a pool the call reached: one
	// of its workers is busy with it, and calls queue behind it there too.
	// Those are replaced first, so that the calls this process held back,
	// released when it retires, find the pools they need replaced.
	if len(mc.needs) > 0 && p.stuckIn != nil {
		p.stuckIn(mc.needs, why)
	}
	p.handOver(p.onStuck, why) // the worker starts a fresh process, then retires this one
}
