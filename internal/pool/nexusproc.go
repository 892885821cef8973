package pool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// shutdownWriteTimeout bounds the wait for room in the pipe to say shutdown.
const shutdownWriteTimeout = 100 * time.Millisecond

// startNexus starts one process of worker w's pool, written against
// nexus's runtime: frames on fds 3 and 4 (docs/internals.md).
func startNexus(ctx context.Context, w *worker, cfg childConfig) (poolProcess, error) {
	dir, err := RuntimeDir()
	if err != nil {
		return nil, fmt.Errorf("pool %s failed to start: %w", w.label, err)
	}
	cfg.env = withOutputDir(poolEnv(w.spec.Lang, w.number, dir), w.set.opts.OutputDir)
	p, err := startProcess(ctx, cfg, w.spec.ArgTypes)
	if err != nil {
		return nil, err // never a nil *process in the interface
	}
	return p, nil
}

// process is one running pool process that speaks nexus's protocol, and
// what nexus holds for it beside its child: its pipes and its calls in
// flight. This file owns the protocol's side of its life: the handshake,
// reading fd 4, and what its end means for the wire; its calls are in
// nexuscall.go.
type process struct {
	child
	argTypes bool     // send calls their arguments' declared types (Spec.ArgTypes)
	toPool   *os.File // our end of the pool's fd 3
	fromPool *os.File // our end of the pool's fd 4

	out            *outbox    // frames waiting for writeLoop
	writeMu        sync.Mutex // one frame at a time on toPool
	closeInputOnce sync.Once
	mode           concurrency     // how the runtime runs calls; set before startProcess returns
	mids           map[int]bool    // the functions the pool says it has; nil if it did not say
	dtypes         []ndarray.DType // the array dtypes the pool takes (protocol 2); set before startProcess returns

	// Guarded by child.mu.
	nextID    uint64
	inflight  map[uint64]*pendingCall
	abandoned map[uint64]abandonedCall // given up on, reply still owed

	readyCh  chan *inbound // the ready message, once
	protoErr error         // set before rd.over closes, so before readerDone does

	// Reading fd 4: by readLoop, or by a call waiting inline (nexusinline.go);
	// never both. br, blobs and readyRead belong to whichever reads.
	rd         fd4Reader
	br         *bufio.Reader
	blobs      [][]byte      // blobs waiting for the message they belong to
	readyRead  bool          // the ready message has come
	readerDone chan struct{} // closed when readLoop returns
}

