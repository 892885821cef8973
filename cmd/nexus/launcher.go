package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/program"
)

func newLauncherCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "launcher TARGET -o PATH",
		Short: "Write a launcher script so that ./PATH runs the program (./prog --mcp-tools, ./prog CMD ARGS)",
		Args:  oneProgram("nexus launcher TARGET -o PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return program.Usagef("launcher: -o PATH is required")
			}
			m, err := manifest.Load(args[0])
			if err != nil {
				return err
			}
			self, err := program.Executable()
			if err != nil {
				return fmt.Errorf("launcher: %w", err)
			}
			// docs/spec.md §3: the same shape as morloc's launcher, so either runtime finds the manifest.
			script := fmt.Sprintf("#!/bin/sh\n# launcher for the program %q, written by nexus\nexport MORLOC_PROG_NAME=\"$0\"\nexec %s run %s \"$@\"\n",
				m.Name, shellQuote(self), shellQuote(m.Path))
			if err := os.WriteFile(out, []byte(script), 0o755); err != nil {
				return fmt.Errorf("launcher: %w", err)
			}
			return os.Chmod(out, 0o755)
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "path of the launcher script to write")
	return c
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
