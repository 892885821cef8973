package pool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

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

// call runs c, a call of a function of the morloc pool spec, in an
// instance of its own (see morlocProgram): its arguments are encoded once,
// then it takes an instance, starts there the pools it needs, and sends
// its packet. A call that the process never began is tried again in
// another instance.
func (m *morlocProgram) call(ctx context.Context, spec *Spec, c *callRequest) (ndarray.Value, error) {
	if m.err != nil {
		return ndarray.Value{}, fmt.Errorf("pool %s failed to start: %w", spec.Lang, m.err)
	}
	fn := spec.Functions[c.mid]
	packet, err := m.wire.callPacket(c.mid, fn.Args, c.args, c.opts.Arrays)
	if err != nil {
		return ndarray.Value{}, fmt.Errorf("pool %s: encoding the arguments of the %s: %w", spec.Lang, c.name(), err)
	}
	c.packet = packet
	defer c.dropGiven()
	pools, ok := m.runsIn[[2]int{spec.Index, c.mid}]
	if !ok {
		pools = m.pools(spec.Index, fn)
	}
	if err := m.holdsBack(pools); err != nil {
		return ndarray.Value{}, err // failing again and again: at once, as a nexus pool
	}
	for tries := 1; ; tries++ {
		inst, err := m.acquire(ctx, c)
		if err != nil {
			return ndarray.Value{}, err
		}
		value, err := inst.run(ctx, c, pools)
		if err != nil && unstarted(err) && tries < maxTries && m.set.ctx.Err() == nil {
			c.yieldInline()
			continue
		}
		return value, err
	}
}

// run runs call c, of a function of pools[0] that calls the others, in
// the instance, which the call has taken (acquire), and lets the instance
// go: released once the call is done, retired if it was given up on or
// broke.
func (inst *morlocInstance) run(ctx context.Context, c *callRequest, pools []int) (ndarray.Value, error) {
	m := inst.prog
	var buf [4]*morlocProcess
	procs := buf[:0]
	for range pools {
		procs = append(procs, nil)
	}
	if !inst.ready(pools, procs) {
		if err := inst.await(ctx, c, pools, procs); err != nil {
			m.release(inst) // nothing of the call ran in it; a failed start retired it
			return ndarray.Value{}, err
		}
	}
	value, err := procs[0].call(ctx, c)
	switch {
	case err == nil:
		// A pool only its siblings call never answers nexus: a call that
		// needed it working tells its health (Options.HealthyAfter).
		for _, p := range procs[1:] {
			p.markAnswered()
		}
		m.release(inst)
	case functionFailed(err) && allocatorWedged(err):
		m.retire(inst, "its shared memory's allocator is wedged: "+firstLine(err.Error()), true, 0)
		if len(pools) == 1 && readingArguments(err) && c.resendable() {
			// Its only pool failed reading the call's arguments: the
			// function never ran, and a fresh instance's memory is sound.
			return ndarray.Value{}, &unstartedError{err}
		}
	case functionFailed(err):
		m.release(inst) // the function failed, not the pool
	default:
		// Given up on (morloc's pools cannot cancel a call: it runs on,
		// and may hold any of the instance's pools), or broken: the
		// instance goes, and the next call takes another.
		why := err.Error()
		var te *TimeoutError
		switch {
		case errors.As(err, &te):
			why = c.name() + " timed out (morloc's pools cannot cancel a call)"
		case ctx.Err() != nil:
			why = c.name() + " was cancelled (morloc's pools cannot cancel a call)"
		}
		if m.retire(inst, why, true, 0) {
			m.set.event(c.lang, EventRestarted)
		}
	}
	return value, err
}

// allocatorWedged reports whether a pool's failure is morloc 0.69's
// allocator finding the block at its cursor in use. Its shmalloc can take
// a free block of exactly the size asked for without moving the cursor
// off it (shm.c split_block), and a later allocation then finds the
// cursor on a block in use and fails, in any pool of the instance, until
// the pool owning that block frees it: a run of back-to-back calls whose
// results are the same size, over 64 KiB, gets there in a few calls.
// morloc's one-shot CLI never does: its memory lives for one call.
func allocatorWedged(err error) bool {
	return strings.Contains(err.Error(), "Expected cursor to point to new block with reference count of 0")
}

