package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/metrics"
	"github.com/nexus-mcp/nexus/internal/pool"

	"github.com/nexus-mcp/nexus/internal/clientconfig"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/httpserve"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
)

// serveOptions are the flags of networked serving, shared by `nexus serve`
// and `nexus mcp --http-port`.
type serveOptions struct {
	host, token    string
	port           int
	allowNoAuth    bool
	origins, hosts []string
	maxBody        int64
	maxSessions    int
	maxCalls       int
	maxTasks       int
	sessionIdle    time.Duration
	grace          time.Duration
	mcpConfig      bool
	metrics        bool
	pageSize       int
	tlsCert        string
	tlsKey         string
	http3          bool
	watch          bool
	nodeID         string
	views          bool
}

func (o *serveOptions) register(fs *pflag.FlagSet, portFlag string) {
	fs.StringVar(&o.host, "host", httpserve.DefaultHost, "address to bind; a non-loopback address needs --auth-token or --allow-no-auth")
	fs.IntVar(&o.port, portFlag, httpserve.DefaultPort, "TCP port to listen on (0 picks a free one)")
	fs.StringVar(&o.token, "auth-token", "", "require \"Authorization: Bearer TOKEN\" (default $NEXUS_AUTH_TOKEN; prefer the variable: flags show in ps)")
	fs.BoolVar(&o.allowNoAuth, "allow-no-auth", false, "allow a non-loopback bind without a token")
	fs.StringSliceVar(&o.origins, "allowed-origin", nil, "browser Origin to allow besides loopback ones (repeatable)")
	fs.StringSliceVar(&o.hosts, "allowed-host", nil, "Host header value to allow besides loopback names (repeatable)")
	fs.Int64Var(&o.maxBody, "max-body", httpserve.DefaultMaxBody, "largest accepted request body, in bytes")
	fs.IntVar(&o.maxSessions, "max-sessions", httpserve.DefaultMaxSessions, "most live MCP sessions at once")
	fs.IntVar(&o.maxCalls, "max-calls", httpserve.DefaultMaxCalls, "most function calls running at once (more wait for a slot)")
	fs.IntVar(&o.maxTasks, "max-tasks", mcp.DefaultMaxTasks, "most MCP tasks kept at once, running or finished within their ttl (more are refused)")
	fs.DurationVar(&o.sessionIdle, "session-idle", httpserve.DefaultSessionIdle, "end an MCP session unused for this long")
	fs.DurationVar(&o.grace, "grace", httpserve.DefaultGrace, "on SIGTERM, how long calls in flight may run on")
	fs.BoolVar(&o.metrics, "metrics", true, "serve Prometheus metrics at GET /metrics, behind the same auth as the rest (--metrics=false: off)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain); needs --tls-key")
	fs.StringVar(&o.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	fs.BoolVar(&o.http3, "http3", false, "also serve HTTP/3 (QUIC) on the UDP port of the same number, advertised by Alt-Svc; needs --tls-cert and --tls-key")
	fs.StringVar(&o.nodeID, "node-id", "", "this node's name behind a load balancer: the session ids it mints start with \"NAME.\", and its responses carry it in a Nexus-Node header (docs/deploy.md)")
	fs.BoolVar(&o.mcpConfig, "mcp-config", false, "print the client config for this server (JSON on stdout, a claude mcp add line on stderr) and exit")
	fs.BoolVar(&o.watch, "watch", false, "reload the program when its manifest or pool files change, telling clients with notifications/tools/list_changed")
	fs.BoolVar(&o.views, "views", true, "MCP Apps views of tool results, for clients that declare io.modelcontextprotocol/ui (docs/views.md); --views=false turns them off")
}

func newServeCmd(g *globalFlags) *cobra.Command {
	o := &serveOptions{}
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
				return usageErrorf("missing program: usage: nexus serve [--host H] [--port P] TARGET...")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(g, o, args) },
	}
	o.register(c.Flags(), "port")
	return c
}

