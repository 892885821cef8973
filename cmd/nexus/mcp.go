package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/mcp"
)

func newMCPCmd(g *globalFlags) *cobra.Command {
	var once, params string
	var maxLine, pageSize int
	httpOpts := &serveOptions{}
	c := &cobra.Command{
		Use:   "mcp TARGET",
		Short: "Serve a program's functions as MCP tools on stdin/stdout",
		Long: "Serve a program as an MCP server over stdio (one JSON-RPC message per line).\n" +
			"TARGET is a manifest file, a directory holding manifest.json, or a launcher script.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("missing program: usage: nexus mcp TARGET")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("http-port") {
				// The single-program shorthand of `nexus serve`.
				return runServe(g, httpOpts, args)
			}
			prog, err := loadProgram(args[0])
			if err != nil {
				return err
			}
			var p json.RawMessage
			if params != "" {
				if !json.Valid([]byte(params)) {
					return usageErrorf("--params: not valid JSON: %s", params)
				}
				p = json.RawMessage(params)
			}
			// SPEC §4.1: re-home descriptor 1 before any pool starts.
			proto, err := mcp.RehomeStdout()
			if err != nil {
				return err
			}
			// nexus's own warnings (a pool that died, ...) also reach the
			// clients that asked for log messages (logging/setLevel).
			stderrLog := slog.Default()
			logs := mcp.NewLogHub(stderrLog.Handler())
			slog.SetDefault(slog.New(logs))
			removeOutput, err := prepareOutputDir(g)
			if err != nil {
				return err
			}
			defer removeOutput()
			caller, stopPools := prog.caller(g)
			pools := newLivePools() // with --watch, every generation's pools
			current := pools.add(stopPools)
			defer pools.stopAll()
			key, err := stateKey()
			if err != nil {
				return err
			}
			srv := mcp.NewServerFor(prog.surface(caller), mcp.Options{
				Logger: stderrLog, MaxLine: maxLine, PageSize: pageSize, Logs: logs, StateKey: key,
				MaxTasks: httpOpts.maxTasks, ListChanged: httpOpts.watch, OutputDir: g.outputDir, NoViews: !httpOpts.views})
			if httpOpts.watch && once == "" {
				stopWatching, err := watchStdio(g, args[0], prog, pools, current, srv)
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

			if once != "" {
				resp := srv.Once(context.Background(), once, p)
				out, err := json.MarshalIndent(resp, "", "  ")
				if err != nil {
					return err
				}
				_, err = proto.Write(append(out, '\n'))
				return err
			}
			// SPEC §4.1: stdin EOF shuts every pool down (deferred Close) and exits 0.
			return srv.ServeStdio(context.Background(), os.Stdin, proto)
		},
	}
	c.Flags().StringVar(&once, "once", "", "run one MCP method (e.g. tools/list) in an initialized session, print the reply and exit")
	c.Flags().StringVar(&params, "params", "", "JSON params for --once")
	c.Flags().IntVar(&maxLine, "max-line", mcp.DefaultMaxLine, "largest accepted message, in bytes")
	httpOpts.register(c.Flags(), "http-port") // --http-port N serves over HTTP instead of stdio
	c.Flags().IntVar(&pageSize, "page-size", mcp.DefaultPageSize, "tools (prompts, resources) per list page")
	return c
}
