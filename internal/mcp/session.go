package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// Session is one client's conversation: its handshake state, log level and
// in-flight requests. A stdio server has exactly one; an HTTP server one
// per Mcp-Session-Id (and a throwaway one per stateless request if it likes).
type Session struct {
	srv *Server
	// notify sends a server notification to this client.
	notify func(*Notification)

	mu          sync.Mutex
	initialized bool
	version     string
	logLevel    string // set by logging/setLevel; "" sends no log messages
	// capabilities are those the client declared in initialize.
	capabilities json.RawMessage
	inflight     map[string]*inflightCall
	closed       bool
	// asks are the server requests waiting for the client (ask.go).
	asks pendingAsks
	// askHook is ss.ask as a CallHooks.Ask, bound once.
	askHook func(context.Context, Question) (json.RawMessage, error)
	// taskOwner names this session as the owner of its tasks (tasks.go).
	taskOwner string
	// listener receives the session's resource notifications (subscribe.go).
	listener *listener
	// listedResources is set once the client listed resources: it is then
	// told when a function adds one.
	listedResources atomic.Bool
}

type inflightCall struct {
	cancel context.CancelFunc
	// byClient is set when notifications/cancelled arrived: the request then
	// gets no reply at all (MCP cancellation: "SHOULD NOT send a response").
	byClient bool
}

// NewSession starts a session whose notifications go to notify (nil drops
// them). Call Close when the client is gone.
func (s *Server) NewSession(notify func(*Notification)) *Session {
	if notify == nil {
		notify = func(*Notification) {}
	}
	ss := &Session{srv: s, notify: notify, inflight: map[string]*inflightCall{}, taskOwner: newSessionOwner()}
	ss.askHook = ss.ask
	ss.listener = &listener{send: notify}
	if s.opts.Logs != nil {
		s.opts.Logs.join(ss)
	}
	s.sessionsMu.Lock()
	s.sessions[ss] = struct{}{}
	s.sessionsMu.Unlock()
	return ss
}

// isSlow reports whether a request may run long and so is dispatched on
// its own goroutine (tasks/result waits for its task); lifecycle messages
// are handled in arrival order.
func isSlow(r *Request) bool {
	switch r.Method {
	case "tools/call", "tasks/result",
		// these may call a function too (a template, a prompt, a completer)
		"resources/read", "prompts/get", "completion/complete",
		"subscriptions/listen": // open until the client closes it
		return true
	}
	return false
}

// Handle answers one request or notification. It returns nil when no reply
// must be sent: for every notification, and for a request the client
// cancelled. Notifications the request produces while it runs (progress,
// log messages) go to notify, so a transport can route them to that
// request's own stream; nil sends them to the session's notify.
//
// A request that names a protocol version in params._meta (IsStateless) is
// served by the stateless rules of 2026-07-28 whatever the session's state;
// any other by the handshake rules (docs/spec.md §4.3).
func (ss *Session) Handle(ctx context.Context, r *Request, notify func(*Notification)) *Response {
	return ss.start(ctx, r, notify)()
}

// start registers a request as in flight, so that a notifications/cancelled
// read right after it finds it, and returns the function that runs it and
// gives its reply. Transports call start in arrival order and may run the
// returned function on another goroutine.
func (ss *Session) start(ctx context.Context, r *Request, notify func(*Notification)) func() *Response {
	if notify == nil {
		notify = ss.notify
	}
	if r.IsNotification() {
		ss.handleNotification(r)
		return func() *Response { return nil }
	}
	ctx = withNotify(ctx, notify)
	ctx, cancel := context.WithCancel(ctx)
	key := idKey(r.ID)
	call := &inflightCall{cancel: cancel}
	ss.mu.Lock()
	if ss.closed {
		cancel()
	}
	ss.inflight[key] = call
	ss.mu.Unlock()
	return func() *Response {
		defer func() {
			cancel()
			ss.mu.Lock()
			if ss.inflight[key] == call {
				delete(ss.inflight, key)
			}
			ss.mu.Unlock()
		}()
		var result any
		var rpcErr *Error
		if IsStateless(r) {
			sctx := ctx
			if r.Method == "tools/call" || isTaskMethod(r.Method) {
				sctx = WithTaskOwner(ctx, ss.taskOwner) // a session's tasks are its own, in every era
			}
			result, rpcErr = ss.srv.dispatchStateless(sctx, r)
		} else {
			result, rpcErr = ss.dispatch(ctx, r)
		}
		result = ss.srv.withViews(r, result, ss.capabilitiesOf) // apps.go
		ss.mu.Lock()
		cancelled := call.byClient
		ss.mu.Unlock()
		if cancelled {
			return nil
		}
		if rpcErr != nil {
			return errorResponse(r, rpcErr)
		}
		return &Response{ID: r.ID, Result: result}
	}
}

