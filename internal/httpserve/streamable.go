package httpserve

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/mcp"
)

// Header names of the Streamable HTTP transport. net/http canonicalises
// names, so these match however a client spells them.
const (
	hdrSessionID       = "Mcp-Session-Id"
	hdrProtocolVersion = "Mcp-Protocol-Version"
	hdrMethod          = "Mcp-Method"
	hdrName            = "Mcp-Name"
	// hdrNode names the node that answered (Config.NodeID): not MCP's.
	hdrNode = "Nexus-Node"
)

// MCP error codes of the 2026-07-28 HTTP transport.
const (
	codeHeaderMismatch             = -32020
	codeMissingClientCapability    = -32021
	codeUnsupportedProtocolVersion = -32022
)

// serveMCP is the MCP endpoint: POST carries messages, DELETE ends a
// session, and GET opens a session's stream of server-initiated messages
// (nexus's own log records for a client that chose a level); without a
// session (2026-07-28 has none) GET is 405.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	r = s.withIdentity(r)
	switch r.Method {
	case http.MethodPost:
		s.postMCP(w, r)
	case http.MethodDelete:
		s.deleteMCP(w, r)
	case http.MethodGet:
		s.getMCP(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, mcp.CodeInvalidRequest, "method not allowed: "+r.Method+" (this endpoint takes GET, POST and DELETE)")
	}
}

// keepAlive is how often an idle GET stream gets an SSE comment, so that
// proxies and clients do not time it out.
var keepAlive = 25 * time.Second

// getMCP streams a session's own notifications until the client leaves,
// the session ends or the server shuts down. One stream per session.
func (s *Server) getMCP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(hdrSessionID)
	if sid == "" {
		w.Header().Set("Allow", "POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, mcp.CodeInvalidRequest, "method not allowed: GET opens a session's stream and needs an Mcp-Session-Id (stateless requests have none)")
		return
	}
	if acc := parseAccept(r.Header.Get("Accept")); !acc.sse {
		writeRPCError(w, http.StatusNotAcceptable, nil, mcp.CodeInvalidRequest, "not acceptable: GET answers text/event-stream")
		return
	}
	sess, ok := s.session(w, r, nil, r.Header.Get(hdrProtocolVersion))
	if !ok {
		return
	}
	defer s.sessions.release(sess)
	if !sess.listening.CompareAndSwap(false, true) {
		writeRPCError(w, http.StatusConflict, nil, mcp.CodeInvalidRequest, "conflict: this session already has a GET stream open")
		return
	}
	defer sess.listening.Store(false)
	st := &stream{w: w, rc: http.NewResponseController(w), log: s.log}
	st.start()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for !st.dead {
		select {
		case n := <-sess.notes:
			st.event(n)
		case <-tick.C:
			st.comment()
		case <-r.Context().Done():
			return
		case <-sess.done:
			return
		case <-s.closing:
			return
		}
	}
}

func (s *Server) deleteMCP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(hdrSessionID)
	if id == "" {
		writeRPCError(w, http.StatusBadRequest, nil, mcp.CodeInvalidRequest, "bad request: DELETE needs an Mcp-Session-Id header")
		return
	}
	if sess := s.sessions.acquire(id); sess != nil {
		owned := ownsSession(r, sess)
		s.sessions.release(sess)
		if !owned {
			id = "" // another's session: as good as unknown
		}
	}
	if id == "" || !s.sessions.remove(id) {
		writeRPCError(w, http.StatusNotFound, nil, mcp.CodeInvalidRequest, "session not found: it ended or expired; send initialize again")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) postMCP(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			writeRPCError(w, http.StatusUnsupportedMediaType, nil, mcp.CodeInvalidRequest, "unsupported media type: the body must be application/json")
			return
		}
	}
	acc := parseAccept(r.Header.Get("Accept"))
	if !acc.json && !acc.sse {
		writeRPCError(w, http.StatusNotAcceptable, nil, mcp.CodeInvalidRequest, "not acceptable: this endpoint answers application/json or text/event-stream")
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	items, batch := mcp.ParseMessages(body)
	if batch {
		s.postBatch(w, r, items)
		return
	}
	it := items[0]
	switch {
	case it.Reply != nil:
		// JSON-RPC fault in the body itself: an HTTP error with the JSON-RPC error.
		writeJSON(w, http.StatusBadRequest, it.Reply)
		return
	case it.Answer != nil:
		s.deliver(w, r, it.Answer)
		return
	case it.Request == nil:
		w.WriteHeader(http.StatusAccepted)
		return
	}
	req := it.Request
	pv := r.Header.Get(hdrProtocolVersion)
	switch {
	case mcp.IsStateless(req) || pv == mcp.StatelessVersion:
		s.postStateless(w, r, req, pv, acc)
	case mcp.IsInitialize(req):
		s.postInitialize(w, r, req, acc)
	default:
		s.postInSession(w, r, req, pv, acc)
	}
}

// deliver hands a client's response to the session whose function asked
// (MCP Streamable HTTP: the client POSTs its response to a server request,
// and gets 202 Accepted).
func (s *Server) deliver(w http.ResponseWriter, r *http.Request, a *mcp.Answer) {
	sess, ok := s.session(w, r, nil, r.Header.Get(hdrProtocolVersion))
	if !ok {
		return
	}
	defer s.sessions.release(sess)
	sess.mcp.Deliver(a)
	w.WriteHeader(http.StatusAccepted)
}

