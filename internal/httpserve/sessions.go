package httpserve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nexus-mcp/nexus/internal/mcp"
)

// errTooManySessions answers an initialize when MaxSessions are live.
var errTooManySessions = errors.New("too many sessions")

// session is one handshake-era MCP session, known by its Mcp-Session-Id.
type session struct {
	id  string
	mcp *mcp.Session
	// owner is the identity that opened the session (oauth.go): only it
	// may use or end the session.
	owner string
	// notes carries the session's own notifications (nexus's log records,
	// not a request's) to its GET stream while one is open (listening).
	notes     chan *mcp.Notification
	listening atomic.Bool
	done      chan struct{} // closed when the session ends
	// streams are the notifies of calls in flight whose reply may be an
	// SSE stream (nil: a free slot), for a session notification when no
	// GET stream is open (reload.go).
	streamsMu sync.Mutex
	streams   []func(*mcp.Notification)

	// guarded by sessionStore.mu
	lastUsed time.Time
	active   int // requests in flight: a busy session never expires
}

// sessionStore holds the live sessions, at most max, each ending after idle
// without a request.
type sessionStore struct {
	max    int
	idle   time.Duration
	now    func() time.Time
	prefix string // "<node id>." before every id, so a balancer can pin sessions

	mu   sync.Mutex
	byID map[string]*session
}

func newSessionStore(max int, idle time.Duration, nodeID string) *sessionStore {
	st := &sessionStore{max: max, idle: idle, now: time.Now, byID: map[string]*session{}}
	if nodeID != "" {
		st.prefix = nodeID + "."
	}
	return st
}

// newSessionID returns 256 random bits in hex: visible ASCII, as MCP
// requires, and unguessable.
func newSessionID() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on supported systems
	}
	return hex.EncodeToString(b[:])
}

// create opens a session, busy with the request that creates it (release
// it). Expired sessions are swept first when the store is full.
func (st *sessionStore) create(srv *mcp.Server) (*session, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.byID) >= st.max {
		st.sweepLocked()
		if len(st.byID) >= st.max {
			return nil, errTooManySessions
		}
	}
	s := &session{id: st.prefix + newSessionID(), notes: make(chan *mcp.Notification, notesBuffer), done: make(chan struct{}), lastUsed: st.now(), active: 1}
	s.mcp = srv.NewSession(s.notify)
	st.byID[s.id] = s
	return s, nil
}

// acquire finds a live session and marks it busy; nil when the id is
// unknown, ended or expired.
func (st *sessionStore) acquire(id string) *session {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.byID[id]
	if s == nil {
		return nil
	}
	if s.active == 0 && st.now().Sub(s.lastUsed) > st.idle {
		st.removeLocked(s)
		return nil
	}
	s.active++
	s.lastUsed = st.now()
	return s
}

// release ends one request of the session.
func (st *sessionStore) release(s *session) {
	st.mu.Lock()
	s.active--
	s.lastUsed = st.now()
	st.mu.Unlock()
}

// remove ends a session (DELETE, or a failed initialize) and cancels what
// it still runs; it reports whether the session was live.
func (st *sessionStore) remove(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.byID[id]
	if s == nil {
		return false
	}
	st.removeLocked(s)
	return true
}

func (st *sessionStore) removeLocked(s *session) {
	delete(st.byID, s.id)
	close(s.done)
	go s.mcp.Close() // cancels its calls; never under the store's lock
}

// notify queues a session notification for the GET stream; with no stream
// open (or a full queue) it is dropped: nexus never blocks on a client.
func (s *session) notify(n *mcp.Notification) {
	if !s.listening.Load() {
		return
	}
	select {
	case s.notes <- n:
	default:
	}
}

// sweep ends every idle, expired session.
func (st *sessionStore) sweep() {
	st.mu.Lock()
	st.sweepLocked()
	st.mu.Unlock()
}

func (st *sessionStore) sweepLocked() {
	now := st.now()
	for _, s := range st.byID {
		if s.active == 0 && now.Sub(s.lastUsed) > st.idle {
			st.removeLocked(s)
		}
	}
}

// closeAll ends every session (shutdown).
func (st *sessionStore) closeAll() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, s := range st.byID {
		st.removeLocked(s)
	}
}

// count is the number of live sessions.
func (st *sessionStore) count() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
}
