package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/nexus-mcp/nexus/internal/auth"
	"github.com/nexus-mcp/nexus/internal/httpserve"
)

// authFlags are the OAuth flags of networked serving (docs/auth.md).
type authFlags struct {
	issuer, audience    string
	scopes, toolScopes  []string
	introspection       string
	introspectionClient string
}

func (a *authFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&a.issuer, "auth-issuer", "", "accept OAuth access tokens from this issuer (its identifier, exactly as its tokens' iss says); excludes --auth-token (docs/auth.md)")
	fs.StringVar(&a.audience, "auth-audience", "", "the audience tokens must be issued for (default: this server's /mcp URL; set it to the public URL behind a proxy)")
	fs.StringSliceVar(&a.scopes, "auth-scopes", nil, "scopes every request needs, comma-separated")
	fs.StringArrayVar(&a.toolScopes, "auth-tool-scope", nil, "TOOL=SCOPE: scopes a tool needs beyond --auth-scopes ('+' between several; repeatable; wins over the command's metadata \"scopes\")")
	fs.StringVar(&a.introspection, "auth-introspection", "", "also accept opaque tokens, checked at this RFC 7662 introspection endpoint")
	fs.StringVar(&a.introspectionClient, "auth-introspection-client", "", "client id nexus introspects as (its secret in $NEXUS_AUTH_INTROSPECTION_SECRET)")
}

// resource discovers the issuer and returns the resource server; nil
// without --auth-issuer. A static token beside it is refused before any
// discovery.
func (a *authFlags) resource(log *slog.Logger, staticToken string) (*auth.Resource, error) {
	if a.issuer != "" && staticToken != "" {
		return nil, usageErrorf("serve: %v", httpserve.ErrTokenAndIssuer)
	}
	if a.issuer == "" {
		if a.audience != "" || len(a.scopes) > 0 || len(a.toolScopes) > 0 || a.introspection != "" {
			return nil, usageErrorf("serve: --auth-audience, --auth-scopes, --auth-tool-scope and --auth-introspection need --auth-issuer")
		}
		return nil, nil
	}
	toolScopes, err := auth.ParseToolScopes(a.toolScopes)
	if err != nil {
		return nil, usageErrorf("serve: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return auth.New(ctx, auth.Config{
		Issuer: a.issuer, Audience: a.audience, Scopes: auth.ParseScopes(strings.Join(a.scopes, " ")), ToolScopes: toolScopes,
		Introspection: a.introspection, IntrospectionClientID: a.introspectionClient,
		IntrospectionSecret: os.Getenv("NEXUS_AUTH_INTROSPECTION_SECRET"), Logger: log,
	})
}
