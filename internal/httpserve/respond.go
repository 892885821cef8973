package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/nexus-mcp/nexus/internal/mcp"
)

// accept is what a client's Accept header allows. Handling is lenient: a
// client naming only one of the two types gets that one, and one naming
// neither (no header, */*) gets JSON unless the call streams.
type accept struct{ json, sse bool }

func parseAccept(h string) accept {
	if strings.TrimSpace(h) == "" {
		return accept{json: true, sse: true}
	}
	var a accept
	for part := range strings.SplitSeq(h, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["q"] == "0" {
			continue
		}
		switch mt {
		case "application/json":
			a.json = true
		case "text/event-stream":
			a.sse = true
		case "*/*", "application/*":
			a.json = true
			if mt == "*/*" {
				a.sse = true
			}
		case "text/*":
			a.sse = true
		}
	}
	return a
}

// notesBuffer bounds the notifications queued for one request's stream; a
// pool's reader must never block on a slow client, so beyond it they drop.
const notesBuffer = 256

// handleFunc answers one request; notify receives the notifications the
// request produces while it runs.
type handleFunc func(ctx context.Context, notify func(*mcp.Notification)) *mcp.Response

// respond runs handle and answers the POST: as application/json, or as a
// text/event-stream when the request produces notifications before its
// result (and the client takes SSE), or always as SSE for a client that
// takes only SSE. finish, when set, runs on this goroutine before the reply
// is written and returns the HTTP status of a JSON reply (it may set
// headers). When the client goes away the request's context ends, which
// cancels the call in its pool: closing the stream is cancellation.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, acc accept, handle handleFunc, finish func(*mcp.Response) int) {
	ctx := r.Context()
	notes := make(chan *mcp.Notification, notesBuffer)
	var over atomic.Bool
	notify := func(n *mcp.Notification) {
		if over.Load() {
			return
		}
		select {
		case notes <- n:
		default:
			s.log.Warn("dropping a notification: the client reads too slowly", "method", n.Method)
		}
	}
	result := make(chan *mcp.Response, 1)
	go func() { result <- handle(ctx, notify) }()

	st := &stream{w: w, rc: http.NewResponseController(w), log: s.log}
	for {
		select {
		case n := <-notes:
			if acc.sse {
				st.event(n)
			}
		case resp := <-result:
			over.Store(true)
			for drained := false; !drained; {
				select {
				case n := <-notes:
					if acc.sse {
						st.event(n)
					}
				default:
					drained = true
				}
			}
			status := http.StatusOK
			if finish != nil {
				status = finish(resp)
			}
			switch {
			case st.open:
				if resp != nil {
					st.event(resp)
				}
			case resp == nil:
				// The client cancelled the request: MCP sends no reply.
				w.WriteHeader(http.StatusAccepted)
			case !acc.json:
				st.event(resp)
			default:
				writeJSON(w, status, resp)
			}
			return
		}
	}
}

// stream writes SSE events, opening the stream on the first one.
type stream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	log  *slog.Logger
	open bool
	dead bool // a write failed: the client is gone
}

func (st *stream) event(msg any) {
	if st.dead {
		return
	}
	data, err := json.Marshal(msg)
	if err != nil {
		st.log.Error("cannot encode a message for the client", "err", err)
		return
	}
	// Compact JSON holds no newline, so one data line carries the message.
	st.write(fmt.Appendf(nil, "event: message\ndata: %s\n\n", data))
}

// comment writes an SSE comment: a keep-alive that clients ignore.
func (st *stream) comment() { st.write([]byte(":\n\n")) }

// start sends the stream's headers.
func (st *stream) start() {
	if st.open {
		return
	}
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell nginx and friends not to hold events back
	st.w.WriteHeader(http.StatusOK)
	st.open = true
	if err := st.rc.Flush(); err != nil {
		st.dead = true
	}
}

func (st *stream) write(b []byte) {
	st.start()
	if st.dead {
		return
	}
	if _, err := st.w.Write(b); err != nil {
		st.dead = true
		return
	}
	if err := st.rc.Flush(); err != nil {
		st.dead = true
	}
}

// postBatch answers a JSON-RPC batch (2025-03-26 allows them over HTTP;
// later clients send none, and nexus accepts them in every era as on
// stdio): one JSON array of replies, or 202 when nothing needs one. With
// a session id the batch runs in that session, else each request is
// served statelessly.
func (s *Server) postBatch(w http.ResponseWriter, r *http.Request, items []mcp.Item) {
	var replies []*mcp.Response
	if r.Header.Get(hdrSessionID) != "" {
		sess, ok := s.session(w, r, nil, r.Header.Get(hdrProtocolVersion))
		if !ok {
			return
		}
		defer s.sessions.release(sess)
		for _, it := range items {
			if it.Request != nil && mcp.IsInitialize(it.Request) {
				writeRPCError(w, http.StatusBadRequest, nil, mcp.CodeInvalidRequest, "invalid request: initialize cannot be part of a batch")
				return
			}
		}
		replies = sess.mcp.HandleBatch(r.Context(), items, nil)
	} else {
		for _, it := range items {
			switch {
			case it.Reply != nil:
				replies = append(replies, it.Reply)
			case it.Request != nil && !it.Request.IsNotification():
				if mcp.IsInitialize(it.Request) && !mcp.IsStateless(it.Request) {
					replies = append(replies, &mcp.Response{ID: it.Request.ID, Error: &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "invalid request: initialize cannot be part of a batch"}})
					continue
				}
				if resp := s.mcp.HandleStateless(r.Context(), it.Request, nil); resp != nil {
					replies = append(replies, resp)
				}
			}
		}
	}
	if len(replies) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, replies)
}

// writeJSON writes v as a compact JSON body. An MCP response writes itself
// (mcp.Response.MarshalJSON), as on stdio: encoding/json would check and
// compact what it wrote, reading a large result again.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var body []byte
	if r, ok := v.(*mcp.Response); ok {
		b, err := r.MarshalJSON()
		if err != nil {
			http.Error(w, "cannot encode the reply", http.StatusInternalServerError)
			return
		}
		body = append(b, '\n')
	} else if r, ok := v.(*apiReply); ok && r.Status == "ok" && len(r.Result) > 0 {
		// The plain API's answer: the result is compact JSON already
		// (argmap.ResultValue wrote it).
		body = append(append(append(make([]byte, 0, len(r.Result)+32), `{"status":"ok","result":`...), r.Result...), "}\n"...)
	} else {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			http.Error(w, "cannot encode the reply", http.StatusInternalServerError)
			return
		}
		body = b.Bytes()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// writeRPCError answers with an HTTP error status and a JSON-RPC error
// body; id is nil when the request's id is unknown.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	writeJSON(w, status, &mcp.Response{ID: id, Error: &mcp.Error{Code: code, Message: msg}})
}

func byteCount(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
