package httpserve

import (
	"net/http"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/auth"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
)

// Credentials and identity (docs/auth.md). The guard checks a request's
// credentials, the static token or with Config.OAuth an access token, and
// hands on the Identity they stand for in the request's context. From
// there: sessions and tasks belong to the identity's owner (its subject,
// never a token), and with OAuth each tool needs the scopes its rules say
// (mcp.Access), over MCP and /call alike.

// authenticate checks r's credentials and returns r carrying its identity,
// or answers the refusal and returns false. The protected-resource
// metadata and the page's sign-in are open to all: they are how a client
// and a person learn where to sign in. With OAuth, the browser page's
// session cookie (signin.go) stands for a token; a browser navigating to
// the page without one is sent to sign in.
func (g *guard) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if rs := g.oauth; rs != nil {
		if strings.HasPrefix(r.URL.Path, auth.MetadataPrefix) || isSignInPath(r.URL.Path) {
			return r, true
		}
		if next, handled, ok := g.pageSession(w, r); handled {
			return next, ok
		}
		id, ref := rs.Authenticate(r)
		if ref != nil && ref.Reason == "missing" && pageNavigation(r) {
			toLogin(w)
			return nil, false
		}
		if ref != nil {
			g.refuse(w, r, ref)
			return nil, false
		}
		g.metrics.AuthAccepted(id.Subject)
		g.log.Debug("auth", "path", r.URL.Path, "subject", id.Subject, "client", id.ClientID)
		return r.WithContext(auth.WithIdentity(r.Context(), id)), true
	}
	if g.tokenHash == nil {
		return r, true
	}
	if !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="nexus"`)
		g.onFault(w, r, http.StatusUnauthorized, "unauthorized: this server needs \"Authorization: Bearer <token>\"")
		return nil, false
	}
	return r.WithContext(auth.WithIdentity(r.Context(), auth.StaticToken)), true
}

// routeOAuth serves the protected-resource metadata (RFC 9728) at the
// well-known paths auth.Resource answers to.
func (s *Server) routeOAuth(mux *http.ServeMux) {
	rs := s.cfg.OAuth
	if rs == nil {
		return
	}
	serve := func(w http.ResponseWriter, r *http.Request) {
		if !rs.IsMetadataPath(r.URL.Path) {
			apiError(w, http.StatusNotFound, "not found: %s (this server's metadata is at %s/mcp)", r.URL.Path, auth.MetadataPrefix)
			return
		}
		rs.ServeMetadata(w, r)
	}
	mux.HandleFunc(auth.MetadataPrefix, serve)
	mux.HandleFunc(auth.MetadataPrefix+"/", serve)
	s.routeSignIn(mux)
}

// ownerOf names who owns what r starts: its identity's owner; "" without
// credentials (a loopback server without a token).
func ownerOf(r *http.Request) string { return auth.FromContext(r.Context()).Owner() }

// withIdentity readies an MCP request: its stateless tasks belong to its
// owner, and with OAuth it may use only the tools its scopes cover.
func (s *Server) withIdentity(r *http.Request) *http.Request {
	id := auth.FromContext(r.Context())
	if id == nil {
		return r
	}
	ctx := mcp.WithTaskOwner(r.Context(), id.Owner())
	if s.cfg.OAuth != nil {
		ctx = mcp.WithAccess(ctx, toolAccess{id: id, rs: s.cfg.OAuth})
	}
	return r.WithContext(ctx)
}

// ownsSession reports whether r may use sess: the identity that opened it,
// whatever token it holds now (a refreshed one of the same subject).
func ownsSession(r *http.Request, sess *session) bool { return sess.owner == ownerOf(r) }

// toolAccess is mcp.Access for one identity: a tool needs the server's
// scopes and its own.
type toolAccess struct {
	id *auth.Identity
	rs *auth.Resource
}

func (a toolAccess) Check(t *argmap.Tool) ([]string, bool) {
	need := a.rs.Scopes()
	if extra := a.rs.ToolScopes(t.Name, t.Command); len(extra) > 0 {
		need = slices.Concat(need, extra)
	}
	return need, a.id.Missing(need) == nil
}

// access is r's mcp.Access; nil without OAuth.
func (s *Server) access(r *http.Request) mcp.Access {
	id := auth.FromContext(r.Context())
	if s.cfg.OAuth == nil || id == nil {
		return nil
	}
	return toolAccess{id: id, rs: s.cfg.OAuth}
}

// scopeRefused turns mcp's insufficient-scope error into HTTP's: 403 with
// an insufficient_scope challenge naming the scopes, so that a client can
// ask for them and retry (MCP authorization, "Scope Challenge Handling").
// It returns 0 for any other reply.
func (s *Server) scopeRefused(w http.ResponseWriter, r *http.Request, resp *mcp.Response) int {
	if resp == nil || resp.Error == nil || resp.Error.Code != mcp.CodeInsufficientScope || s.cfg.OAuth == nil {
		return 0
	}
	data, _ := resp.Error.Data.(*mcp.InsufficientScope)
	if data == nil {
		return 0
	}
	ref := auth.InsufficientScope(auth.FromContext(r.Context()), data.Scope, resp.Error.Message)
	s.cfg.OAuth.Challenge(w, r, ref)
	s.cfg.Metrics.AuthRefused("scope")
	s.log.Info("auth: refused", "path", r.URL.Path, "status", http.StatusForbidden, "reason", "scope", "why", resp.Error.Message, "subject", ref.Subject)
	return http.StatusForbidden
}

// scopeStatus is a finish for respond: 403 for a scope refusal, else 200.
func (s *Server) scopeStatus(w http.ResponseWriter, r *http.Request) func(*mcp.Response) int {
	return func(resp *mcp.Response) int {
		if st := s.scopeRefused(w, r, resp); st != 0 {
			return st
		}
		return http.StatusOK
	}
}

// permitCall refuses a /call of a tool r's scopes do not cover (403 with
// the challenge) and reports whether the call may go on.
func (s *Server) permitCall(w http.ResponseWriter, r *http.Request, tool *argmap.Tool) bool {
	a := s.access(r)
	if a == nil {
		return true
	}
	need, ok := a.Check(tool)
	if ok {
		return true
	}
	msg := "insufficient scope: command '" + tool.Command.Name + "' needs scope '" + strings.Join(need, " ") + "'"
	ref := auth.InsufficientScope(auth.FromContext(r.Context()), need, msg)
	s.cfg.OAuth.Challenge(w, r, ref)
	s.cfg.Metrics.AuthRefused("scope")
	s.log.Info("auth: refused", "path", r.URL.Path, "status", http.StatusForbidden, "reason", "scope", "why", msg, "subject", ref.Subject)
	apiError(w, http.StatusForbidden, "%s", msg)
	return false
}

// visibleTool reports whether r may see tool (GET /discover).
func (s *Server) visibleTool(r *http.Request) func(*argmap.Tool) bool {
	a := s.access(r)
	return func(t *argmap.Tool) bool {
		if a == nil {
			return true
		}
		_, ok := a.Check(t)
		return ok
	}
}

// checkToolScopes checks the programs' tools against the scope rules
// (readable metadata scopes, no --auth-tool-scope for a tool not served).
func (s *Server) checkToolScopes(programs []*program) error {
	if s.cfg.OAuth == nil {
		return nil
	}
	return s.cfg.OAuth.CheckTools(toolCommands(programs))
}

// useToolScopes publishes the scopes of the programs' tools in the
// metadata's scopes_supported.
func (s *Server) useToolScopes(st served) {
	if s.cfg.OAuth != nil {
		s.cfg.OAuth.SetTools(toolCommands(st.programs))
	}
}

func toolCommands(programs []*program) map[string]*manifest.Command {
	out := map[string]*manifest.Command{}
	for _, p := range programs {
		for _, t := range p.Tools {
			out[t.Name] = t.Command
		}
	}
	return out
}