// errorResponse answers r with an error; a parse error (a tools/call whose
// arguments, read lazily, turned out not to be JSON) has no id, as no
// unparsable message does (JSON-RPC 2.0 §5).
func errorResponse(r *Request, rpcErr *Error) *Response {
	if rpcErr.Code == CodeParseError {
		return &Response{Error: rpcErr}
	}
	return &Response{ID: r.ID, Error: rpcErr}
}

// dispatch serves a request by the handshake-era rules (docs/spec.md §4.2).
func (ss *Session) dispatch(ctx context.Context, r *Request) (any, *Error) {
	switch r.Method {
	case "ping":
		// MCP lifecycle: ping may be sent at any time, before the handshake too.
		return struct{}{}, nil
	case "initialize":
		return ss.initialize(r.Params)
	}
	ss.mu.Lock()
	ready, version := ss.initialized, ss.version
	ss.mu.Unlock()
	switch {
	case r.Method == "tools/list", r.Method == "tools/call", r.Method == "logging/setLevel", isFeatureMethod(r.Method), isTaskMethod(r.Method):
		if !ready {
			// docs/spec.md §4.2: tools/* before the handshake are rejected with -32600.
			return nil, errorf(CodeInvalidRequest, "session not initialized: send initialize before %s (or, with protocol %s, name the version in params._meta[%q])", r.Method, StatelessVersion, MetaProtocolVersion)
		}
	}
	switch r.Method {
	case "tools/list":
		return ss.srv.listTools(ctx, r.Params, version)
	case "tools/call":
		ss.mu.Lock()
		caps := ss.capabilities
		ss.mu.Unlock()
		c := client{version: version, logLevel: ss.LogLevel, capabilities: caps, session: ss}
		if hasHandshakeTasks(version) && ss.srv.tasksEnabled() {
			if res, rpcErr, ok := ss.handshakeToolCall(ctx, r, c); ok {
				return res, rpcErr
			}
		}
		return ss.srv.callTool(ctx, r, c)
	case "logging/setLevel":
		return ss.setLevel(r.Params)
	case "resources/subscribe", "resources/unsubscribe":
		if !ss.srv.current().catalog.subscribable() {
			// No file to watch: the capability is not declared either.
			return nil, errorf(CodeMethodNotFound, "method not found: %s", r.Method)
		}
		if r.Method == "resources/subscribe" {
			return ss.subscribe(r.Params)
		}
		return ss.unsubscribe(r.Params)
	}
	if isFeatureMethod(r.Method) {
		return ss.srv.feature(ctx, r, ss.client(), ss)
	}
	if isTaskMethod(r.Method) {
		return ss.handshakeTaskMethod(ctx, r, version)
	}
	return nil, errorf(CodeMethodNotFound, "method not found: %s", r.Method)
}

type initializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      Implementation `json:"serverInfo"`
}

func (ss *Session) initialize(params json.RawMessage) (any, *Error) {
	var p initializeParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, errorf(CodeInvalidParams, "invalid initialize params: %v", err)
		}
	}
	// docs/spec.md §4.2: echo the client's version when supported, else
	// answer the latest.
	version := LatestVersion
	if slices.Contains(handshakeVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	ss.mu.Lock()
	ss.initialized = true
	ss.version = version
	ss.capabilities = p.Capabilities
	ss.mu.Unlock()
	return &initializeResult{
		ProtocolVersion: version,
		Capabilities:    ss.srv.withAppsCapabilities(ss.srv.capabilities(version), p.Capabilities),
		ServerInfo:      ss.srv.current().info,
	}, nil
}

