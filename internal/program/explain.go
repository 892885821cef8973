package program

import (
	"fmt"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// explain is `nexus run PROG --explain`: one line for each
// manifest field that nexus does not fully honour, saying why, so that none
// is dropped silently: the top-level fields set to something other than
// their defaults, the capabilities, a field on a many argument morloc's
// nexus ignores as well, a command refused for a value nexus does not
// know, and top-level keys nexus does not read. Fields nexus honours get a
// line too, marked so, when they are set.
func explain(m *manifest.Manifest) []string {
	var out []string
	say := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	morlocPools := 0
	for _, p := range m.Pools {
		if p.Runtime == manifest.RuntimeMorloc {
			morlocPools++
		}
	}
	forPools := func(env string) string {
		if morlocPools == 0 {
			return "not honoured: the program has no morloc pools to give it to, and nexus itself sends every argument inline"
		}
		return "partly honoured: its morloc pools get it as " + env + "; nexus itself sends every argument inline as msgpack"
	}
	if len(m.Epilogues) > 0 {
		say("epilogues (%d block(s)): not honoured: the top-level help does not print them, as morloc 0.98.2's nexus does not", len(m.Epilogues))
	}
	if m.InlineSize != nil {
		say("inline_size %d: %s", *m.InlineSize, forPools(fmt.Sprintf("MORLOC_INLINE_SIZE=%d", *m.InlineSize)))
	}
	if m.NoShm {
		say("no_shm true: %s", forPools("MORLOC_NO_SHM=1"))
	}
	if m.TmpDir != "" {
		say("tmpdir %q: %s", m.TmpDir, forPools("MORLOC_TMPDIR="+m.TmpDir))
	}
	if m.RunLog != nil {
		say("run_log: honoured: its prologue and epilogue go to stderr around each CLI run ({run_id} is empty: nexus has no --log-dir); none over MCP or HTTP, as in morloc")
	}
	if m.UnsafeSkipNullCheck {
		say("unsafe_skip_null_check true: honoured: a string with a NUL byte goes to a morloc pool unchecked")
	}
	for _, c := range m.Capabilities {
		switch c {
		case manifest.CapabilityLog:
			say("capabilities %q: partly honoured: nexus has -q/--quiet (its log level error), not --log-dir or --summary", c)
		case manifest.CapabilityDebugTrace:
			say("capabilities %q: not honoured: nexus has no --debug-cache-depth, --debug-cache-max or --debug-recursion-cap", c)
		default:
			say("capabilities %q: not honoured: a capability nexus does not know", c)
		}
	}
	for i := range m.Commands {
		c := &m.Commands[i]
		if c.Fault != nil {
			say("%s: command '%s' is refused (left off the tool surface, an error on the CLI): %s", c.Fault.Path, c.Name, c.Fault.Msg)
		}
		for _, k := range c.Constraints {
			say("commands[%d].constraints: %s: kept and shown in help; nexus does not enforce it", i, k)
		}
		for j := range c.Args {
			for _, k := range c.Args[j].Constraints {
				if k.Type != "kind" {
					say("commands[%d].args[%d].constraints: %s: kept and shown in help and the tool's description; nexus does not enforce it", i, j, k)
				}
			}
		}
		for _, k := range c.Return.Constraints {
			if k.Type != "kind" {
				say("commands[%d].return.constraints: %s: kept and shown in help; nexus does not enforce it", i, k)
			}
		}
	}
	for _, n := range m.Ignored {
		say("%s: ignored", n)
	}
	for _, k := range m.Unread {
		say("%s: not read: a top-level key nexus does not know", k)
	}
	return out
}
