package httpserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/auth"
	"github.com/nexus-mcp/nexus/internal/auth/authtest"
)

// signInServer serves shapes behind an issuer whose client "page" the
// page signs in as (every request needs scope mcp, shout also
// lab:shout), prepared as Serve prepares it, at the test server's URL.
func signInServer(t *testing.T, cfg Config, registration bool) (*authtest.Issuer, *httptest.Server, *fakeCaller, *authtest.Clock) {
	t.Helper()
	is := authtest.NewIssuer(t)
	is.Registration(registration)
	clk := authtest.NewClock()
	ac := auth.Config{Issuer: is.URL, Scopes: []string{"mcp"}, ToolScopes: map[string][]string{"shout": {"lab:shout"}}, Logger: quietLogger(), Now: clk.Now}
	if !registration {
		ac.PageClientID, ac.PageClientSecret = "page", "page-secret"
	}
	rs, err := auth.New(context.Background(), ac)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OAuth = rs
	s, ts, fc := newTestServer(t, cfg)
	is.AddClient(authtest.Client{ID: "page", Secret: "page-secret", RedirectURI: ts.URL + pathCallback})
	rs.SetDefaultAudience(ts.URL + "/mcp")
	s.prepareSignIn(context.Background(), ts.URL+"/mcp")
	return is, ts, fc, clk
}

// browser sends requests as a browser would, without following redirects,
// keeping the cookies the server sets.
type browser struct {
	t       *testing.T
	ts      *httptest.Server
	client  *http.Client
	cookies map[string]*http.Cookie
}

func newBrowser(t *testing.T, ts *httptest.Server) *browser {
	c := *ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{t: t, ts: ts, client: &c, cookies: map[string]*http.Cookie{}}
}

// send makes a request of target (a path of ts, or a URL), with the
// browser's cookies and headers.
func (b *browser) send(method, target, body string, headers ...string) (*http.Response, string) {
	b.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.ts.URL + target
	}
	req := request(b.t, method, target, body, headers...)
	if strings.HasPrefix(target, b.ts.URL) {
		for _, c := range b.cookies {
			req.AddCookie(c)
		}
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	text := readBody(b.t, resp)
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return resp, text
}

// navigate is a person opening target in the address bar.
func (b *browser) navigate(target string) (*http.Response, string) {
	return b.send(http.MethodGet, target, "", "Accept", "text/html,application/xhtml+xml", "Sec-Fetch-Site", "none", "Sec-Fetch-Mode", "navigate")
}

// fromPage is the page's own fetch to /mcp.
func (b *browser) fromPage(body string, headers ...string) (*http.Response, string) {
	h := append([]string{"Origin", b.ts.URL, "Sec-Fetch-Site", "same-origin", "Accept", mcpAccept}, headers...)
	return b.send(http.MethodPost, "/mcp", body, append(h, routedHeaders(body)...)...)
}

// routedHeaders are the 2026-07-28 routing headers of a stateless body.
func routedHeaders(body string) []string {
	for _, m := range []string{"tools/call", "tools/list"} {
		if strings.Contains(body, `"method":"`+m+`"`) {
			name := ""
			if m == "tools/call" {
				_, rest, _ := strings.Cut(body, `"name":"`)
				name, _, _ = strings.Cut(rest, `"`)
			}
			return routed(m, name, nil)
		}
	}
	return nil
}

