package program

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nexus-mcp/nexus/internal/clientconfig"
	"github.com/nexus-mcp/nexus/internal/httpserve"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/metrics"
	"github.com/nexus-mcp/nexus/internal/pool"
)

// HTTPOptions are the options of networked serving, shared by `nexus
// serve` and `nexus mcp --http-port`.
type HTTPOptions struct {
	Host, Token    string
	Port           int
	AllowNoAuth    bool
	Origins, Hosts []string
	MaxBody        int64
	MaxSessions    int
	MaxCalls       int
	MaxTasks       int
	SessionIdle    time.Duration
	Grace          time.Duration
	TLSCert        string
	TLSKey         string
	HTTP3          bool
	NodeID         string
	Metrics        bool // serve GET /metrics
	Watch          bool // reload the programs when their files change
	MCPConfig      bool // print the client config for this server and exit
	Auth           AuthOptions
	Views          bool // MCP Apps views for clients that declare the extension
}

// ServeHTTP loads the programs, starts their pools and serves them over
// HTTP (docs/spec.md §5) until SIGTERM or SIGINT; SIGHUP reloads them.
func ServeHTTP(o *Options, ho HTTPOptions, targets []string) error {
	if ho.Token == "" {
		ho.Token = os.Getenv("NEXUS_AUTH_TOKEN")
	}
	// nexus's own warnings (a pool that died, ...) also reach the clients
	// that asked for log messages (logging/setLevel), on their GET stream.
	stderrLog := slog.Default()
	logs := mcp.NewLogHub(stderrLog.Handler())
	if !ho.MCPConfig {
		slog.SetDefault(slog.New(logs))
	}
	var m *metrics.Metrics
	if ho.Metrics && !ho.MCPConfig {
		m = metrics.New()
		o.poolEvents = func(lang string, e pool.Event) { m.PoolEvent(lang, string(e)) }
	}
	if !ho.MCPConfig {
		removeOutput, err := o.prepareOutputDir()
		if err != nil {
			return err
		}
		defer removeOutput()
	}
	var served []httpserve.Program
	var loaded []*Program
	var stops []func()
	pools := newLivePools() // every generation's pools (reloads)
	defer pools.stopAll()
	current := pools.add(func() {
		for _, stop := range stops {
			stop()
		}
	})
	for _, t := range targets {
		p, err := Load(t, o)
		if err != nil {
			return err
		}
		var caller *Caller
		if ho.MCPConfig {
			caller = &Caller{m: p.Manifest} // printing the config calls nothing
		} else {
			var stop func()
			caller, stop = p.Start(o)
			stops = append(stops, stop)
		}
		served = append(served, p.served(caller))
		loaded = append(loaded, p)
	}
	key, err := stateKey()
	if err != nil {
		return err
	}
	info := serveInfo(served, o.Version)
	oauth, err := ho.Auth.resource(stderrLog, ho.Token)
	if err != nil {
		return err
	}
	srv, err := httpserve.New(httpserve.Config{
		Host: ho.Host, Port: ho.Port, AuthToken: ho.Token, OAuth: oauth, AllowNoAuth: ho.AllowNoAuth,
		AllowedOrigins: ho.Origins, AllowedHosts: ho.Hosts, MaxBody: ho.MaxBody,
		MaxSessions: ho.MaxSessions, MaxCalls: ho.MaxCalls, SessionIdle: ho.SessionIdle, Grace: ho.Grace,
		TLSCert: ho.TLSCert, TLSKey: ho.TLSKey, HTTP3: ho.HTTP3,
		Info:    info,
		MCP:     mcp.Options{Logs: logs, StateKey: key, MaxTasks: ho.MaxTasks, ListChanged: ho.Watch, OutputDir: o.OutputDir, NoViews: !ho.Views},
		Logger:  stderrLog,
		Metrics: m,
		NodeID:  ho.NodeID,
	}, served)
	if err != nil {
		return Usagef("serve: %v", err)
	}
	if ho.MCPConfig {
		cc := clientconfig.URL{Name: info.Name, URL: srv.ClientURL(), Token: ho.Token, Env: clientconfig.Env(os.LookupEnv)}
		fmt.Fprintln(os.Stderr, cc.ClaudeCommand())
		_, err := os.Stdout.Write(cc.JSON())
		return err
	}
	stopReloads, err := serveReloads(o, targets, loaded, pools, current, srv, ho.Watch)
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
	cc := clientconfig.URL{Name: info.Name, URL: url}
	if ho.Token != "" {
		cc.Token = "$NEXUS_AUTH_TOKEN"
	}
	register := strings.ReplaceAll(cc.ClaudeCommand(), "'Authorization: Bearer $NEXUS_AUTH_TOKEN'", "\"Authorization: Bearer $NEXUS_AUTH_TOKEN\"")
	if o.jsonLog != nil {
		o.jsonLog.Info("listening", "url", url, "register", register)
	} else {
		fmt.Fprintf(os.Stderr, "nexus serve: listening on %s\nnexus serve: register with: %s\n", url, register)
	}
	if oauth != nil {
		oauth.SetDefaultAudience(url)
		slog.Info("nexus serve: clients sign in through the issuer", "issuer", oauth.Issuer(), "audience", oauth.Audience(), "scopes", strings.Join(oauth.Scopes(), " "))
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return srv.Serve(ctx, ln)
}

// serveReloads reloads an HTTP server's programs on SIGHUP, and when their
// files change with watch; the function returned stops.
func serveReloads(o *Options, targets []string, programs []*Program, pools *livePools, current *poolsOf, srv *httpserve.Server, watch bool) (func(), error) {
	swap := func(next []running) (<-chan struct{}, error) {
		served := make([]httpserve.Program, len(next))
		for i, n := range next {
			served[i] = n.served(n.caller)
		}
		return srv.Reload(serveInfo(served, o.Version), served)
	}
	r, err := newReloader(o, targets, programs, pools, current, swap, watch)
	if err != nil {
		return nil, err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	// hup stays registered: a SIGHUP during shutdown is ignored, not fatal.
	return r.background(hup), nil
}

// serveInfo names the server: the program itself when there is one, else
// nexus (its version) named after them all.
func serveInfo(programs []httpserve.Program, version string) mcp.Implementation {
	if len(programs) == 1 {
		return serverInfo(programs[0].Manifest)
	}
	names := make([]string, len(programs))
	for i, p := range programs {
		names[i] = p.Manifest.Name
	}
	return mcp.Implementation{Name: "nexus-" + strings.Join(names, "-"), Version: version}
}
