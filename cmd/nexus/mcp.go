package main

import (
	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/program"
)

func newMCPCmd(o *program.Options) *cobra.Command {
	var so program.StdioOptions
	httpOpts := &program.HTTPOptions{}
	c := &cobra.Command{
		Use:   "mcp TARGET",
		Short: "Serve a program's functions as MCP tools on stdin/stdout",
		Long: "Serve a program as an MCP server over stdio (one JSON-RPC message per line).\n" +
			"TARGET is a manifest file, a directory holding manifest.json, or a launcher script.",
		Args: oneProgram("nexus mcp TARGET"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("http-port") {
				// The single-program shorthand of `nexus serve`.
				return program.ServeHTTP(o, *httpOpts, args)
			}
			so.MaxTasks, so.Watch, so.Views = httpOpts.MaxTasks, httpOpts.Watch, httpOpts.Views
			return program.ServeStdio(o, args[0], so)
		},
	}
	c.Flags().StringVar(&so.Once, "once", "", "run one MCP method (e.g. tools/list) in an initialized session, print the reply and exit")
	c.Flags().StringVar(&so.Params, "params", "", "JSON params for --once")
	c.Flags().IntVar(&so.MaxLine, "max-line", mcp.DefaultMaxLine, "largest accepted message, in bytes")
	registerServe(c.Flags(), httpOpts, "http-port") // --http-port N serves over HTTP instead of stdio
	c.Flags().IntVar(&so.PageSize, "page-size", mcp.DefaultPageSize, "tools (prompts, resources) per list page")
	return c
}