// signIn goes from the page to the issuer and back; it returns the
// callback's answer.
func (b *browser) signIn() (*http.Response, string) {
	b.t.Helper()
	resp, _ := b.navigate("/")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "oauth/login" {
		b.t.Fatalf("GET / without a session: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = b.navigate("/oauth/login")
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("/oauth/login: %d", resp.StatusCode)
	}
	resp, _ = b.navigate(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("the issuer: %d", resp.StatusCode)
	}
	return b.navigate(resp.Header.Get("Location"))
}

// A browser without credentials is sent from the page to the issuer and
// back; the callback sets a strict, HttpOnly session cookie; the page's
// own requests then reach the tools its token covers, as its subject.
func TestPageSignInFlow(t *testing.T) {
	is, ts, fc, _ := signInServer(t, Config{}, false)
	b := newBrowser(t, ts)

	if resp, body := b.send(http.MethodGet, "/", ""); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("GET / by a non-browser: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	resp, _ := b.navigate("/oauth/login")
	login := resp.Cookies()
	au, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(au.String(), is.URL+"/authorize?") ||
		au.Query().Get("redirect_uri") != ts.URL+pathCallback || au.Query().Get("resource") != ts.URL+"/mcp" {
		t.Fatalf("/oauth/login: %d, to %s", resp.StatusCode, au)
	}
	if len(login) != 1 || login[0].Name != loginCookie || !login[0].HttpOnly || login[0].SameSite != http.SameSiteLaxMode || login[0].Secure || login[0].Path != "/" {
		t.Errorf("the login cookie: %+v", login)
	}

	resp, body := b.signIn()
	if resp.StatusCode != 200 || !strings.Contains(body, `<meta http-equiv="refresh" content="0; url=`+ts.URL+`/">`) {
		t.Fatalf("the callback: %d %s", resp.StatusCode, body)
	}
	var sess *http.Cookie
	for _, c := range resp.Cookies() {
		switch {
		case c.Name == sessionCookie:
			sess = c
		case c.Name == loginCookie && c.MaxAge >= 0:
			t.Errorf("the login cookie outlives its sign-in: %+v", c)
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Secure || sess.Path != "/" || len(sess.Value) < 43 {
		t.Fatalf("the session cookie: %+v", sess)
	}
	if d := time.Until(sess.Expires); d < 4*time.Minute || d > 5*time.Minute+2*time.Second {
		t.Errorf("the session cookie expires in %v, want the token's 5 minutes", d)
	}
	if strings.Contains(body, sess.Value) {
		t.Error("the callback's page shows the session id")
	}

	if resp, _ := b.navigate("/"); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("the page, signed in: %d", resp.StatusCode)
	}
	resp, list := b.fromPage(statelessBody(1, "tools/list", ""))
	if resp.StatusCode != 200 || !strings.Contains(list, `"name":"addInt"`) || strings.Contains(list, `"name":"shout"`) {
		t.Errorf("tools/list from the page (mcp, not lab:shout): %d %s", resp.StatusCode, list)
	}
	if resp, got := b.fromPage(statelessBody(2, "tools/call", `"name":"addInt","arguments":{"_1":41}`)); resp.StatusCode != 200 || !strings.Contains(got, `"text":"42"`) {
		t.Errorf("addInt from the page: %d %s", resp.StatusCode, got)
	}

	// The session's subject is the token's: alice's bearer token reaches
	// the MCP session the page opened, bob's does not.
	resp, _ = b.fromPage(initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	listIn := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	if resp := post(t, ts, "/mcp", listIn, append([]string{"Mcp-Session-Id", sid}, bearer(is.Mint(t, is.Claims("alice", ts.URL+"/mcp", "mcp")))...)...); resp.StatusCode != 200 {
		t.Errorf("alice's token in the page's session: %d", resp.StatusCode)
	}
	if resp := post(t, ts, "/mcp", listIn, append([]string{"Mcp-Session-Id", sid}, bearer(is.Mint(t, is.Claims("bob", ts.URL+"/mcp", "mcp")))...)...); resp.StatusCode != 404 {
		t.Errorf("bob's token in alice's page session: %d", resp.StatusCode)
	}

	// Signed out: the cookie is cleared and no longer counts.
	calls := fc.callCount()
	stale := *sess
	if resp, body := b.send(http.MethodPost, "/oauth/logout", "", "Origin", ts.URL, "Sec-Fetch-Site", "same-origin"); resp.StatusCode != 200 || !strings.Contains(body, "signed out") {
		t.Errorf("sign-out: %d %s", resp.StatusCode, body)
	}
	if _, kept := b.cookies[sessionCookie]; kept {
		t.Error("sign-out left the cookie")
	}
	b.cookies[sessionCookie] = &stale
	resp, body = b.fromPage(statelessBody(4, "tools/call", `"name":"addInt","arguments":{"_1":1}`))
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("the old cookie after sign-out: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	if n := fc.callCount() - calls; n != 0 {
		t.Errorf("%d calls after sign-out reached the pool", n)
	}
}

// The cookie counts only on requests of the server's own page: another
// origin (even a loopback one, which the guard lets through), a
// cross-site or same-site fetch, or one without Origin is refused, and
// reaches no pool. An expired or unknown session is a 401, and a
// navigation to the page goes to sign in again.
func TestPageSessionRules(t *testing.T) {
	_, ts, fc, clk := signInServer(t, Config{}, false)
	b := newBrowser(t, ts)
	if resp, _ := b.signIn(); resp.StatusCode != 200 {
		t.Fatal("no sign-in")
	}
	call := statelessBody(1, "tools/call", `"name":"addInt","arguments":{"_1":1}`)
	calls := fc.callCount()
	for _, c := range []struct {
		name    string
		headers []string
	}{
		{"another loopback origin", []string{"Origin", "http://127.0.0.1:1", "Sec-Fetch-Site", "same-site"}},
		{"another origin, claiming same-origin", []string{"Origin", "http://localhost:1", "Sec-Fetch-Site", "same-origin"}},
		{"own origin, cross-site", []string{"Origin", ts.URL, "Sec-Fetch-Site", "cross-site"}},
		{"own origin, same-site", []string{"Origin", ts.URL, "Sec-Fetch-Site", "same-site"}},
		{"no Origin", []string{"Sec-Fetch-Site", "same-origin"}},
		{"null Origin", []string{"Origin", "null"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := b.send(http.MethodPost, "/mcp", call, append(c.headers, append([]string{"Accept", mcpAccept}, routedHeaders(call)...)...)...)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
		})
	}
	if n := fc.callCount() - calls; n != 0 {
		t.Errorf("%d cross-origin calls reached the pool", n)
	}
	if resp, body := b.send(http.MethodGet, "/", "", "Accept", "text/html", "Sec-Fetch-Site", "cross-site"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the page navigated to from another site, with the cookie: %d %s", resp.StatusCode, body)
	}
	if resp, _ := b.fromPage(call); resp.StatusCode != 200 {
		t.Fatalf("the page's own request: %d", resp.StatusCode)
	}

	good := *b.cookies[sessionCookie]
	b.cookies[sessionCookie] = &http.Cookie{Name: sessionCookie, Value: strings.Repeat("A", 43)}
	if resp, _ := b.fromPage(call); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown session: %d", resp.StatusCode)
	}
	b.cookies[sessionCookie] = &good
	clk.Add(6 * time.Minute)
	if resp, _ := b.navigate("/"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "oauth/login" {
		t.Errorf("the page on an expired session: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, kept := b.cookies[sessionCookie]; kept {
		t.Error("an expired session's cookie is not cleared")
	}
	b.cookies[sessionCookie] = &good
	if resp, _ := b.fromPage(call); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("the page's call on an expired session: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// The callback refuses what is not a sign-in this browser began: no login
// cookie, a wrong state, a used one, the issuer's own refusal.
func TestPageCallbackRefusals(t *testing.T) {
	is, ts, _, _ := signInServer(t, Config{}, false)
	b := newBrowser(t, ts)
	resp, _ := b.navigate("/oauth/login")
	resp, _ = b.navigate(resp.Header.Get("Location"))
	back := resp.Header.Get("Location")
	u, _ := url.Parse(back)
	code := u.Query().Get("code")

	stranger := newBrowser(t, ts)
	if resp, body := stranger.navigate(back); resp.StatusCode != 400 || !strings.Contains(body, "holds no sign-in") {
		t.Errorf("another browser at the callback: %d %s", resp.StatusCode, body)
	}
	n := is.Exchanges()
	if resp, body := b.navigate(pathCallback + "?" + url.Values{"code": {code}, "state": {"made-up"}}.Encode()); resp.StatusCode != 400 || !strings.Contains(body, "unknown") {
		t.Errorf("a wrong state: %d %s", resp.StatusCode, body)
	}
	if is.Exchanges() != n {
		t.Error("a wrong state exchanged its code")
	}
	// The wrong try cleared the login cookie; a new sign-in sets another.
	resp, _ = b.navigate("/oauth/login")
	resp, _ = b.navigate(resp.Header.Get("Location"))
	back = resp.Header.Get("Location")
	if resp, _ := b.navigate(back); resp.StatusCode != 200 {
		t.Fatalf("a good callback: %d", resp.StatusCode)
	}
	b.navigate("/oauth/login") // a login cookie again
	if resp, body := b.navigate(back); resp.StatusCode != 400 {
		t.Errorf("the same callback again: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.navigate(pathCallback + "?error=access_denied&error_description=the+user+said+no"); resp.StatusCode != 400 || !strings.Contains(body, "access_denied: the user said no") {
		t.Errorf("the issuer's refusal: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.navigate(pathCallback + "?error=%3Cscript%3E"); strings.Contains(body, "<script>") {
		t.Errorf("the callback echoes markup: %d %s", resp.StatusCode, body)
	}
	for path, allow := range map[string]string{pathLogin: "GET, HEAD", pathCallback: "GET", pathLogout: "GET, POST"} {
		if resp, body := b.send(http.MethodPut, path, ""); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != allow {
			t.Errorf("PUT %s: %d, Allow %q: %s", path, resp.StatusCode, resp.Header.Get("Allow"), body)
		}
	}
}

// Without --auth-page-client and without registration at the issuer, the
// page says what sign-in needs; with registration, nexus registers itself
// and signs in as that client.
func TestPageSignInClient(t *testing.T) {
	is := authtest.NewIssuer(t)
	rs, err := auth.New(context.Background(), auth.Config{Issuer: is.URL, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s, ts, _ := newTestServer(t, Config{OAuth: rs})
	rs.SetDefaultAudience(ts.URL + "/mcp")
	s.prepareSignIn(context.Background(), ts.URL+"/mcp")
	b := newBrowser(t, ts)
	if resp, _ := b.navigate("/"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("GET /: %d", resp.StatusCode)
	}
	if resp, body := b.navigate("/oauth/login"); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "needs --auth-page-client") || !strings.Contains(body, ts.URL+pathCallback) {
		t.Errorf("/oauth/login without a client: %d %s", resp.StatusCode, body)
	}

	is, ts, _, _ = signInServer(t, Config{}, true)
	if cl := is.Clients(); len(cl) != 2 || cl[0].RedirectURI != ts.URL+pathCallback && cl[1].RedirectURI != ts.URL+pathCallback {
		t.Fatalf("clients %+v", cl)
	}
	if resp, body := newBrowser(t, ts).signIn(); resp.StatusCode != 200 || !strings.Contains(body, "Signed in as alice") {
		t.Errorf("signing in as the registered client: %d %s", resp.StatusCode, body)
	}
}

// Over TLS the cookies are Secure and __Host- prefixed; a cookie of the
// plain name does not count there.
func TestPageSignInSecureCookies(t *testing.T) {
	is := authtest.NewIssuer(t)
	rs, err := auth.New(context.Background(), auth.Config{Issuer: is.URL, PageClientID: "page", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{OAuth: rs, Logger: quietLogger()}, []Program{loadProgram(t, "shapes", &fakeCaller{})})
	if err != nil {
		t.Fatal(err)
	}
	rs.SetDefaultAudience("https://127.0.0.1:9443/mcp")
	s.prepareSignIn(context.Background(), "https://127.0.0.1:9443/mcp")
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "https://127.0.0.1:9443/oauth/login", nil))
	c := w.Result().Cookies()
	if w.Code != http.StatusSeeOther || len(c) != 1 || c[0].Name != "__Host-"+loginCookie || !c[0].Secure || !c[0].HttpOnly {
		t.Errorf("over TLS: %d %+v", w.Code, c)
	}
	req := httptest.NewRequest(http.MethodPost, "https://127.0.0.1:9443/mcp", strings.NewReader(initBody))
	req.Header.Set("Origin", "https://127.0.0.1:9443")
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: strings.Repeat("A", 43)})
	w = httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized || strings.Contains(w.Header().Get("Set-Cookie"), sessionCookie) {
		t.Errorf("an unprefixed cookie over TLS: %d %q", w.Code, w.Header().Get("Set-Cookie"))
	}
}

// With an issuer, the page's own origin is accepted on a server reached
// by any name: every request there needs credentials.
func TestPageOriginWithIssuer(t *testing.T) {
	_, ts, _ := newOAuthServer(t, Config{Host: "0.0.0.0"})
	resp := do(t, ts, http.MethodPost, "/mcp", initBody, "Host", "lab.example:9000", "Origin", "http://lab.example:9000")
	if body := readBody(t, resp); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("own origin, no token: %d %s, want 401", resp.StatusCode, body)
	}
	resp = do(t, ts, http.MethodPost, "/mcp", initBody, "Host", "lab.example:9000", "Origin", "http://evil.example:9000")
	if body := readBody(t, resp); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another origin: %d %s, want 403", resp.StatusCode, body)
	}
}

// publicBase is where the page is for the redirect URI: the audience's
// URL without /mcp (behind a proxy), else the server's own.
func TestPublicBase(t *testing.T) {
	for _, c := range []struct{ audience, own, want string }{
		{"", "http://127.0.0.1:9000/mcp", "http://127.0.0.1:9000"},
		{"https://nexus.example.org/mcp", "http://127.0.0.1:9000/mcp", "https://nexus.example.org"},
		{"https://host.example/lab/mcp", "http://127.0.0.1:9000/mcp", "https://host.example/lab"},
		{"https://nexus.example.org/", "http://127.0.0.1:9000/mcp", "https://nexus.example.org"},
		{"api://nexus", "https://lab:9443/mcp", "https://lab:9443"},
	} {
		if got := publicBase(c.audience, c.own); got != c.want {
			t.Errorf("publicBase(%q, %q) = %q, want %q", c.audience, c.own, got, c.want)
		}
	}
}
