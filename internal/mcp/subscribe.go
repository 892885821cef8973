package mcp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/reload"
)

// Resource subscriptions and change notifications (docs/spec.md §6.1):
//
//   - handshake era (2025-11-25 and before): resources/subscribe and
//     resources/unsubscribe; notifications/resources/updated goes to the
//     session when a subscribed file changes (or is deleted), and
//     notifications/resources/list_changed to every session that listed
//     resources when a function adds a file;
//   - 2026-07-28: subscriptions/listen (SEP-2575) opens a stream that
//     first gets notifications/subscriptions/acknowledged with what the
//     server agreed to send, then those notifications, each carrying the
//     stream's id in _meta, until the client closes it.
//
// Only files can be watched: a program's own files and the files its
// functions wrote. Their directories are watched with fsnotify
// (reload.FileWatcher) while someone is subscribed.

// MetaSubscriptionID names, in _meta, the subscriptions/listen stream a
// notification belongs to.
const MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// DefaultWatchDebounce is how long after a subscribed file's last change
// notifications/resources/updated is sent.
const DefaultWatchDebounce = 100 * time.Millisecond

// listener is where change notifications go: a handshake-era session, or
// a 2026-07-28 subscriptions/listen stream.
type listener struct {
	send func(*Notification)
	// id is a listen stream's subscriptionId; nil for a session.
	id json.RawMessage
	// What a listen stream asked for (a session is told of list changes
	// as resourceAdded and its transport say).
	tools, prompts, resources bool
	// acked, for a listen stream, closes once its acknowledgement is
	// sent: nothing may go before it (SEP-2575).
	acked chan struct{}
}

// notify sends n, with the stream's id in _meta for a listen stream.
func (l *listener) notify(method string, params map[string]any) {
	if l.acked != nil && method != "notifications/subscriptions/acknowledged" {
		<-l.acked
	}
	if l.id != nil {
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = map[string]json.RawMessage{MetaSubscriptionID: l.id}
	}
	n := &Notification{Method: method}
	if params != nil {
		n.Params = params
	}
	l.send(n)
}

type subscriptions struct {
	mu sync.Mutex
	// byURI are the listeners subscribed to each URI, and paths the file
	// watched for it.
	byURI map[string]map[*listener]struct{}
	paths map[string]string
	// streams are the live listen streams.
	streams map[*listener]struct{}
	watcher *reload.FileWatcher
	closing chan struct{} // closed by EndSubscriptions
	closed  bool
}

func newSubscriptions() *subscriptions {
	return &subscriptions{byURI: map[string]map[*listener]struct{}{}, paths: map[string]string{},
		streams: map[*listener]struct{}{}, closing: make(chan struct{})}
}

// watchedPath is the file behind a URI a client may subscribe to: a
// program's file, or a file a function wrote. A template's URI has none
// (its contents are computed at each read); an unknown URI is not found.
func (s *Server) watchedPath(uri string) (string, *Error) {
	sf := s.current()
	if sf.catalog != nil {
		if r := sf.catalog.byURI[uri]; r != nil {
			return r.Path, nil
		}
	}
	if pf := s.files.get(uri); pf != nil {
		return pf.path, nil
	}
	if t, _ := sf.catalog.match(uri); t != nil {
		return "", &Error{Code: CodeInvalidParams, Data: map[string]string{"uri": uri},
			Message: "resource '" + uri + "' is computed by '" + t.tool.Name + "' at each read (template " + t.URITemplate + "): there is no file to watch; subscribe to a file resource"}
	}
	return "", notFound(uri, "it is none of this server's resources")
}