// readingArguments reports whether a pool's failure came while it read a
// data packet: a call's arguments, for a function that calls no other
// pool.
func readingArguments(err error) bool {
	return strings.Contains(err.Error(), "get_morloc_data_packet_value")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// await starts the processes of pools the instance lacks, all at once,
// and waits for them; procs receives them.
func (inst *morlocInstance) await(ctx context.Context, c *callRequest, pools []int, procs []*morlocProcess) error {
	c.yieldInline() // it waits for a start: not watching the caller's input
	m := inst.prog
	slots := make([]*morlocSlot, len(pools))
	for k, i := range pools { // all start at once
		sl, err := inst.slot(i)
		if err != nil {
			return err
		}
		slots[k] = sl
	}
	defer m.set.openGate() // the pools a client waited for are up (or failed): start the others
	for k, i := range pools {
		p, err := slots[k].wait(ctx, c.expired)
		if err != nil {
			label := inst.label(m.specs[i])
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case err == errExpired:
				return c.timedOut(label)
			case k > 0:
				return fmt.Errorf("%s needs pool %s: %w", c.name(), label, err)
			}
			return err
		}
		procs[k] = p
	}
	return nil
}

// call runs c on its own connection (morloc's pools take one request per
// connection) and reads its result, copied out of shared memory at once.
func (p *morlocProcess) call(ctx context.Context, c *callRequest) (ndarray.Value, error) {
	fn := p.functions[c.mid]
	fd, err := p.dial(ctx)
	if err != nil {
		return ndarray.Value{}, err
	}
	reply, err := p.exchange(ctx, c, fd)
	unix.Close(fd)
	if err != nil {
		return ndarray.Value{}, err
	}
	p.answered.Store(true)
	asArrays := c.opts.Ret != nil && c.opts.Ret.Rank > 0 // the caller writes arrays in the result
	v, err := p.wire.result(reply, fn.Return, asArrays, p.lang)
	if err != nil && !functionFailed(err) {
		err = fmt.Errorf("pool %s sent a result nexus cannot read: %w", p.label, err)
	}
	return v, err
}

// functionFailed reports whether err is a *CallError: the function failed,
// not its pool.
func functionFailed(err error) bool {
	var ce *CallError
	return errors.As(err, &ce)
}

// dial connects to the process's socket. A connection refused, or a
// socket gone, means the process is going away: the call never reached it.
func (p *morlocProcess) dial(ctx context.Context) (int, error) {
	deadline := time.Now().Add(p.dialTimeout)
	for {
		fd, err := dialMorloc(&p.addr)
		if err == nil {
			return fd, nil
		}
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		if err == unix.EAGAIN && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // its listen backlog is full
			continue
		}
		timer := time.NewTimer(morlocDeathWait)
		defer timer.Stop()
		select {
		case <-p.gone:
			return -1, &unstartedError{p.goneErr()}
		case <-timer.C:
		}
		return -1, &unstartedError{fmt.Errorf("pool %s: connecting to its socket: %w", p.label, err)}
	}
}

// exchange sends c's packet on fd and reads the reply. When ctx ends or
// c's time runs out it returns at once: morloc's pools have no cancel
// message, so the function runs on, and its instance is retired.
func (p *morlocProcess) exchange(ctx context.Context, c *callRequest, fd int) (*morlocReply, error) {
	conn := &p.conn // one call at a time in its instance
	*conn = morlocConn{fd: fd, ctx: ctx, c: c, wake: p.wake, proc: p}
	defer func() { *conn = morlocConn{} }()
	stop := context.AfterFunc(ctx, p.wake.signalFn)
	defer stop()
	err := c.packet.writeTo(conn)
	if c.packet.len() >= largeFrame {
		// Sent: a large argument's buffers may go, and the call cannot be
		// sent again. A smaller one's stay until the call is done, in
		// case it must be (resendable).
		c.dropGiven()
		c.packet = nil
		runtime.GC()
	}
	var reply *morlocReply
	if err == nil {
		// Waits for the reply before reading: a read now would find nothing.
		if err = conn.wait(unix.POLLIN); err == nil {
			p.br.Reset(conn)
			reply, err = p.wire.readReply(&p.br)
			p.br.Reset(nil)
		}
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, c.timedOut("")
		case err == errProcessGone:
			return nil, p.deathErr()
		}
		return nil, p.lost(err)
	}
	return reply, nil
}

// lost says why a call's connection ended without a reply: the process
// died (its death, with its last output, says more), or only the worker
// that ran the call did (morloc's pools abort on a value they cannot
// read).
func (p *morlocProcess) lost(err error) error {
	deadline := time.Now().Add(morlocDeathWait)
	for !p.awaitEnd() {
		if !time.Now().Before(deadline) {
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