// capabilities are the server's for a protocol version: tools, whose list
// never changes (unless --watch), and logging (logging/setLevel,
// notifications/message) from 2025-11-25 on (2026-07-28 sets the level per
// request instead). Prompts, resources and completions are declared when
// the program has them (docs/spec.md §4.2): resources.subscribe where a file may be
// subscribed to, listChanged where a function may add one (or --watch may
// change everything). A program without them still answers their list
// methods, with empty lists: clients ask anyway.
//
// Before 2025-11-25, a program without resources or prompts declares tools
// alone: docs/spec.md §4.2 fixes that initialize result byte for byte, as
// morloc's manual shows it for 2025-06-18.
func (s *Server) capabilities(version string) map[string]any {
	f := featuresOf(version)
	cat := s.current().catalog
	tools := map[string]any{"listChanged": s.opts.ListChanged}
	if f.stateless {
		tools = map[string]any{} // 2026-07-28: changes are opted into per stream (subscriptions/listen)
	}
	caps := map[string]any{"tools": tools}
	if hasHandshakeTasks(version) && s.tasksEnabled() {
		caps["tasks"] = tasksCapability() // only where a tool may run as one
	}
	if f.stateless && s.tasksEnabled() {
		caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	if f.allCapabilities && !f.stateless {
		caps["logging"] = map[string]any{}
	}
	if cat.hasPrompts() {
		p := map[string]any{"listChanged": s.opts.ListChanged}
		if f.stateless && !s.opts.ListChanged {
			p = map[string]any{}
		}
		caps["prompts"] = p
	}
	if cat.hasResources() {
		r := map[string]any{"subscribe": cat.subscribable(), "listChanged": s.opts.ListChanged || cat.hasFiles()}
		if f.stateless {
			// Only what is true: a 2026-07-28 client asks for it on a
			// subscriptions/listen stream.
			for k, v := range r {
				if v == false {
					delete(r, k)
				}
			}
		}
		caps["resources"] = r
	}
	if cat.completable() {
		caps["completions"] = map[string]any{}
	}
	return caps
}

type setLevelParams struct {
	Level *string `json:"level"`
}

func (ss *Session) setLevel(params json.RawMessage) (any, *Error) {
	var p setLevelParams
	if err := json.Unmarshal(params, &p); err != nil || p.Level == nil {
		return nil, errorf(CodeInvalidParams, "invalid params: logging/setLevel needs params.level, one of %v", logLevels)
	}
	if levelRank(*p.Level) < 0 {
		return nil, errorf(CodeInvalidParams, "invalid params: unknown log level %q (want one of %v)", *p.Level, logLevels)
	}
	ss.mu.Lock()
	ss.logLevel = *p.Level
	ss.mu.Unlock()
	return struct{}{}, nil
}

type cancelledParams struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason"`
}

func (ss *Session) handleNotification(r *Request) {
	switch r.Method {
	case "notifications/cancelled":
		var p cancelledParams
		if json.Unmarshal(r.Params, &p) != nil || p.RequestID == nil {
			return
		}
		ss.mu.Lock()
		call := ss.inflight[idKey(p.RequestID)]
		if call != nil {
			call.byClient = true
		}
		ss.mu.Unlock()
		if call != nil {
			ss.srv.log.Info("request cancelled by client", "id", string(p.RequestID), "reason", p.Reason)
			call.cancel()
		}
	default:
		// notifications/initialized and any unknown notification: never answered.
	}
}

// HandleStateless answers one 2026-07-28 request (IsStateless) that belongs
// to no session; notify receives what it produces while it runs. A request
// without a version in _meta gets -32602, as that era requires. It returns
// nil for a notification.
func (s *Server) HandleStateless(ctx context.Context, r *Request, notify func(*Notification)) *Response {
	if r.IsNotification() {
		return nil
	}
	ctx = withNotify(ctx, notify)
	result, rpcErr := s.dispatchStateless(ctx, r)
	result = s.withViews(r, result, nil) // apps.go
	if rpcErr != nil {
		return errorResponse(r, rpcErr)
	}
	return &Response{ID: r.ID, Result: result}
}

// Initialized reports whether initialize has been answered in this session.
func (ss *Session) Initialized() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.initialized
}

// Version is the protocol version negotiated by initialize, "" before it.
func (ss *Session) Version() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version
}

// LogLevel is the level chosen with logging/setLevel, "" before it (no log
// messages are sent then).
func (ss *Session) LogLevel() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.logLevel
}

// Close ends the session: it cancels every request still running (their
// replies, if a caller still waits for them, are theirs to drop) and stops
// log messages. Requests handled after Close are cancelled at once.
func (ss *Session) Close() {
	ss.mu.Lock()
	ss.closed = true
	calls := make([]*inflightCall, 0, len(ss.inflight))
	for _, c := range ss.inflight {
		calls = append(calls, c)
	}
	ss.mu.Unlock()
	if ss.srv.opts.Logs != nil {
		ss.srv.opts.Logs.leave(ss)
	}
	ss.srv.sessionsMu.Lock()
	delete(ss.srv.sessions, ss)
	ss.srv.sessionsMu.Unlock()
	ss.srv.unsubscribeAll(ss.listener)
	for _, c := range calls {
		c.cancel()
	}
	ss.srv.tasks.closeOwner(ss.taskOwner, false) // no one else can reach them
}

// idKey canonicalises a request id so that the id in notifications/cancelled
// matches however the client spaced it.
func idKey(id json.RawMessage) string {
	if !bytes.ContainsAny(id, " \t\r\n") {
		return string(id) // nothing to compact: the common case, one allocation
	}
	start := jsontext.SkipSpace(id, 0)
	b, _, err := jsontext.AppendCompact(nil, id, start)
	if err != nil {
		return string(id)
	}
	return string(b)
}