// subscribe adds l to uri's listeners, watching its file.
func (s *Server) subscribe(l *listener, uri string) *Error {
	path, rpcErr := s.watchedPath(uri)
	if rpcErr != nil {
		return rpcErr
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return errorf(CodeInternalError, "subscribing to '%s': %v", uri, err)
	}
	sb := s.subs
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if _, ok := sb.byURI[uri][l]; ok {
		return nil // subscribed already
	}
	if sb.watcher == nil {
		debounce := s.opts.WatchDebounce
		if debounce <= 0 {
			debounce = DefaultWatchDebounce
		}
		w, err := reload.NewFileWatcher(debounce, s.log, s.fileChanged)
		if err != nil {
			return errorf(CodeInternalError, "subscribing to '%s': %v", uri, err)
		}
		sb.watcher = w
	}
	if len(sb.byURI[uri]) == 0 {
		if err := sb.watcher.Add(abs); err != nil {
			return errorf(CodeInternalError, "subscribing to '%s': %v", uri, err)
		}
		sb.byURI[uri] = map[*listener]struct{}{}
		sb.paths[uri] = abs
	}
	sb.byURI[uri][l] = struct{}{}
	return nil
}

// unsubscribe removes l from uri's listeners (a no-op when it is not one)
// and stops watching what no one listens to.
func (s *Server) unsubscribe(l *listener, uri string) {
	sb := s.subs
	sb.mu.Lock()
	var idle *reload.FileWatcher
	if ls, ok := sb.byURI[uri]; ok {
		if _, ok := ls[l]; ok {
			delete(ls, l)
			if len(ls) == 0 {
				sb.watcher.Remove(sb.paths[uri])
				delete(sb.byURI, uri)
				delete(sb.paths, uri)
			}
		}
	}
	if len(sb.byURI) == 0 && sb.watcher != nil {
		idle, sb.watcher = sb.watcher, nil
	}
	sb.mu.Unlock()
	if idle != nil {
		go idle.Close() // never under the lock: a change may be waiting for it
	}
}

// unsubscribeAll removes l from every URI.
func (s *Server) unsubscribeAll(l *listener) {
	s.subs.mu.Lock()
	var uris []string
	for uri, ls := range s.subs.byURI {
		if _, ok := ls[l]; ok {
			uris = append(uris, uri)
		}
	}
	s.subs.mu.Unlock()
	for _, uri := range uris {
		s.unsubscribe(l, uri)
	}
}

// fileChanged tells the listeners of every URI whose file is path.
func (s *Server) fileChanged(path string) {
	s.subs.mu.Lock()
	type note struct {
		l   *listener
		uri string
	}
	var notes []note
	for uri, p := range s.subs.paths {
		if p != path {
			continue
		}
		for l := range s.subs.byURI[uri] {
			notes = append(notes, note{l, uri})
		}
	}
	s.subs.mu.Unlock()
	for _, n := range notes {
		s.log.Debug("subscribed resource changed", "uri", n.uri, "file", path)
		n.l.notify("notifications/resources/updated", map[string]any{"uri": n.uri})
	}
}

// resourceAdded tells who may want to know that a function added a file
// to the resources: sessions that listed resources, and listen streams
// that asked for resource list changes. calling is the session whose call
// added it (nil: none), told on the call's own stream (notify), which
// reaches it even without a stream of its own (Streamable HTTP).
func (s *Server) resourceAdded(calling *Session, notify func(*Notification)) {
	for _, ss := range s.liveSessions() {
		if !ss.listedResources.Load() {
			continue
		}
		if ss == calling && notify != nil {
			notify(&Notification{Method: "notifications/resources/list_changed"})
			continue
		}
		ss.notify(&Notification{Method: "notifications/resources/list_changed"})
	}
	for _, l := range s.listenStreams() {
		if l.resources {
			l.notify("notifications/resources/list_changed", nil)
		}
	}
}

// listChanged tells the listen streams that the tools, prompts and
// resources may have changed (a reload); sessions are told by
// NotifyToolsChanged or their transport.
func (s *Server) listChanged() {
	for _, l := range s.listenStreams() {
		if l.tools {
			l.notify("notifications/tools/list_changed", nil)
		}
		if l.prompts {
			l.notify("notifications/prompts/list_changed", nil)
		}
		if l.resources {
			l.notify("notifications/resources/list_changed", nil)
		}
	}
}

func (s *Server) liveSessions() []*Session {
	s.sessionsMu.Lock()
	defer s.sessionsMu.Unlock()
	live := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		live = append(live, ss)
	}
	return live
}

