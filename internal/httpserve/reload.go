package httpserve

import (
	"github.com/nexus-mcp/nexus/internal/mcp"
)

// served is one generation of the programs a Server serves: what /call
// and /discover read, and /metrics' names for the tools. Reload replaces
// it whole.
type served struct {
	programs []*program
	byModule map[string]*program
	owners   map[string]toolOwner
	// catalog holds the programs' resources and prompts.
	catalog *mcp.Catalog
}

// build prepares programs to be served (see prepare), their calls counted
// for /metrics when it is on.
func (s *Server) build(programs []Program) (served, error) {
	progs, err := prepare(programs, s.slots)
	if err != nil {
		return served{}, err
	}
	if err := s.checkToolScopes(progs); err != nil {
		return served{}, err
	}
	st := served{programs: progs, byModule: map[string]*program{}, owners: toolOwners(progs)}
	cps := make([]mcp.CatalogProgram, len(progs))
	for i, p := range progs {
		cps[i] = mcp.CatalogProgram{Manifest: p.Manifest, Tools: p.Tools}
		if len(progs) > 1 {
			cps[i].Prefix = p.name + ToolSeparator
		}
	}
	if st.catalog, err = mcp.NewCatalog(cps); err != nil {
		return served{}, err
	}
	for _, p := range progs {
		if m := s.cfg.Metrics; m != nil {
			p.Caller = countingCaller{next: p.Caller, program: p.name, metrics: m}
		}
		st.byModule[p.name] = p
	}
	return st, nil
}

// info is MCP's serverInfo: Config.Info, or the program's own name and
// version when one program is served.
func (s *Server) info(st served) mcp.Implementation {
	if s.cfg.Info.Name != "" {
		return s.cfg.Info
	}
	if len(st.programs) == 1 {
		return mcp.Implementation{Name: st.programs[0].name, Version: st.programs[0].Manifest.Version()}
	}
	return mcp.Implementation{Name: "nexus", Version: "0.0.0"}
}

// Reload serves programs in place of the current ones (hot reload, issue
// 12 §4), named info (as Config.Info). Requests from now on reach the new
// programs, over MCP and /call alike; requests in flight finish on the old
// ones. Every handshake-era session is sent notifications/tools/list_changed
// on its GET stream, or else on the SSE stream of one of its calls in flight
// (never on both: Streamable HTTP sends a message on one stream only);
// stateless clients see the new tools at their next tools/list. The
// channel returned closes once no request uses the old programs, when
// their pools may be stopped. Programs that cannot be served (no name, two
// alike) are refused and the old ones stay.
func (s *Server) Reload(info mcp.Implementation, programs []Program) (<-chan struct{}, error) {
	st, err := s.build(programs)
	if err != nil {
		return nil, err
	}
	if info.Name == "" {
		info = s.info(st)
	}
	old := s.served.Swap(st)
	s.useToolScopes(st)
	mcpDrained := s.mcp.SetSurface(s.surface(info, st))
	s.sessions.toolsChanged()
	drained := make(chan struct{})
	go func() {
		<-old.Drained()
		<-mcpDrained
		close(drained)
	}()
	return drained, nil
}

// toolsChanged tells every initialized session that the tool list changed.
func (st *sessionStore) toolsChanged() {
	st.mu.Lock()
	live := make([]*session, 0, len(st.byID))
	for _, s := range st.byID {
		live = append(live, s)
	}
	st.mu.Unlock()
	for _, s := range live {
		if !s.mcp.Initialized() {
			continue
		}
		n := mcp.ToolsChangedNotification()
		if s.listening.Load() {
			s.notify(n)
		} else if stream := s.openStream(); stream != nil {
			stream(n)
		}
	}
}

// openStream returns the notify of one of the session's calls whose reply
// may be an SSE stream, nil when none runs.
func (s *session) openStream() func(*mcp.Notification) {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	for _, n := range s.streams {
		if n != nil {
			return n
		}
	}
	return nil
}

// addStream records a call in flight whose reply may be an SSE stream,
// through which a session notification can reach a client without a GET
// stream; dropStream with the slot returned forgets it.
func (s *session) addStream(notify func(*mcp.Notification)) int {
	s.streamsMu.Lock()
	i := len(s.streams)
	for j, n := range s.streams {
		if n == nil {
			i = j
			break
		}
	}
	if i == len(s.streams) {
		s.streams = append(s.streams, notify)
	} else {
		s.streams[i] = notify
	}
	s.streamsMu.Unlock()
	return i
}

func (s *session) dropStream(slot int) {
	s.streamsMu.Lock()
	s.streams[slot] = nil
	for len(s.streams) > 0 && s.streams[len(s.streams)-1] == nil {
		s.streams = s.streams[:len(s.streams)-1]
	}
	s.streamsMu.Unlock()
}

// surface is what MCP serves of a generation of programs.
func (s *Server) surface(info mcp.Implementation, st served) mcp.Surface {
	return mcp.Surface{Info: info, Tools: allTools(st.programs), Caller: newRoutingCaller(st.programs), Catalog: st.catalog}
}
