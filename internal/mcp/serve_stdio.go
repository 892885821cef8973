package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// ServeStdio runs one session over newline-delimited JSON-RPC (docs/spec.md
// §4.1): requests from r, replies and notifications to w. It returns nil at
// the end of input, once in-flight requests have been answered (or
// DrainTimeout has passed), and the read error otherwise.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &lineWriter{w: w}
	var writeFailed atomic.Bool
	send := func(v any) {
		var err error
		if r, ok := v.(*Response); ok && streamed(r) {
			// A large value's reply goes out in pieces (stream.go).
			head, text, tail, merr := splitStreamed(r)
			if merr != nil {
				s.log.Error("cannot encode reply", "err", merr)
				return
			}
			err = out.writeWith(func(w io.Writer) error { return writeStreamed(w, head, text, tail) })
		} else {
			var b []byte
			if b, err = marshalLine(v); err != nil {
				s.log.Error("cannot encode reply", "err", err)
				return
			}
			err = out.writeLine(b)
		}
		// A broken stdout stays broken: say so once.
		if err != nil && writeFailed.CompareAndSwap(false, true) {
			s.log.Warn("cannot write to client", "err", err)
		}
	}
	ss := s.NewSession(func(n *Notification) { send(n) })
	defer ss.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg := newRunner()
	defer wg.Close()
	l := &stdioLoop{
		s: s, ss: ss, ctx: ctx, send: send, wg: wg,
		lr:    NewLineReader(r, s.opts.MaxLine),
		sem:   make(chan struct{}, s.opts.MaxInFlight),
		fd:    pollableFd(r),
		ended: make(chan error, 1),
	}
	// replied sends a request's reply and frees its place: made once, not
	// a closure per request.
	l.replied = func(resp *Response) {
		defer func() { <-l.sem }()
		if resp != nil {
			send(resp)
		}
	}
	l.follow = func() { go l.run() }
	l.run()
	readErr := <-l.ended // from this goroutine, or the follower that read stdin last
	// The client closed its end: answer what is still running, within
	// reason; a subscriptions/listen stream would run for ever.
	s.EndSubscriptions()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.opts.DrainTimeout):
		s.log.Warn("input closed; abandoning calls still running", "after", s.opts.DrainTimeout)
		cancel()
		<-done
	}
	return readErr
}

// stdioLoop reads one session's requests from stdin. Its run is on one
// goroutine at a time: ServeStdio's, then, each time a request running
// on the reader hands stdin over (inline.go), a follower's.
type stdioLoop struct {
	s       *Server
	ss      *Session
	ctx     context.Context
	lr      *LineReader
	send    func(any)
	replied func(*Response)
	wg      *runner
	sem     chan struct{} // one per request in flight
	fd      int           // stdin's descriptor when poll(2) can watch it, else -1
	follow  func()        // starts a follower on run
	ended   chan error    // the end of stdin: nil at its end, else the read error
}

// run reads and dispatches requests until the end of stdin, or until a
// request it ran handed stdin to a follower.
func (l *stdioLoop) run() {
	s, ss, ctx, send := l.s, l.ss, l.ctx, l.send
	for {
		line, err := l.lr.Next()
		if errors.Is(err, ErrLineTooLong) {
			// docs/spec.md §4.1, §4.4: an oversized line gets -32600 and the
			// server keeps serving.
			send(&Response{Error: errorf(CodeInvalidRequest, "invalid request: message longer than the %d-byte limit", s.opts.MaxLine)})
			continue
		}
		if err != nil {
			var readErr error
			if !errors.Is(err, io.EOF) {
				readErr = fmt.Errorf("read stdin: %w", err)
			}
			l.ended <- readErr
			return
		}
		if len(trimSpace(line)) == 0 {
			continue // docs/spec.md §4.1: blank lines are skipped
		}
		collectIfLarge(len(line)) // the pieces it was read in are garbage
		items, batch := decodeLine(line, true)
		if batch {
			// JSON-RPC 2.0 §6: one array of replies, once every request in it is done.
			// Its lifecycle elements are handled now, in order with the lines
			// around it; its calls run on.
			l.sem <- struct{}{}
			wait := ss.startBatch(ctx, items, nil)
			l.wg.Go(func() {
				defer func() { <-l.sem }()
				if replies := wait(); len(replies) > 0 {
					send(replies)
				}
			})
			continue
		}
		it := items[0]
		if it.Reply != nil {
			send(it.Reply)
			continue
		}
		if it.Answer != nil {
			ss.Deliver(it.Answer) // the client answers a function's question
			continue
		}
		if it.Request == nil {
			continue
		}
		if !isSlow(it.Request) {
			if resp := ss.Handle(ctx, it.Request, nil); resp != nil {
				send(resp)
			}
			continue
		}
		l.sem <- struct{}{}
		if l.mayRunInline(it.Request) {
			if l.runInline(it.Request) {
				return // a follower reads stdin now
			}
			continue
		}
		l.wg.GoReply(ss.start(ctx, it.Request, nil), l.replied)
	}
}