func (s *Server) listenStreams() []*listener {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	out := make([]*listener, 0, len(s.subs.streams))
	for l := range s.subs.streams {
		out = append(out, l)
	}
	return out
}

// EndSubscriptions ends every subscriptions/listen stream with its
// result, and refuses new ones: nexus is stopping (HTTP's drain, stdin's
// end), and a stream open for ever must not hold the drain up.
func (s *Server) EndSubscriptions() {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if !s.subs.closed {
		s.subs.closed = true
		close(s.subs.closing)
	}
}

// subscribe answers a handshake-era resources/subscribe.
func (ss *Session) subscribe(params json.RawMessage) (any, *Error) {
	uri, rpcErr := readURIParam("resources/subscribe", params)
	if rpcErr != nil {
		return nil, rpcErr
	}
	if rpcErr := ss.srv.subscribe(ss.listener, uri); rpcErr != nil {
		return nil, rpcErr
	}
	return struct{}{}, nil
}

func (ss *Session) unsubscribe(params json.RawMessage) (any, *Error) {
	uri, rpcErr := readURIParam("resources/unsubscribe", params)
	if rpcErr != nil {
		return nil, rpcErr
	}
	ss.srv.unsubscribe(ss.listener, uri)
	return struct{}{}, nil
}

// subscriptionFilter is a subscriptions/listen request's notifications
// (MCP SubscriptionFilter), and what the server agreed to.
type subscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// listen answers a 2026-07-28 subscriptions/listen: it acknowledges what
// it will send, then sends it on the request's stream until the client
// ends the request (closes the stream, or cancels it) or nexus stops.
func (s *Server) listen(ctx context.Context, r *Request) (any, *Error) {
	raw, ok := r.param("notifications")
	var want subscriptionFilter
	if !ok || jsonKind(raw) != "object" || json.Unmarshal(raw, &want) != nil {
		return nil, errorf(CodeInvalidParams, "invalid subscriptions/listen params: notifications must be an object (toolsListChanged, promptsListChanged, resourcesListChanged, resourceSubscriptions)")
	}
	sf := s.current()
	l := &listener{send: notifierFrom(ctx), id: r.ID, acked: make(chan struct{})}
	var agreed subscriptionFilter
	l.tools = want.ToolsListChanged && s.opts.ListChanged
	l.prompts = want.PromptsListChanged && s.opts.ListChanged && sf.catalog.hasPrompts()
	l.resources = want.ResourcesListChanged && (s.opts.ListChanged || sf.catalog.hasFiles())
	agreed.ToolsListChanged, agreed.PromptsListChanged, agreed.ResourcesListChanged = l.tools, l.prompts, l.resources
	defer s.unsubscribeAll(l)
	for _, uri := range want.ResourceSubscriptions {
		if slices.Contains(agreed.ResourceSubscriptions, uri) {
			continue
		}
		if rpcErr := s.subscribe(l, uri); rpcErr != nil {
			s.log.Debug("subscriptions/listen: not subscribing", "uri", uri, "why", rpcErr.Message)
			continue // the acknowledgement says which were agreed
		}
		agreed.ResourceSubscriptions = append(agreed.ResourceSubscriptions, uri)
	}
	s.subs.mu.Lock()
	closing, closed := s.subs.closing, s.subs.closed
	live := !closed && (l.tools || l.prompts || l.resources || len(agreed.ResourceSubscriptions) > 0)
	if live {
		s.subs.streams[l] = struct{}{}
	}
	s.subs.mu.Unlock()
	l.notify("notifications/subscriptions/acknowledged", map[string]any{"notifications": agreed})
	close(l.acked)
	if live {
		select {
		case <-ctx.Done():
		case <-closing:
		}
		s.subs.mu.Lock()
		delete(s.subs.streams, l)
		s.subs.mu.Unlock()
	}
	return object{
		{Key: "resultType", Value: "complete"},
		{Key: "_meta", Value: map[string]any{MetaServerInfo: sf.info, MetaSubscriptionID: r.ID}},
	}, nil
}
