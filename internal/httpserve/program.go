package httpserve

import (
	"context"
	"fmt"
	"strings"

	"github.com/nexus-mcp/nexus/internal/metrics"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// Program is one served program: its manifest, its tool surface (from
// argmap.Tools) and the caller that reaches its pools.
type Program struct {
	Manifest *manifest.Manifest
	Tools    []*argmap.Tool
	Excluded []argmap.Exclusion
	Caller   mcp.Caller
}

// ToolSeparator joins module and command in a tool name when several
// programs share a server (docs/spec.md §5).
const ToolSeparator = "__"

// program is a Program as the server keeps it.
type program struct {
	Program
	name     string
	byName   map[string]*argmap.Tool // command name → its tool
	excluded map[string]string       // command name → why it has no tool
}

// prepare checks the programs and, when there are several, renames their
// tools <module>__<command> in place (the tools belong to the server from
// here on). Every program's calls share the slots.
func prepare(programs []Program, slots chan struct{}) ([]*program, error) {
	if len(programs) == 0 {
		return nil, fmt.Errorf("no program to serve")
	}
	seen := map[string]bool{}
	var out []*program
	for i, p := range programs {
		if p.Manifest == nil || p.Caller == nil {
			return nil, fmt.Errorf("program %d: manifest and caller are required", i)
		}
		name := p.Manifest.Name
		if name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("program %s: a served program needs a name without '/' (got %q)", p.Manifest.Path, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("two programs are named %q: each served program needs its own name", name)
		}
		seen[name] = true
		p.Caller = limitedCaller{next: p.Caller, slots: slots}
		pr := &program{Program: p, name: name, byName: map[string]*argmap.Tool{}, excluded: map[string]string{}}
		for _, t := range p.Tools {
			pr.byName[t.Command.Name] = t
			if len(programs) > 1 {
				t.Name = name + ToolSeparator + t.Name
			}
		}
		for _, e := range p.Excluded {
			pr.excluded[e.Command] = e.Reason
		}
		out = append(out, pr)
	}
	return out, nil
}

// allTools lists every program's tools, program by program.
func allTools(programs []*program) []*argmap.Tool {
	var tools []*argmap.Tool
	for _, p := range programs {
		tools = append(tools, p.Tools...)
	}
	return tools
}

// routingCaller sends each command to the caller of the program it belongs
// to: mcp.Caller routes by *manifest.Command, and every command (internal
// terminal entries included) belongs to exactly one manifest.
type routingCaller map[*manifest.Command]mcp.Caller

func newRoutingCaller(programs []*program) routingCaller {
	rc := routingCaller{}
	for _, p := range programs {
		for i := range p.Manifest.Commands {
			rc[&p.Manifest.Commands[i]] = p.Caller
		}
	}
	return rc
}

func (rc routingCaller) Call(ctx context.Context, call argmap.Call, hooks mcp.CallHooks) (ndarray.Value, error) {
	c := rc[call.Command]
	if c == nil {
		return ndarray.Value{}, fmt.Errorf("command %s belongs to no served program", call.Command.Name)
	}
	return c.Call(ctx, call, hooks)
}

// limitedCaller lets at most cap(slots) calls run at once; the others wait
// for a slot, or give up when their request ends.
type limitedCaller struct {
	next  mcp.Caller
	slots chan struct{}
}

func (l limitedCaller) Call(ctx context.Context, call argmap.Call, hooks mcp.CallHooks) (ndarray.Value, error) {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return ndarray.Value{}, ctx.Err()
	}
	defer func() { <-l.slots }()
	return l.next.Call(ctx, call, hooks)
}

// toolOwner is the program and command a tool name stands for, as
// /metrics labels a call.
type toolOwner struct{ program, command string }

// toolOwners maps each served tool's name to its owner. A name that is no
// tool maps to the zero toolOwner: "" labels, so that a client's made-up
// names cannot grow the metrics without bound.
func toolOwners(programs []*program) map[string]toolOwner {
	owners := map[string]toolOwner{}
	for _, p := range programs {
		for _, t := range p.Tools {
			owners[t.Name] = toolOwner{program: p.name, command: t.Command.Name}
		}
	}
	return owners
}

// countingCaller counts a program's calls in flight for /metrics.
type countingCaller struct {
	next    mcp.Caller
	program string
	metrics *metrics.Metrics
}

func (c countingCaller) Call(ctx context.Context, call argmap.Call, hooks mcp.CallHooks) (ndarray.Value, error) {
	c.metrics.CallStarted(c.program)
	defer c.metrics.CallEnded(c.program)
	return c.next.Call(ctx, call, hooks)
}
