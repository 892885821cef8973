package httpserve

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nexus-mcp/nexus/internal/auth"
)

// The browser page's sign-in through the issuer (docs/auth.md, "The
// browser page"), as a backend for frontend: a browser that navigates to
// / without credentials is sent to /oauth/login, which starts the
// authorization code flow (auth.PageSignIn); /oauth/callback finishes it
// and gives the browser a cookie naming a server-side session that holds
// the token. The page's own requests then carry the cookie; the token
// never reaches its JavaScript. The cookie counts only on requests from
// the page itself (Origin, Sec-Fetch-Site), so it opens no CSRF hole.

const (
	pathLogin    = "/oauth/login"
	pathCallback = "/oauth/callback"
	pathLogout   = "/oauth/logout"
	// sessionCookie names a signed-in browser's session (SameSite=Strict);
	// loginCookie binds a sign-in under way to the browser that began it
	// (SameSite=Lax: the issuer's redirect back is a cross-site navigation,
	// on which a strict cookie is not sent).
	sessionCookie = "nexus-session"
	loginCookie   = "nexus-login"
)

// pageSignIn is the page's sign-in as this server serves it.
type pageSignIn struct {
	p *auth.PageSignIn
	// base is the page's public URL without the trailing slash (the
	// audience's, else the server's own), set before serving.
	base atomic.Pointer[string]
}

func isSignInPath(p string) bool { return p == pathLogin || p == pathCallback || p == pathLogout }

// routeSignIn serves /oauth/login, /oauth/callback and /oauth/logout.
func (s *Server) routeSignIn(mux *http.ServeMux) {
	s.signin = &pageSignIn{p: s.cfg.OAuth.Page()}
	mux.HandleFunc(pathLogin, s.serveLogin)
	mux.HandleFunc(pathCallback, s.serveCallback)
	mux.HandleFunc(pathLogout, s.serveLogout)
}

// prepareSignIn readies the page's sign-in once the server's /mcp URL is
// known: the redirect URI, and a registered client when nexus was given
// none. Sign-in that cannot work is logged, and the page says why.
func (s *Server) prepareSignIn(ctx context.Context, mcpURL string) {
	if s.signin == nil {
		return
	}
	base := publicBase(s.cfg.OAuth.Audience(), mcpURL)
	s.signin.base.Store(&base)
	if err := s.signin.p.Prepare(ctx, base); err != nil {
		s.log.Info("auth: the browser page cannot sign people in", "why", err.Error())
		return
	}
	s.log.Info("auth: the browser page signs people in through the issuer", "client_id", s.signin.p.ClientID(), "redirect_uri", s.signin.p.RedirectURI())
}

// publicBase is the page's URL (without the trailing slash) from the
// audience when it is the http(s) URL of /mcp, as behind a proxy, else
// from the server's own /mcp URL.
func publicBase(audience, mcpURL string) string {
	for _, at := range []string{audience, mcpURL} {
		u, err := url.Parse(at)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		p := strings.TrimSuffix(strings.TrimSuffix(u.EscapedPath(), "/"), "/mcp")
		return u.Scheme + "://" + u.Host + p
	}
	return strings.TrimSuffix(mcpURL, "/mcp")
}

func (ps *pageSignIn) baseURL() string {
	if b := ps.base.Load(); b != nil {
		return *b
	}
	return ""
}

// secure says whether cookies get Secure (and the __Host- prefix, which
// also pins them to this host and path /): over TLS, or when the public
// URL is https (TLS ends at a proxy).
func (ps *pageSignIn) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(ps.baseURL(), "https://")
}

func (ps *pageSignIn) cookieName(r *http.Request, name string) string {
	if ps.secure(r) {
		return "__Host-" + name
	}
	return name
}

// cookie is the value of r's cookie name; "" when it has none.
func (ps *pageSignIn) cookie(r *http.Request, name string) string {
	c, err := r.Cookie(ps.cookieName(r, name))
	if err != nil {
		return ""
	}
	return c.Value
}

// setCookie sets (or, with a zero expires, clears) a cookie the page's
// JavaScript cannot read.
func (ps *pageSignIn) setCookie(w http.ResponseWriter, r *http.Request, name, value string, expires time.Time, same http.SameSite) {
	c := &http.Cookie{Name: ps.cookieName(r, name), Value: value, Path: "/", HttpOnly: true, Secure: ps.secure(r), SameSite: same}
	if expires.IsZero() {
		c.MaxAge = -1
	} else {
		c.Expires = expires.UTC()
		c.MaxAge = max(1, int(time.Until(expires).Seconds()))
	}
	http.SetCookie(w, c)
}