// runServe loads the programs, starts their pools and serves them until
// SIGTERM or SIGINT.
func runServe(g *globalFlags, o *serveOptions, targets []string) error {
	if o.token == "" {
		o.token = os.Getenv("NEXUS_AUTH_TOKEN")
	}
	// nexus's own warnings (a pool that died, ...) also reach the clients
	// that asked for log messages (logging/setLevel), on their GET stream.
	stderrLog := slog.Default()
	logs := mcp.NewLogHub(stderrLog.Handler())
	if !o.mcpConfig {
		slog.SetDefault(slog.New(logs))
	}
	var m *metrics.Metrics
	if o.metrics && !o.mcpConfig {
		m = metrics.New()
		g.poolEvents = func(lang string, e pool.Event) { m.PoolEvent(lang, string(e)) }
	}
	var programs []httpserve.Program
	var running []*loaded
	var stops []func()
	if !o.mcpConfig {
		removeOutput, err := prepareOutputDir(g)
		if err != nil {
			return err
		}
		defer removeOutput()
	}
	pools := newLivePools() // every generation's pools (reloads)
	defer pools.stopAll()
	current := pools.add(func() {
		for _, stop := range stops {
			stop()
		}
	})
	for _, t := range targets {
		p, l, err := loadServed(t)
		if err != nil {
			return err
		}
		if !o.mcpConfig {
			caller, stopPools := l.caller(g)
			stops = append(stops, stopPools)
			p.Caller = caller
		} else {
			p.Caller = programCaller{}
		}
		programs = append(programs, p)
		running = append(running, l)
	}
	key, err := stateKey()
	if err != nil {
		return err
	}
	srv, err := httpserve.New(httpserve.Config{
		Host: o.host, Port: o.port, AuthToken: o.token, AllowNoAuth: o.allowNoAuth,
		AllowedOrigins: o.origins, AllowedHosts: o.hosts, MaxBody: o.maxBody,
		MaxSessions: o.maxSessions, MaxCalls: o.maxCalls, SessionIdle: o.sessionIdle, Grace: o.grace,
		TLSCert: o.tlsCert, TLSKey: o.tlsKey, HTTP3: o.http3,
		Info:    serveInfo(programs),
		MCP:     mcp.Options{Logs: logs, StateKey: key, MaxTasks: o.maxTasks, ListChanged: o.watch, OutputDir: g.outputDir, NoViews: !o.views},
		Logger:  stderrLog,
		Metrics: m,
		NodeID:  o.nodeID,
	}, programs)
	if err != nil {
		return usageErrorf("serve: %v", err)
	}
	if o.mcpConfig {
		cc := clientconfig.URL{Name: serveInfo(programs).Name, URL: srv.ClientURL(), Token: o.token, Env: clientconfig.Env(os.LookupEnv)}
		fmt.Fprintln(os.Stderr, cc.ClaudeCommand())
		_, err := os.Stdout.Write(cc.JSON())
		return err
	}
	// SIGHUP reloads the programs (and, with --watch, a change to their files).
	stopReloads, err := serveReloads(g, targets, running, pools, current, srv, o.watch)
	if err != nil {
		return err
	}
	defer stopReloads()
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	url := srv.URL(ln)
	// Never print the token itself: logs are read by more people than the config.
	cc := clientconfig.URL{Name: serveInfo(programs).Name, URL: url}
	if o.token != "" {
		cc.Token = "$NEXUS_AUTH_TOKEN"
	}
	register := strings.ReplaceAll(cc.ClaudeCommand(), "'Authorization: Bearer $NEXUS_AUTH_TOKEN'", "\"Authorization: Bearer $NEXUS_AUTH_TOKEN\"")
	if jsonLog != nil {
		jsonLog.Info("listening", "url", url, "register", register)
	} else {
		fmt.Fprintf(os.Stderr, "nexus serve: listening on %s\nnexus serve: register with: %s\n", url, register)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return srv.Serve(ctx, ln)
}

// serveInfo names the server: the program itself when there is one.
func serveInfo(programs []httpserve.Program) mcp.Implementation {
	if len(programs) == 1 {
		return serverInfo(programs[0].Manifest)
	}
	names := make([]string, len(programs))
	for i, p := range programs {
		names[i] = p.Manifest.Name
	}
	return mcp.Implementation{Name: "nexus-" + strings.Join(names, "-"), Version: version}
}

// loadServed reads a program and its tool surface, printing SPEC §4.6's
// exclusion notes, and keeps the exclusions for GET /discover.
func loadServed(target string) (httpserve.Program, *loaded, error) {
	m, err := manifest.Load(target)
	if err != nil {
		return httpserve.Program{}, nil, err
	}
	tools, excluded := argmap.Tools(m)
	for _, e := range excluded {
		noteExclusion(e)
	}
	pure, refused := purePrograms(m)
	for _, t := range tools {
		if why, ok := refused[t.Command]; ok {
			excluded = append(excluded, argmap.Exclusion{Command: t.Command.Name, Reason: why})
		}
	}
	tools = withoutRefused(tools, refused)
	if err := tuneTools(tools); err != nil {
		return httpserve.Program{}, nil, err
	}
	catalog, err := mcp.NewCatalog([]mcp.CatalogProgram{{Manifest: m, Tools: tools}})
	if err != nil {
		return httpserve.Program{}, nil, err
	}
	return httpserve.Program{Manifest: m, Tools: tools, Excluded: excluded}, &loaded{m: m, tools: tools, pure: pure, catalog: catalog}, nil
}
