package mcp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"

	"github.com/nexus-mcp/nexus/internal/argmap"
)

// surface is what the server serves in one generation: its identity, its
// tools and the caller that reaches their pools. It never changes once
// built; a reload (SetTools) swaps in a new one, and the calls that began
// on the old one finish there.
type surface struct {
	info        Implementation
	infoMeta    json.RawMessage // the _meta of every 2026-07-28 result
	tools       []*argmap.Tool
	byName      map[string]*argmap.Tool
	caller      Caller
	fingerprint uint32 // of info and the tool names, in cursors
	taskTools   bool   // some tool may run as a task (tasks.go)
}

func newSurface(info Implementation, tools []*argmap.Tool, caller Caller) surface {
	sf := surface{info: info, tools: tools, caller: caller, byName: make(map[string]*argmap.Tool, len(tools))}
	for _, t := range tools {
		sf.byName[t.Name] = t
		if argmap.TaskSupport(t.Command) != argmap.TaskForbidden {
			sf.taskTools = true
		}
	}
	sf.infoMeta, _ = marshalCompact(map[string]any{MetaServerInfo: info})
	h := sha256.New()
	h.Write([]byte(info.Name + "\x00" + info.Version))
	for _, t := range tools {
		h.Write([]byte("\x00" + t.Name))
	}
	sf.fingerprint = binary.BigEndian.Uint32(h.Sum(nil))
	return sf
}

// current is the surface now served, for a reader that keeps nothing of it
// once it returns (tools/list, initialize); a call holds its generation.
func (s *Server) current() *surface { return &s.surface.Load().Value }

// SetTools replaces the server's identity, tools and caller (a reload,
// issue 12 §4): calls from now on go to caller, while calls in flight
// finish on the old one. The channel returned closes once the last of them
// has ended; then what the old caller holds (its pools) may be stopped.
// Sessions are not told: see NotifyToolsChanged.
func (s *Server) SetTools(info Implementation, tools []*argmap.Tool, caller Caller) <-chan struct{} {
	return s.surface.Swap(newSurface(info, tools, caller)).Drained()
}

// NotifyToolsChanged sends notifications/tools/list_changed (MCP server
// tools, "List Changed Notification") to every initialized session through
// its notify (stdout for stdio). A transport
// that routes session messages itself (HTTP) uses ToolsChangedNotification
// with its own sessions instead.
func (s *Server) NotifyToolsChanged() {
	s.sessionsMu.Lock()
	var live []*Session
	for ss := range s.sessions {
		live = append(live, ss)
	}
	s.sessionsMu.Unlock()
	for _, ss := range live {
		if ss.Initialized() {
			ss.notify(ToolsChangedNotification())
		}
	}
}

// ToolsChangedNotification is notifications/tools/list_changed, for a
// transport to send to its sessions.
func ToolsChangedNotification() *Notification {
	return &Notification{Method: "notifications/tools/list_changed"}
}
