package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// signInRun is what e2e/views/signin.mjs prints.
type signInRun struct {
	Navigations []struct {
		URL    string `json:"url"`
		Status int    `json:"status"`
	} `json:"navigations"`
	LoginAt, ConsentAt, LandedAt string
	DocumentCookie               string `json:"documentCookie"`
	Cookies                      []struct {
		Name     string  `json:"name"`
		HTTPOnly bool    `json:"httpOnly"`
		SameSite string  `json:"sameSite"`
		Secure   bool    `json:"secure"`
		Path     string  `json:"path"`
		Expires  float64 `json:"expires"`
	} `json:"cookies"`
	Tools             []string    `json:"tools"`
	Series            *pageResult `json:"series"`
	CrossOrigin       string      `json:"crossOrigin"`
	SecondNavigations []struct {
		URL    string
		Status int
	} `json:"secondNavigations"`
	SecondAt        string `json:"secondAt"`
	SecondLoginForm bool   `json:"secondLoginForm"`
	Fault           string `json:"fault"`
	browserWatch
}

// nexus serve --auth-issuer against oidc-provider, in headless Chromium: a
// person who opens the page is sent to the issuer's sign-in, signs in and
// consents, and lands back on the page, which lists the tools the token
// covers and runs one; the session's cookie is HttpOnly and strict, a page
// of another origin cannot spend it, and a browser without it is sent to
// sign in. nexus registered its own client (the issuer allows it). The
// signed-in page's screenshot is left in e2e/views/artefacts.
func TestBrowserPageSignIn(t *testing.T) {
	node := requireBrowser(t)
	is := startIssuer(t)
	srv := startHTTP(t, nil, "serve", "--port", "0", "--auth-issuer", is.url, "--auth-scopes", "mcp",
		"--auth-tool-scope", "grid=lab:admin", program("views"))
	var run signInRun
	runNode(t, node, &run, "signin.mjs", srv.base, is.url, artefacts(t), "alice")
	if run.Fault != "" {
		t.Fatalf("signin.mjs: %s\nnavigations %+v", run.Fault, run.Navigations)
	}
	run.check(t, "the page")

	// The way there and back: / → /oauth/login → the issuer → its forms →
	// /oauth/callback → /.
	var way []string
	for _, n := range run.Navigations {
		way = append(way, n.URL+" "+http.StatusText(n.Status))
	}
	steps := []string{srv.base + "/ See Other", srv.base + "/oauth/login See Other", is.url + "/auth?", srv.base + "/oauth/callback?", srv.base + "/ OK"}
	at := 0
	for _, w := range way {
		if at < len(steps) && strings.HasPrefix(w, strings.TrimSuffix(steps[at], "?")) {
			at++
		}
	}
	if at != len(steps) {
		t.Errorf("the navigations %q lack %q (in this order: %q)", way, steps[at], steps)
	}
	if !strings.HasPrefix(run.LoginAt, is.url+"/interaction/") || !strings.HasPrefix(run.ConsentAt, is.url+"/interaction/") || run.LandedAt != srv.base+"/" {
		t.Errorf("signed in at %s, consented at %s, landed at %s", run.LoginAt, run.ConsentAt, run.LandedAt)
	}
	if !strings.Contains(srv.stderr.String(), "registered the page's client") {
		t.Error("nexus did not register its client at start")
	}

	// The token never reaches the page's JavaScript: the cookie is HttpOnly,
	// strict, and names only a session.
	if strings.Contains(run.DocumentCookie, "nexus-session") {
		t.Errorf("the page's JavaScript reads the cookie: %q", run.DocumentCookie)
	}
	found := false
	for _, c := range run.Cookies {
		if c.Name != "nexus-session" {
			continue
		}
		found = true
		left := time.Until(time.Unix(int64(c.Expires), 0))
		if !c.HTTPOnly || c.SameSite != "Strict" || c.Path != "/" || c.Secure || left < 4*time.Minute || left > 5*time.Minute+5*time.Second {
			t.Errorf("the session cookie %+v (expires in %v; the token lasts 5 minutes)", c, left)
		}
	}
	if !found {
		t.Errorf("no session cookie in %+v", run.Cookies)
	}

	// Per-tool scopes hold: grid needs lab:admin, which the page did not ask for.
	if slices.Contains(run.Tools, "tool:grid") || !slices.Contains(run.Tools, "tool:series") {
		t.Errorf("the page lists %q (grid needs lab:admin)", run.Tools)
	}
	if r := run.Series; r == nil || r.Drawn == nil || str(r.Drawn.ChartPoints) != "150" {
		t.Errorf("series with n=150 on the signed-in page: %s", r)
	}

	// The other origin's fetch was sent (opaque) and refused before any pool.
	if run.CrossOrigin != "opaque" {
		t.Errorf("the cross-origin fetch: %s", run.CrossOrigin)
	}
	status, metrics := scrape(t, srv, http.MethodGet, "/metrics", "", "Authorization", "Bearer "+is.clientToken(t, "robot", "mcp", srv.url))
	if status != 200 || sample(metrics, `nexus_auth_refusals_total{reason="cross_origin"}`) != 1 || strings.Contains(metrics, `command="version"`) {
		t.Errorf("after the cross-origin fetch, /metrics (%d) counts %v cross-origin refusals; version called: %v",
			status, sample(metrics, `nexus_auth_refusals_total{reason="cross_origin"}`), strings.Contains(metrics, `command="version"`))
	}
	if sample(metrics, `nexus_auth_requests_total{subject="alice"}`) < 1 {
		t.Error("no request of the page was alice's")
	}

	// A browser without the cookie is sent to sign in.
	if len(run.SecondNavigations) < 2 || run.SecondNavigations[0].URL != srv.base+"/" || run.SecondNavigations[0].Status != http.StatusSeeOther ||
		!strings.HasPrefix(run.SecondAt, is.url+"/interaction/") || !run.SecondLoginForm {
		t.Errorf("a second browser context: %+v, at %s (login form %v)", run.SecondNavigations, run.SecondAt, run.SecondLoginForm)
	}
}