// crossOrigin says why r may not use the session cookie, "" when it may:
// it must come from this server's own page. A fetch or form of the page
// sends its Origin (required, and it must be this server's) and, in
// today's browsers, Sec-Fetch-Site: same-origin. A navigation (GET of
// the page, or of sign-out) sends no Origin; then Sec-Fetch-Site may also
// be none (an address typed or bookmarked).
func (ps *pageSignIn) crossOrigin(r *http.Request, navigation bool) string {
	site, origin := r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin")
	switch {
	case site != "" && site != "same-origin" && !(navigation && site == "none"):
		return "the sign-in cookie is accepted only from this server's own page, not from a " + quoteHeader(site) + " request"
	case origin != "" && !ps.ownOrigin(r, origin):
		return "the sign-in cookie is accepted only from this server's own page, not from Origin " + quoteHeader(origin)
	case origin == "" && !navigation:
		return "the sign-in cookie is accepted only with the page's Origin"
	}
	return ""
}

// ownOrigin reports whether origin is this server's: the public URL's, or
// the one the request reached (scheme and Host).
func (ps *pageSignIn) ownOrigin(r *http.Request, origin string) bool {
	if u, err := url.Parse(ps.baseURL()); err == nil && u.Host != "" && strings.EqualFold(origin, u.Scheme+"://"+u.Host) {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(origin, scheme+"://"+r.Host)
}

// pageNavigation reports whether r is a browser navigating to the page.
func pageNavigation(r *http.Request) bool {
	return pageGet(r) && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// pageGet reports whether r gets the page.
func pageGet(r *http.Request) bool {
	return r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}

// toLogin sends a browser to sign in. The address is relative, so that it
// holds behind a proxy that serves nexus under a path.
func toLogin(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Location", strings.TrimPrefix(pathLogin, "/"))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusSeeOther)
}

// pageSession authenticates r by its session cookie: handled is false
// when r carries none (or an Authorization header, which wins), else the
// request is refused (false) or goes on as the session's identity.
func (g *guard) pageSession(w http.ResponseWriter, r *http.Request) (next *http.Request, handled, ok bool) {
	ps := g.signin
	if ps == nil || len(r.Header.Values("Authorization")) > 0 {
		return r, false, false
	}
	sid := ps.cookie(r, sessionCookie)
	if sid == "" {
		return r, false, false
	}
	if why := ps.crossOrigin(r, pageGet(r)); why != "" {
		g.refused(r, http.StatusForbidden, "cross_origin", why, "")
		g.onFault(w, r, http.StatusForbidden, "forbidden: "+why)
		return nil, true, false
	}
	id, ref := ps.p.Session(r.Context(), sid)
	if ref != nil {
		ps.setCookie(w, r, sessionCookie, "", time.Time{}, http.SameSiteStrictMode)
		if pageNavigation(r) {
			g.refused(r, ref.Status, ref.Reason, ref.Description, ref.Subject)
			toLogin(w)
			return nil, true, false
		}
		g.refuse(w, r, ref) // resource_metadata: the page knows to sign in again
		return nil, true, false
	}
	g.metrics.AuthAccepted(id.Subject)
	g.log.Debug("auth", "path", r.URL.Path, "subject", id.Subject, "client", id.ClientID, "via", "page session")
	return r.WithContext(auth.WithIdentity(r.Context(), id)), true, true
}

// refuse answers a refusal with its challenge, counted and logged.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, ref *auth.Refusal) {
	g.refused(r, ref.Status, ref.Reason, ref.Description, ref.Subject)
	g.oauth.Challenge(w, r, ref)
	g.onFault(w, r, ref.Status, http.StatusText(ref.Status)+": "+ref.Description)
}

// refused counts and logs a refusal (never a token or a cookie).
func (g *guard) refused(r *http.Request, status int, reason, why, subject string) {
	g.metrics.AuthRefused(reason)
	g.log.Info("auth: refused", "path", r.URL.Path, "status", status, "reason", reason, "why", why, "subject", subject)
}

// serveLogin starts a sign-in: a cookie binding it to this browser, and a
// redirect to the issuer.
func (s *Server) serveLogin(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	ps := s.signin
	authURL, binding, err := ps.p.Begin(r.Context())
	if err != nil {
		s.log.Info("auth: the page's sign-in cannot start", "why", err.Error())
		signInPage(w, http.StatusServiceUnavailable, signInText{Title: "Sign-in is not available", Message: err.Error()})
		return
	}
	ps.setCookie(w, r, loginCookie, binding, time.Now().Add(auth.LoginTTL), http.SameSiteLaxMode)
	h := w.Header()
	h.Set("Location", authURL)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusSeeOther)
}

