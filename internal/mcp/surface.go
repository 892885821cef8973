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
	info     Implementation
	infoMeta json.RawMessage // the _meta of every 2026-07-28 result
	// tools are those tools/list shows; byName has them, and hidden those
	// whose command says "tool": false (they back a template, a prompt or
	// a completion, and cannot be called as tools).
	tools       []*argmap.Tool
	byName      map[string]*argmap.Tool
	caller      Caller
	catalog     *Catalog // resources and prompts; nil: none
	fingerprint uint32   // of info and the tool names, in cursors
	taskTools   bool     // some tool may run as a task (tasks.go)
	// views are the tools' MCP Apps views, by tool name (apps.go).
	views map[string]*appView
}

// Surface is what a server serves in one generation (NewServerFor,
// SetSurface).
type Surface struct {
	Info Implementation
	// Tools are the program's tools; those whose command's metadata says
	// "tool": false are served only through the catalog.
	Tools  []*argmap.Tool
	Caller Caller
	// Catalog holds the resources and prompts (NewCatalog); nil: none.
	Catalog *Catalog
}

func newSurface(in Surface) surface {
	sf := surface{info: in.Info, caller: in.Caller, catalog: in.Catalog, byName: make(map[string]*argmap.Tool, len(in.Tools))}
	for _, t := range in.Tools {
		if t.Command.NotTool {
			continue
		}
		sf.tools = append(sf.tools, t)
		sf.byName[t.Name] = t
		if argmap.TaskSupport(t.Command) != argmap.TaskForbidden {
			sf.taskTools = true
		}
	}
	sf.views = viewsOf(in.Info, sf.tools)
	sf.infoMeta, _ = marshalCompact(map[string]any{MetaServerInfo: in.Info})
	h := sha256.New()
	h.Write([]byte(in.Info.Name + "\x00" + in.Info.Version))
	for _, t := range sf.tools {
		h.Write([]byte("\x00" + t.Name))
	}
	sf.fingerprint = binary.BigEndian.Uint32(h.Sum(nil))
	return sf
}

// current is the surface now served, for a reader that keeps nothing of it
// once it returns (tools/list, initialize); a call holds its generation.
func (s *Server) current() *surface { return &s.surface.Load().Value }

// SetTools replaces the server's identity, tools and caller (a reload,
// docs/spec.md §6.4): calls from now on go to caller, while calls in flight
// finish on the old one. The channel returned closes once the last of them
// has ended; then what the old caller holds (its pools) may be stopped.
// Sessions are not told: see NotifyToolsChanged.
func (s *Server) SetTools(info Implementation, tools []*argmap.Tool, caller Caller) <-chan struct{} {
	return s.SetSurface(Surface{Info: info, Tools: tools, Caller: caller})
}

// SetSurface is SetTools with the programs' resources and prompts. The
// stateless clients listening for changes (subscriptions/listen) are told
// at once; handshake-era sessions as SetTools says.
func (s *Server) SetSurface(in Surface) <-chan struct{} {
	drained := s.surface.Swap(newSurface(in)).Drained()
	s.listChanged()
	return drained
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
