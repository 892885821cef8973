package auth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/auth"
	"github.com/nexus-mcp/nexus/internal/auth/authtest"
)

const pageBase = "http://127.0.0.1:9000"

// newPage is a resource server whose page signs in as the client "page"
// (secret "page-secret") of a fresh issuer, prepared for pageBase.
func newPage(t *testing.T, edit func(*auth.Config)) (*authtest.Issuer, *auth.Resource, *authtest.Clock) {
	t.Helper()
	is := authtest.NewIssuer(t)
	is.AddClient(authtest.Client{ID: "page", Secret: "page-secret", RedirectURI: pageBase + "/oauth/callback"})
	clk := authtest.NewClock()
	cfg := auth.Config{Issuer: is.URL, Audience: audience, Scopes: []string{"mcp"}, PageClientID: "page", PageClientSecret: "page-secret", Now: clk.Now}
	if edit != nil {
		edit(&cfg)
	}
	rs := newResource(t, is, cfg)
	return is, rs, clk
}

// atIssuer plays the browser at the issuer: it follows the authorization
// URL and returns the code and state the issuer sends back.
func atIssuer(t *testing.T, authURL string) (code, state string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(back.String(), pageBase+"/oauth/callback?") {
		t.Fatalf("the issuer answered %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return back.Query().Get("code"), back.Query().Get("state")
}

// signIn runs Begin, the issuer and Complete.
func signIn(t *testing.T, p *auth.PageSignIn) (*auth.PageSession, *auth.Refusal) {
	t.Helper()
	authURL, binding, err := p.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	code, state := atIssuer(t, authURL)
	return p.Complete(context.Background(), state, binding, code)
}

// The authorization request asks for a code with PKCE S256 and a fresh
// state, for the resource and the server's scopes; the code's token is
// verified and kept in a session the cookie's id finds, until sign-out.
func TestPageSignIn(t *testing.T) {
	is, rs, _ := newPage(t, nil)
	p := rs.Page()
	if err := p.Prepare(context.Background(), pageBase+"/"); err != nil {
		t.Fatal(err)
	}
	authURL, binding, err := p.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	want := map[string]string{"response_type": "code", "client_id": "page", "redirect_uri": pageBase + "/oauth/callback",
		"code_challenge_method": "S256", "resource": audience, "scope": "mcp"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("%s=%q, want %q (%s)", k, q.Get(k), v, authURL)
		}
	}
	if !strings.HasPrefix(authURL, is.URL+"/authorize?") || len(q.Get("code_challenge")) != 43 || len(q.Get("state")) < 43 || binding == q.Get("state") {
		t.Errorf("authorization URL %s, binding %q", authURL, binding)
	}
	if _, other, _ := p.Begin(context.Background()); other == binding {
		t.Error("two sign-ins with one binding")
	}
	code, state := atIssuer(t, authURL)
	sess, ref := p.Complete(context.Background(), state, binding, code)
	if ref != nil {
		t.Fatalf("refused: %+v", ref)
	}
	if sess.Identity.Subject != "alice" || sess.Identity.Owner() != "sub:"+is.URL+"#alice" || len(sess.ID) < 43 {
		t.Errorf("session %+v, identity %+v", sess, sess.Identity)
	}
	if d := time.Until(sess.Expires); d < 4*time.Minute || d > 5*time.Minute+time.Second {
		t.Errorf("the session ends in %v, want the token's 5 minutes", d)
	}
	id, ref := p.Session(context.Background(), sess.ID)
	if ref != nil || id.Subject != "alice" {
		t.Fatalf("the session: %+v %+v", id, ref)
	}
	if _, ref := p.Session(context.Background(), sess.ID+"x"); ref == nil || ref.Status != 401 {
		t.Errorf("an unknown session: %+v", ref)
	}
	p.End(sess.ID)
	if _, ref := p.Session(context.Background(), sess.ID); ref == nil || ref.Status != 401 || p.Sessions() != 0 {
		t.Errorf("after sign-out: %+v, %d sessions", ref, p.Sessions())
	}
}

// Each way a sign-in can go wrong is refused with its status, and a
// refused state or binding exchanges no code.
func TestPageSignInRefusals(t *testing.T) {
	is, rs, clk := newPage(t, nil)
	p := rs.Page()
	if err := p.Prepare(context.Background(), pageBase); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	begin := func() (string, string, string) {
		authURL, binding, err := p.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		code, state := atIssuer(t, authURL)
		return code, state, binding
	}

	t.Run("wrong state", func(t *testing.T) {
		code, _, binding := begin()
		n := is.Exchanges()
		if _, ref := p.Complete(ctx, "made-up", binding, code); ref == nil || ref.Status != 400 || ref.Reason != "state" {
			t.Errorf("%+v", ref)
		}
		if is.Exchanges() != n {
			t.Error("a wrong state reached the token endpoint")
		}
	})
	t.Run("another browser's binding", func(t *testing.T) {
		code, state, binding := begin()
		n := is.Exchanges()
		if _, ref := p.Complete(ctx, state, "stolen-state-no-cookie", code); ref == nil || ref.Status != 400 {
			t.Errorf("%+v", ref)
		}
		if is.Exchanges() != n {
			t.Error("a wrong binding reached the token endpoint")
		}
		// The browser that started it still finishes it.
		if _, ref := p.Complete(ctx, state, binding, code); ref != nil {
			t.Errorf("the real browser after a stranger's try: %+v", ref)
		}
	})
	t.Run("replayed state", func(t *testing.T) {
		code, state, binding := begin()
		if _, ref := p.Complete(ctx, state, binding, code); ref != nil {
			t.Fatal(ref)
		}
		n := is.Exchanges()
		if _, ref := p.Complete(ctx, state, binding, code); ref == nil || ref.Status != 400 || ref.Reason != "state" {
			t.Errorf("%+v", ref)
		}
		if is.Exchanges() != n {
			t.Error("a used state reached the token endpoint")
		}
	})
	t.Run("replayed code", func(t *testing.T) {
		code, state, binding := begin()
		if _, ref := p.Complete(ctx, state, binding, code); ref != nil {
			t.Fatal(ref)
		}
		_, state2, binding2 := begin()
		if _, ref := p.Complete(ctx, state2, binding2, code); ref == nil || ref.Status != http.StatusBadGateway || !strings.Contains(ref.Description, "invalid_grant") {
			t.Errorf("%+v", ref)
		}
	})
	t.Run("sign-in too slow", func(t *testing.T) {
		code, state, binding := begin()
		clk.Add(11 * time.Minute)
		defer clk.Add(-11 * time.Minute)
		if _, ref := p.Complete(ctx, state, binding, code); ref == nil || ref.Status != 400 || !strings.Contains(ref.Description, "10 minutes") {
			t.Errorf("%+v", ref)
		}
	})
	t.Run("no code", func(t *testing.T) {
		_, state, binding := begin()
		if _, ref := p.Complete(ctx, state, binding, ""); ref == nil || ref.Status != 400 {
			t.Errorf("%+v", ref)
		}
	})
	t.Run("token without the server's scope", func(t *testing.T) {
		is.SignInAs("bob", func(c map[string]any) { c["scope"] = "other" })
		defer is.SignInAs("alice", nil)
		if _, ref := signIn(t, p); ref == nil || ref.Status != 403 || ref.Reason != "scope" {
			t.Errorf("%+v", ref)
		}
	})
	t.Run("token for another audience", func(t *testing.T) {
		is.SignInAs("bob", func(c map[string]any) { c["aud"] = "http://127.0.0.1:1/mcp" })
		defer is.SignInAs("alice", nil)
		if _, ref := signIn(t, p); ref == nil || ref.Status != 401 || ref.Reason != "audience" {
			t.Errorf("%+v", ref)
		}
	})
	t.Run("session expires with its token", func(t *testing.T) {
		sess, ref := signIn(t, p)
		if ref != nil {
			t.Fatal(ref)
		}
		clk.Add(time.Until(sess.Expires) + time.Second)
		defer clk.Add(-time.Until(sess.Expires) - time.Second)
		if _, ref := p.Session(ctx, sess.ID); ref == nil || ref.Status != 401 || ref.Reason != "session" {
			t.Errorf("%+v", ref)
		}
		clk.Add(-time.Hour) // even were the clock to go back, the session is gone
		defer clk.Add(time.Hour)
		if _, ref := p.Session(ctx, sess.ID); ref == nil || !strings.Contains(ref.Description, "no such") {
			t.Errorf("an expired session is remembered: %+v", ref)
		}
	})
}

// A confidential client with a wrong secret: the issuer refuses it.
func TestPageSignInWrongSecret(t *testing.T) {
	_, rs, _ := newPage(t, func(c *auth.Config) { c.PageClientSecret = "wrong" })
	if err := rs.Page().Prepare(context.Background(), pageBase); err != nil {
		t.Fatal(err)
	}
	if _, ref := signIn(t, rs.Page()); ref == nil || ref.Status != http.StatusBadGateway || !strings.Contains(ref.Description, "invalid_client") {
		t.Errorf("%+v", ref)
	}
}

// Without --auth-page-client, nexus registers itself where the issuer
// allows, with its redirect URI, and signs in as that client; where it
// does not, sign-in says what to pass.
func TestPageClientRegistration(t *testing.T) {
	is := authtest.NewIssuer(t)
	is.Registration(true)
	rs := newResource(t, is, auth.Config{Scopes: []string{"mcp"}})
	p := rs.Page()
	if _, _, err := p.Begin(context.Background()); err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Errorf("before Prepare: %v", err)
	}
	if err := p.Prepare(context.Background(), pageBase); err != nil {
		t.Fatal(err)
	}
	clients := is.Clients()
	if len(clients) != 1 || clients[0].ID != p.ClientID() || clients[0].RedirectURI != pageBase+"/oauth/callback" || clients[0].Secret == "" {
		t.Fatalf("registered %+v; nexus signs in as %q", clients, p.ClientID())
	}
	if sess, ref := signIn(t, p); ref != nil || sess.Identity.Subject != "alice" {
		t.Errorf("signing in as the registered client: %+v", ref)
	}

	closed := authtest.NewIssuer(t)
	rs = newResource(t, closed, auth.Config{})
	err := rs.Page().Prepare(context.Background(), pageBase)
	if err == nil || !strings.Contains(err.Error(), "needs --auth-page-client") || !strings.Contains(err.Error(), pageBase+"/oauth/callback") {
		t.Errorf("no client, no registration: %v", err)
	}
	if _, _, err := rs.Page().Begin(context.Background()); err == nil || !strings.Contains(err.Error(), "--auth-page-client") {
		t.Errorf("Begin without a client: %v", err)
	}
}