// serveCallback finishes a sign-in: the state checked against this
// browser's login cookie, the code exchanged and its token verified
// (auth.PageSignIn.Complete); the session's cookie is set and the browser
// goes on to the page.
func (s *Server) serveCallback(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, http.MethodGet) {
		return
	}
	ps := s.signin
	again := signInText{Link: "login", LinkText: "Sign in again"}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		again.Title, again.Message = "The issuer did not sign you in", strings.TrimSpace(e+": "+q.Get("error_description"))
		signInPage(w, http.StatusBadRequest, again)
		return
	}
	binding := ps.cookie(r, loginCookie)
	if binding == "" {
		again.Title = "No sign-in under way in this browser"
		again.Message = fmt.Sprintf("This browser holds no sign-in to finish: it began over %d minutes ago, at another address than %s/, or cookies are off.", int(auth.LoginTTL.Minutes()), ps.baseURL())
		signInPage(w, http.StatusBadRequest, again)
		return
	}
	ps.setCookie(w, r, loginCookie, "", time.Time{}, http.SameSiteLaxMode)
	sess, ref := ps.p.Complete(r.Context(), q.Get("state"), binding, q.Get("code"))
	if ref != nil {
		s.cfg.Metrics.AuthRefused(ref.Reason)
		s.log.Info("auth: page sign-in refused", "status", ref.Status, "reason", ref.Reason, "why", ref.Description, "subject", ref.Subject)
		again.Title, again.Message = "Sign-in failed", ref.Description
		signInPage(w, ref.Status, again)
		return
	}
	s.log.Info("auth: signed in to the page", "subject", sess.Identity.Subject, "until", sess.Expires.Format(time.RFC3339))
	ps.setCookie(w, r, sessionCookie, sess.ID, sess.Expires, http.SameSiteStrictMode)
	// A page that moves on, not a 303: the browser came here from the
	// issuer, and a redirect would still count as that cross-site
	// navigation, on which the strict cookie is not sent. The refresh is
	// a navigation of this origin's own.
	page := ps.baseURL() + "/"
	signInPage(w, http.StatusOK, signInText{Title: "Signed in", Message: "Signed in as " + sess.Identity.Subject + ".", Refresh: page, Link: page, LinkText: "Go on to the page"})
}

// serveLogout ends the browser's session and clears its cookie.
func (s *Server) serveLogout(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, http.MethodGet, http.MethodPost) {
		return
	}
	ps := s.signin
	if sid := ps.cookie(r, sessionCookie); sid != "" {
		if why := ps.crossOrigin(r, r.Method == http.MethodGet); why != "" {
			apiError(w, http.StatusForbidden, "forbidden: %s", why)
			return
		}
		ps.p.End(sid)
	}
	ps.setCookie(w, r, sessionCookie, "", time.Time{}, http.SameSiteStrictMode)
	signInPage(w, http.StatusOK, signInText{Title: "Signed out", Message: "You are signed out of this page.", Link: "login", LinkText: "Sign in again"})
}

// allowed answers 405 to a method not in methods and reports whether r's is.
func allowed(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	if slices.Contains(methods, r.Method) {
		return true
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	apiError(w, http.StatusMethodNotAllowed, "method %s not allowed on %s (use %s)", r.Method, r.URL.Path, strings.Join(methods, " or "))
	return false
}

// signInText is what a sign-in page says.
type signInText struct {
	Title, Message string
	Refresh        string // where the page moves on to at once, if anywhere
	Link, LinkText string
}

var signInTemplate = template.Must(template.New("signin").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
{{if .Refresh}}<meta http-equiv="refresh" content="0; url={{.Refresh}}">{{end}}<title>nexus: {{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em}</style></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p>{{if .Link}}<p><a href="{{.Link}}">{{.LinkText}}</a></p>{{end}}</body></html>
`))

// signInPage answers a person with a small page of its own (no script).
func signInPage(w http.ResponseWriter, status int, text signInText) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	signInTemplate.Execute(w, text)
}