// startProcess starts a pool process and waits for its ready message. On
// failure the process is stopped and the error says why, with its output's
// last lines.
func startProcess(ctx context.Context, cfg childConfig, argTypes bool) (*process, error) {
	failed := func(err error) error { return fmt.Errorf("pool %s failed to start: %w", cfg.label, err) }
	// Calls in (the pool's fd 3) and replies out (its fd 4).
	callsR, callsW, err := os.Pipe()
	if err != nil {
		return nil, failed(err)
	}
	repliesR, repliesW, err := os.Pipe()
	if err != nil {
		callsR.Close()
		callsW.Close()
		return nil, failed(err)
	}
	p := &process{
		argTypes:   argTypes,
		toPool:     callsW,
		fromPool:   repliesR,
		inflight:   make(map[uint64]*pendingCall),
		abandoned:  make(map[uint64]abandonedCall),
		out:        newOutbox(),
		readyCh:    make(chan *inbound, 1),
		readerDone: make(chan struct{}),
		rd:         newFD4Reader(repliesR),
		br:         bufio.NewReaderSize(repliesR, 64<<10),
	}
	if err := p.child.start(cfg, p, callsR, repliesW); err != nil {
		callsW.Close()
		repliesR.Close()
		return nil, err
	}
	go p.readLoop()
	go p.writeLoop()
	if err := p.handshake(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// handshake waits for the pool's ready message.
func (p *process) handshake(ctx context.Context) error {
	timer := time.NewTimer(p.startTimeout)
	defer timer.Stop()
	select {
	case ready := <-p.readyCh:
		if ready.Protocol != 1 && ready.Protocol != protocolVersion {
			p.stop()
			return fmt.Errorf("pool %s failed to start: it speaks pool protocol %d; this nexus speaks 1 and %d",
				p.label, ready.Protocol, protocolVersion)
		}
		if ready.Protocol >= 2 {
			for _, d := range ready.DTypes {
				if d.Size() > 0 {
					p.dtypes = append(p.dtypes, d)
				}
			}
		}
		p.checkMids(ready.Mids)
		switch {
		case ready.Concurrent == nil:
			p.mode = concurrencyUnknown
		case *ready.Concurrent:
			p.mode = concurrent
		default:
			p.mode = sequential
		}
		p.becameReady()
		p.logger.Debug("pool ready", "pool", p.label, "pid", p.pid(), "mids", ready.Mids)
		return nil
	case <-p.gone:
		if p.protoErr != nil {
			return p.startFailed(fmt.Sprintf("pool %s failed to start: it broke the protocol: %v", p.label, p.protoErr))
		}
		return p.exitedEarly()
	case <-timer.C:
		p.stop()
		return p.startFailed(fmt.Sprintf("pool %s never became ready within %s", p.label, p.startTimeout))
	case <-ctx.Done():
		return p.abandonStart(ctx)
	}
}

// checkMids records the mids the pool says it has (when it says) and warns
// of the manifest's functions it lacks: the manifest and the pool disagree.
func (p *process) checkMids(mids []int64) {
	if mids == nil {
		return
	}
	p.mids = make(map[int]bool, len(mids))
	for _, m := range mids {
		p.mids[int(m)] = true
	}
	var missing []int
	for mid := range p.functions {
		if !p.mids[mid] {
			missing = append(missing, mid)
		}
	}
	slices.Sort(missing)
	for _, mid := range missing {
		p.logger.Warn("pool lacks a function the manifest gives it: calls to it will fail",
			"pool", p.label, "command", p.functions[mid].Name, "mid", mid, "pool has", p.midList())
	}
}

// midList lists the pool's mids in order: "1, 2, 9".
func (p *process) midList() string {
	var mids []int
	for m := range p.mids {
		mids = append(mids, m)
	}
	slices.Sort(mids)
	var b strings.Builder
	for i, m := range mids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(m))
	}
	return b.String()
}

// readLoop reads the pool's frames until fd 4 ends or breaks the protocol,
// whenever fd 4 is its to read: a call waiting inline reads its own reply
// (nexusinline.go), and readLoop waits meanwhile.
func (p *process) readLoop() {
	defer close(p.readerDone)
	for {
		if err := p.readMessage(); err != nil {
			p.readEnded(err)
			return
		}
		if p.loopYields() {
			select {
			case <-p.rd.wake:
			case <-p.rd.over:
				return
			}
		}
	}
}

// readEnded records why fd 4 can be read no more (a protocol error; else
// its end, or our end closed by supervise) and stops every reader.
func (p *process) readEnded(err error) {
	p.rd.overOnce.Do(func() {
		if pe := (*ProtocolError)(nil); errors.As(err, &pe) {
			p.protoErr = err
		}
		close(p.rd.over)
	})
}

