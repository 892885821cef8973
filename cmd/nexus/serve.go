package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nexus-mcp/nexus/internal/httpserve"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/program"
)

// registerServe defines the flags of networked serving, shared by `nexus
// serve` and `nexus mcp --http-port`.
func registerServe(fs *pflag.FlagSet, o *program.HTTPOptions, portFlag string) {
	fs.StringVar(&o.Host, "host", httpserve.DefaultHost, "address to bind; a non-loopback address needs --auth-token, --auth-issuer or --allow-no-auth")
	fs.IntVar(&o.Port, portFlag, httpserve.DefaultPort, "TCP port to listen on (0 picks a free one)")
	fs.StringVar(&o.Token, "auth-token", "", "require \"Authorization: Bearer TOKEN\" (default $NEXUS_AUTH_TOKEN; prefer the variable: flags show in ps)")
	fs.BoolVar(&o.AllowNoAuth, "allow-no-auth", false, "allow a non-loopback bind without a token")
	a := &o.Auth
	fs.StringVar(&a.Issuer, "auth-issuer", "", "accept OAuth access tokens from this issuer (its identifier, exactly as its tokens' iss says); excludes --auth-token (docs/auth.md)")
	fs.StringVar(&a.Audience, "auth-audience", "", "the audience tokens must be issued for (default: this server's /mcp URL; set it to the public URL behind a proxy)")
	fs.StringSliceVar(&a.Scopes, "auth-scopes", nil, "scopes every request needs, comma-separated")
	fs.StringArrayVar(&a.ToolScopes, "auth-tool-scope", nil, "TOOL=SCOPE: scopes a tool needs beyond --auth-scopes ('+' between several; repeatable; wins over the command's metadata \"scopes\")")
	fs.StringVar(&a.Introspection, "auth-introspection", "", "also accept opaque tokens, checked at this RFC 7662 introspection endpoint")
	fs.StringVar(&a.IntrospectionClient, "auth-introspection-client", "", "client id nexus introspects as (its secret in $NEXUS_AUTH_INTROSPECTION_SECRET)")
	fs.StringVar(&a.PageClient, "auth-page-client", "", "client id the browser page signs people in as, redirect URI <public URL>/oauth/callback (its secret in $NEXUS_AUTH_PAGE_CLIENT_SECRET; default: one registered at start where the issuer allows)")
	fs.StringSliceVar(&o.Origins, "allowed-origin", nil, "browser Origin to allow besides loopback ones (repeatable)")
	fs.StringSliceVar(&o.Hosts, "allowed-host", nil, "Host header value to allow besides loopback names (repeatable)")
	fs.Int64Var(&o.MaxBody, "max-body", httpserve.DefaultMaxBody, "largest accepted request body, in bytes")
	fs.IntVar(&o.MaxSessions, "max-sessions", httpserve.DefaultMaxSessions, "most live MCP sessions at once")
	fs.IntVar(&o.MaxCalls, "max-calls", httpserve.DefaultMaxCalls, "most function calls running at once (more wait for a slot)")
	fs.IntVar(&o.MaxTasks, "max-tasks", mcp.DefaultMaxTasks, "most MCP tasks kept at once, running or finished within their ttl (more are refused)")
	fs.DurationVar(&o.SessionIdle, "session-idle", httpserve.DefaultSessionIdle, "end an MCP session unused for this long")
	fs.DurationVar(&o.Grace, "grace", httpserve.DefaultGrace, "on SIGTERM, how long calls in flight may run on")
	fs.BoolVar(&o.Metrics, "metrics", true, "serve Prometheus metrics at GET /metrics, behind the same auth as the rest (--metrics=false: off)")
	fs.StringVar(&o.TLSCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain); needs --tls-key")
	fs.StringVar(&o.TLSKey, "tls-key", "", "the PEM private key of --tls-cert")
	fs.BoolVar(&o.HTTP3, "http3", false, "also serve HTTP/3 (QUIC) on the UDP port of the same number, advertised by Alt-Svc; needs --tls-cert and --tls-key")
	fs.StringVar(&o.NodeID, "node-id", "", "this node's name behind a load balancer: the session ids it mints start with \"NAME.\", and its responses carry it in a Nexus-Node header (docs/deploy.md)")
	fs.BoolVar(&o.MCPConfig, "mcp-config", false, "print the client config for this server (JSON on stdout, a claude mcp add line on stderr) and exit")
	fs.BoolVar(&o.Watch, "watch", false, "reload the program when its manifest or pool files change, telling clients with notifications/tools/list_changed")
	fs.BoolVar(&o.Views, "views", true, "MCP Apps views of tool results, for clients that declare io.modelcontextprotocol/ui (docs/views.md); --views=false turns them off")
}

func newServeCmd(o *program.Options) *cobra.Command {
	ho := &program.HTTPOptions{}
	c := &cobra.Command{
		Use:   "serve [--host 127.0.0.1] [--port 9000] TARGET...",
		Short: "Serve one or more programs over HTTP: MCP at /mcp and a plain JSON API",
		Long: "Serve programs over HTTP on one port: MCP (Streamable HTTP, every protocol era) at /mcp,\n" +
			"POST /call/<module>/<command>, GET /discover, GET /health. With several programs, tools are\n" +
			"named <module>__<command>. Each TARGET is a manifest file, a directory holding manifest.json,\n" +
			"or a launcher script. --tls-cert and --tls-key serve HTTPS; --http3 adds HTTP/3 (QUIC) on the\n" +
			"UDP port of the same number.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return program.Usagef("missing program: usage: nexus serve [--host H] [--port P] TARGET...")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return program.ServeHTTP(o, *ho, args) },
	}
	registerServe(c.Flags(), ho, "port")
	return c
}
