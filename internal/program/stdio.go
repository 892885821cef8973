package program

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/nexus-mcp/nexus/internal/mcp"
)

// StdioOptions are what `nexus mcp` takes besides the global flags.
type StdioOptions struct {
	Once     string // run this one MCP method in an initialized session, print the reply and exit
	Params   string // JSON params for Once
	MaxLine  int
	PageSize int
	MaxTasks int
	Watch    bool // reload the program when its files change
	Views    bool // MCP Apps views for clients that declare the extension
}

// ServeStdio serves a program over stdio (docs/spec.md §4) until stdin
// closes, SIGTERM or SIGINT; with Once it answers one method and returns.
func ServeStdio(o *Options, target string, so StdioOptions) error {
	p, err := Load(target, o)
	if err != nil {
		return err
	}
	var params json.RawMessage
	if so.Params != "" {
		if !json.Valid([]byte(so.Params)) {
			return Usagef("--params: not valid JSON: %s", so.Params)
		}
		params = json.RawMessage(so.Params)
	}
	// docs/spec.md §4.1: re-home descriptor 1 before any pool starts.
	proto, err := mcp.RehomeStdout()
	if err != nil {
		return err
	}
	// nexus's own warnings (a pool that died, ...) also reach the
	// clients that asked for log messages (logging/setLevel).
	stderrLog := slog.Default()
	logs := mcp.NewLogHub(stderrLog.Handler())
	slog.SetDefault(slog.New(logs))
	removeOutput, err := o.prepareOutputDir()
	if err != nil {
		return err
	}
	defer removeOutput()
	caller, stopPools := p.Start(o)
	pools := newLivePools() // with --watch, every generation's pools
	current := pools.add(stopPools)
	defer pools.stopAll()
	key, err := stateKey()
	if err != nil {
		return err
	}
	srv := mcp.NewServerFor(p.Surface(caller), mcp.Options{
		Logger: stderrLog, MaxLine: so.MaxLine, PageSize: so.PageSize, Logs: logs, StateKey: key,
		MaxTasks: so.MaxTasks, ListChanged: so.Watch, OutputDir: o.OutputDir, NoViews: !so.Views})
	if so.Watch && so.Once == "" {
		stopWatching, err := watchStdio(o, target, p, pools, current, srv)
		if err != nil {
			return err
		}
		defer stopWatching()
	}

	// SIGTERM/SIGINT: stop every pool and exit 0 (stdin may never close).
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		<-sig
		pools.stopAll()
		os.Exit(0)
	}()

	if so.Once != "" {
		resp := srv.Once(context.Background(), so.Once, params)
		out, err := json.MarshalIndent(resp, "", "  ")
		if err != nil {
			return err
		}
		_, err = proto.Write(append(out, '\n'))
		return err
	}
	// docs/spec.md §4.1: stdin EOF shuts every pool down (deferred stopAll)
	// and exits 0.
	return srv.ServeStdio(context.Background(), os.Stdin, proto)
}

// watchStdio reloads a stdio server's program when its files change
// (nexus mcp --watch); the function returned stops watching.
func watchStdio(o *Options, target string, p *Program, pools *livePools, current *poolsOf, srv *mcp.Server) (func(), error) {
	swap := func(next []running) (<-chan struct{}, error) {
		drained := srv.SetSurface(next[0].Surface(next[0].caller))
		srv.NotifyToolsChanged()
		return drained, nil
	}
	r, err := newReloader(o, []string{target}, []*Program{p}, pools, current, swap, true)
	if err != nil {
		return nil, err
	}
	return r.background(nil), nil
}
