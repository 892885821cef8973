package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/pool"
)

// runtime-dir lets a build find the embedded runtimes, e.g. the C++ header:
// g++ -I"$(nexus runtime-dir)/cpp" pool.cpp -o pool-cpp.out
func newRuntimeDirCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "runtime-dir",
		Short: "Print the directory holding the language runtimes pools import (python/, r/, cpp/)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := pool.RuntimeDir()
			if err != nil {
				return err
			}
			fmt.Println(dir)
			return nil
		},
	}
}