// readBody reads the whole body within the cap (413 beyond it).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := readLimited(w, r, s.cfg.MaxBody)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, mcp.CodeInvalidRequest, "request body too large: the limit is "+byteCount(s.cfg.MaxBody))
		} else {
			writeRPCError(w, http.StatusBadRequest, nil, mcp.CodeParseError, "cannot read the request body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}

// postInitialize opens a handshake-era session and answers initialize with
// its Mcp-Session-Id (only when initialize succeeds).
func (s *Server) postInitialize(w http.ResponseWriter, r *http.Request, req *mcp.Request, acc accept) {
	if req.IsNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	sess, err := s.sessions.create(s.mcp)
	if err != nil {
		w.Header().Set("Retry-After", "60")
		writeRPCError(w, http.StatusServiceUnavailable, req.ID, mcp.CodeInternalError, "server busy: the session limit is reached; try again later")
		return
	}
	sess.owner = ownerOf(r) // before the client learns its id
	defer s.sessions.release(sess)
	s.respond(w, r, acc, func(ctx context.Context, notify func(*mcp.Notification)) *mcp.Response {
		return sess.mcp.Handle(ctx, req, notify)
	}, func(resp *mcp.Response) int {
		if resp == nil || resp.Error != nil {
			s.sessions.remove(sess.id)
			return http.StatusOK
		}
		w.Header().Set(hdrSessionID, sess.id)
		return http.StatusOK
	})
}

// postInSession serves a handshake-era message of an existing session.
func (s *Server) postInSession(w http.ResponseWriter, r *http.Request, req *mcp.Request, pv string, acc accept) {
	sess, ok := s.session(w, r, req.ID, pv)
	if !ok {
		return
	}
	defer s.sessions.release(sess)
	if req.IsNotification() {
		sess.mcp.Handle(r.Context(), req, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.respond(w, r, acc, func(ctx context.Context, notify func(*mcp.Notification)) *mcp.Response {
		if acc.sse && req.Method == "tools/call" {
			// A session notification may come this way (a reload's list_changed).
			defer sess.dropStream(sess.addStream(notify))
		}
		return sess.mcp.Handle(ctx, req, notify)
	}, s.scopeStatus(w, r))
}

// session finds the request's session, or answers 400 (no id, bad version
// header) or 404 (unknown or expired id) and returns false.
func (s *Server) session(w http.ResponseWriter, r *http.Request, id json.RawMessage, pv string) (*session, bool) {
	if pv != "" && !slices.Contains(mcp.SupportedVersions(), pv) {
		writeRPCError(w, http.StatusBadRequest, id, mcp.CodeInvalidRequest, "bad request: unsupported MCP-Protocol-Version "+quoteHeader(pv)+" (supported: "+strings.Join(mcp.SupportedVersions(), ", ")+")")
		return nil, false
	}
	sid := r.Header.Get(hdrSessionID)
	if sid == "" {
		writeRPCError(w, http.StatusBadRequest, id, mcp.CodeInvalidRequest, "bad request: missing Mcp-Session-Id header (send initialize first, or name a protocol version in params._meta for a stateless request)")
		return nil, false
	}
	sess := s.sessions.acquire(sid)
	if sess != nil && !ownsSession(r, sess) {
		s.sessions.release(sess) // another's session: as good as unknown
		sess = nil
	}
	if sess == nil {
		writeRPCError(w, http.StatusNotFound, id, mcp.CodeInvalidRequest, "session not found: it ended or expired; send initialize again")
		return nil, false
	}
	if v := sess.mcp.Version(); pv != "" && v != "" && pv != v {
		s.sessions.release(sess)
		writeRPCError(w, http.StatusBadRequest, id, mcp.CodeInvalidRequest, "bad request: MCP-Protocol-Version "+quoteHeader(pv)+" is not the version this session negotiated ("+v+")")
		return nil, false
	}
	return sess, true
}

// postStateless serves a 2026-07-28 request: no session, the routing
// headers must agree with the body.
func (s *Server) postStateless(w http.ResponseWriter, r *http.Request, req *mcp.Request, pv string, acc accept) {
	if req.IsNotification() {
		w.WriteHeader(http.StatusAccepted) // this era defines none over HTTP; accept and drop
		return
	}
	if msg := checkRoutingHeaders(r.Header, req, pv); msg != "" {
		writeRPCError(w, http.StatusBadRequest, req.ID, codeHeaderMismatch, "header mismatch: "+msg)
		return
	}
	metaOK := hasStatelessMeta(req)
	s.respond(w, r, acc, func(ctx context.Context, notify func(*mcp.Notification)) *mcp.Response {
		return s.mcp.HandleStateless(ctx, req, notify) // its tasks are its identity's (withIdentity)
	}, func(resp *mcp.Response) int {
		if resp == nil || resp.Error == nil {
			return http.StatusOK
		}
		if st := s.scopeRefused(w, r, resp); st != 0 {
			return st
		}
		switch resp.Error.Code {
		case mcp.CodeMethodNotFound:
			return http.StatusNotFound
		case codeHeaderMismatch, codeMissingClientCapability, codeUnsupportedProtocolVersion, mcp.CodeParseError, mcp.CodeInvalidRequest:
			return http.StatusBadRequest
		case mcp.CodeInvalidParams:
			if !metaOK {
				return http.StatusBadRequest // the request's _meta is what is wrong
			}
		}
		return http.StatusOK
	})
}

// hasStatelessMeta reports whether params._meta carries what every
// 2026-07-28 request must: the protocol version and client capabilities.
func hasStatelessMeta(req *mcp.Request) bool {
	meta := req.Meta()
	_, v := meta[mcp.MetaProtocolVersion]
	_, c := meta[mcp.MetaClientCapabilities]
	return v && c
}
