package program

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/nexus-mcp/nexus/internal/auth"
	"github.com/nexus-mcp/nexus/internal/httpserve"
)

// AuthOptions are the OAuth options of networked serving (docs/auth.md).
type AuthOptions struct {
	Issuer, Audience    string
	Scopes, ToolScopes  []string
	Introspection       string
	IntrospectionClient string
	// PageClient is the client the browser page signs in as; its secret
	// is read from $NEXUS_AUTH_PAGE_CLIENT_SECRET.
	PageClient string
}

// resource discovers the issuer and returns the resource server; nil
// without an issuer. A static token beside it is refused before any
// discovery: it would skip the audience, expiry and scope checks.
func (a AuthOptions) resource(log *slog.Logger, staticToken string) (*auth.Resource, error) {
	if a.Issuer != "" && staticToken != "" {
		return nil, Usagef("serve: %v", httpserve.ErrTokenAndIssuer)
	}
	if a.Issuer == "" {
		if a.Audience != "" || len(a.Scopes) > 0 || len(a.ToolScopes) > 0 || a.Introspection != "" || a.PageClient != "" {
			return nil, Usagef("serve: --auth-audience, --auth-scopes, --auth-tool-scope, --auth-introspection and --auth-page-client need --auth-issuer")
		}
		return nil, nil
	}
	toolScopes, err := auth.ParseToolScopes(a.ToolScopes)
	if err != nil {
		return nil, Usagef("serve: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return auth.New(ctx, auth.Config{
		Issuer: a.Issuer, Audience: a.Audience, Scopes: auth.ParseScopes(strings.Join(a.Scopes, " ")), ToolScopes: toolScopes,
		Introspection: a.Introspection, IntrospectionClientID: a.IntrospectionClient,
		IntrospectionSecret: os.Getenv("NEXUS_AUTH_INTROSPECTION_SECRET"),
		PageClientID:        a.PageClient, PageClientSecret: os.Getenv("NEXUS_AUTH_PAGE_CLIENT_SECRET"), Logger: log,
	})
}
