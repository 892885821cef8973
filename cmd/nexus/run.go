package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/program"
)

func newRunCmd(o *program.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "run TARGET [NEXUS_OPTIONS] [GROUP] COMMAND ARGS... | run TARGET --mcp-tools | --mcp-resources | --mcp-prompts | --mcp-config [--wsl] | --explain | --help",
		Short: "Run one of a program's commands as a CLI, as morloc's nexus does (what a launcher script calls)",
		// The program's own commands and options follow TARGET: parse them ourselves.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := takeGlobalFlags(cmd, args)
			if err != nil {
				return err
			}
			o.TimeoutGiven = cmd.Flags().Changed("timeout")
			if err := o.SetupLogging(); err != nil {
				return err
			}
			if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
				return cmd.Help()
			}
			return program.Run(o, args[0], args[1:], cmd.Flags().Set)
		},
	}
}

// takeGlobalFlags applies nexus's own flags (--workers, --timeout, ...) given
// before TARGET, as `nexus run --workers 2 prog cmd` or `nexus --workers 2 run
// prog cmd`: run parses no flags itself, since everything after TARGET belongs
// to the program.
func takeGlobalFlags(cmd *cobra.Command, args []string) ([]string, error) {
	for len(args) > 0 && strings.HasPrefix(args[0], "--") && args[0] != "--help" {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(args[0], "--"), "=")
		f := cmd.Flags().Lookup(name)
		if f == nil {
			return nil, program.Usagef("run: unknown nexus flag --%s before the program (program options go after TARGET CMD)", name)
		}
		args = args[1:]
		if !hasValue {
			if f.Value.Type() == "bool" {
				value = "true"
			} else if len(args) == 0 {
				return nil, program.Usagef("run: flag --%s needs a value", name)
			} else {
				value, args = args[0], args[1:]
			}
		}
		if err := cmd.Flags().Set(name, value); err != nil {
			return nil, program.Usagef("run: --%s: %v", name, err)
		}
	}
	return args, nil
}
