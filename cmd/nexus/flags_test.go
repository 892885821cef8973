package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nexus-mcp/nexus/internal/program"
)

// pflag takes a back-quoted word in a flag's usage as the name of its value
// (`--timeout nexus run` once showed in --help): no usage text may hold one.
func TestFlagUsageHasNoBackQuotes(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				name, _ := pflag.UnquoteUsage(f)
				t.Errorf("%s --%s: its usage has a back quote, so --help shows it as \"--%s %s\"", c.CommandPath(), f.Name, f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&program.Options{}))
}