// mayRunInline reports whether request r may run on the stdin reader: a
// tools/call alone in flight (its place taken), with no more input read
// ahead, on a stdin poll(2) can watch.
func (l *stdioLoop) mayRunInline(r *Request) bool {
	return l.fd >= 0 && r.Method == "tools/call" && len(l.sem) == 1 && l.lr.Buffered() == 0
}

// runInline runs r on this goroutine and sends its reply; it reports
// whether stdin was handed to a follower meanwhile.
func (l *stdioLoop) runInline(r *Request) (yielded bool) {
	slot := &inlineSlot{fd: l.fd, follow: l.follow, active: true}
	l.wg.wg.Add(1) // the end of stdin waits for it as for any request
	defer l.wg.wg.Done()
	resp := l.ss.start(withInline(l.ctx, slot), r, nil)()
	yielded = slot.done()
	l.replied(resp)
	return yielded
}

// HandleBatch answers the elements of one batch (JSON-RPC 2.0 §6) and
// returns the replies in the order of the requests. Elements are taken in
// order as if they had come one by one: lifecycle requests and
// notifications are handled before the next element is looked at, while
// tools/call runs concurrently with what follows; so a batch may carry
// initialize, notifications/initialized and calls, or a call and its
// notifications/cancelled. Notifications and cancelled requests have no
// reply, so the slice may be empty: then nothing at all must be sent back.
func (ss *Session) HandleBatch(ctx context.Context, items []Item, notify func(*Notification)) []*Response {
	return ss.startBatch(ctx, items, notify)()
}

// startBatch handles a batch's lifecycle elements now and returns a wait
// for the replies, once its calls are done too.
func (ss *Session) startBatch(ctx context.Context, items []Item, notify func(*Notification)) func() []*Response {
	replies := make([]*Response, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		switch {
		case it.Reply != nil:
			replies[i] = it.Reply
		case it.Answer != nil:
			ss.Deliver(it.Answer)
		case it.Request != nil && isSlow(it.Request):
			run := ss.start(ctx, it.Request, notify)
			wg.Go(func() { replies[i] = run() })
		case it.Request != nil:
			replies[i] = ss.Handle(ctx, it.Request, notify)
		}
	}
	return func() []*Response {
		wg.Wait()
		out := replies[:0]
		for _, r := range replies {
			if r != nil {
				out = append(out, r)
			}
		}
		return out
	}
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\r' || b[j-1] == '\n') {
		j--
	}
	return b[i:j]
}

// Once runs a single method in a fresh session and returns the reply, for
// `nexus mcp T --once` (docs/spec.md §3), a debug helper as LuCLI's MCP
// modules have. The session is initialized first, except for initialize
// and ping; a 2026-07-28 method (server/discover) gets default per-request
// _meta when params carry none.
func (s *Server) Once(ctx context.Context, method string, params json.RawMessage) *Response {
	ss := s.NewSession(nil)
	defer ss.Close()
	req := &Request{ID: json.RawMessage("1"), Method: method, Params: params}
	if method == "server/discover" && requestMeta(req) == nil {
		req = &Request{ID: req.ID, Method: method, Params: json.RawMessage(`{"_meta":{"` + MetaProtocolVersion + `":"` + StatelessVersion + `","` +
			MetaClientCapabilities + `":{},"` + MetaClientInfo + `":{"name":"nexus-once","version":"0"}}}`)}
	}
	if method != "initialize" && method != "ping" && !IsStateless(req) {
		ss.Handle(ctx, &Request{ID: json.RawMessage("0"), Method: "initialize",
			Params: json.RawMessage(`{"protocolVersion":"` + LatestVersion + `","capabilities":{},"clientInfo":{"name":"nexus-once","version":"0"}}`)}, nil)
	}
	return ss.Handle(ctx, req, nil)
}