// readMessage reads one frame from fd 4 and acts on it: a blob waits for
// its message, a message goes where it belongs. Only the holder of fd 4
// (readLoop, or a call reading inline) calls it. It returns io.EOF at the
// end of fd 4 and a *ProtocolError for what breaks the protocol.
func (p *process) readMessage() error {
	payload, blob, err := readFrame(p.br)
	if err != nil {
		return err
	}
	if blob {
		p.blobs = append(p.blobs, payload)
		return nil
	}
	msg, err := decodeInbound(payload)
	if err != nil {
		return err
	}
	var arrays []ndarray.Array
	if msg.Arrays != nil || len(p.blobs) > 0 {
		if arrays, err = attachBlobs(msg, p.blobs); err != nil {
			return err
		}
		p.blobs = nil
	}
	switch {
	case msg.Type == typeReady && !p.readyRead:
		p.readyRead = true
		p.readyCh <- msg
	case msg.Type == typeLog:
		p.deliverLog(msg)
	case !p.readyRead:
		// Only log and ready count before the handshake.
	case msg.Type == typeResult:
		r := callReply{value: ndarray.Value{JSON: msg.Value, Arrays: arrays}, content: msg.Content}
		if msg.Content != nil {
			if err := checkContent(msg.Content); err != nil {
				r = callReply{err: fmt.Errorf("pool %s returned a bad result: %v", p.label, err)}
			}
		}
		p.deliverReply(*msg.ID, r)
	case msg.Type == typeError:
		p.logger.Debug("pool call failed", "pool", p.label, "id", *msg.ID, "message", msg.Message, "traceback", msg.Traceback)
		p.deliverReply(*msg.ID, callReply{err: &CallError{Lang: p.lang, Message: msg.Message, Traceback: msg.Traceback}})
	case msg.Type == typeProgress:
		if pc := p.pending(*msg.ID); pc != nil {
			pc.progress(*msg.Progress, msg.Total, msg.Message)
		}
	case msg.Type == typeAsk:
		p.startAsk(msg)
	}
	return nil
}

// attachBlobs pairs a message's array descriptors with the blobs sent
// before it. Only a result may carry arrays; the counts must agree.
func attachBlobs(msg *inbound, blobs [][]byte) ([]ndarray.Array, error) {
	if msg.Type != typeResult {
		return nil, protocolErrorf("%s message after %d blobs: only a result carries arrays", msg.Type, len(blobs))
	}
	var arrays []ndarray.Array
	if msg.Arrays != nil {
		var err error
		if arrays, err = ndarray.ParseDescriptors(msg.Arrays); err != nil {
			return nil, protocolErrorf("result: %v", err)
		}
	}
	if len(arrays) != len(blobs) {
		return nil, protocolErrorf("result describes %d arrays but %d blobs came before it", len(arrays), len(blobs))
	}
	for i := range arrays {
		arrays[i].Data = blobs[i]
		if err := arrays[i].Check(); err != nil {
			return nil, protocolErrorf("result: %v", err)
		}
	}
	return arrays, nil
}

func (p *process) deliverLog(msg *inbound) {
	level := normalLevel(msg.Level)
	if msg.ID != nil {
		if pc := p.pending(*msg.ID); pc != nil && pc.log(level, msg.Data) {
			return
		}
	}
	p.logger.Log(context.Background(), logLevels[level], "pool log", "pool", p.label, "data", string(msg.Data))
}

// The protocol's side of the process's end (protocol, child.go).

// severed is closed when fd 4 has ended or broken the protocol.
func (p *process) severed() <-chan struct{} { return p.readerDone }

func (p *process) brokeProtocol() error { return p.protoErr }

// askToExit says shutdown and closes fd 3: the pool exits on either.
func (p *process) askToExit() bool {
	p.closeInput()
	return true
}

// release has readLoop read what the pool wrote last, to the end of fd 4,
// and closes our ends of its pipes.
func (p *process) release() {
	p.readToLoop()
	p.waitOrClose(p.readerDone, p.fromPool)
	p.closeInput()
	p.fromPool.Close()
}

// endCalls fails the calls in flight; one that never reached the pool may
// be sent to a fresh process.
func (p *process) endCalls(err error) {
	p.mu.Lock()
	inflight := p.inflight
	p.inflight = nil
	p.mu.Unlock()
	for _, pc := range inflight {
		if pc.written.Load() {
			pc.reply <- callReply{err: err}
		} else {
			pc.reply <- callReply{err: &unstartedError{err}}
		}
	}
}

// closeInput says shutdown and closes fd 3; the pool exits on either.
func (p *process) closeInput() {
	p.closeInputOnce.Do(func() {
		p.out.close()
		// The deadline also frees a writer stuck on a pool that stopped reading.
		_ = p.toPool.SetWriteDeadline(time.Now().Add(shutdownWriteTimeout))
		p.writeMu.Lock()
		defer p.writeMu.Unlock()
		_ = writeFrame(p.toPool, shutdownFrame)
		p.toPool.Close()
	})
}
