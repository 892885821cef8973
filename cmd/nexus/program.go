package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/eval"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/pool"
)

// loaded is a program ready to serve: its manifest, its tools and its
// pure commands compiled.
type loaded struct {
	m     *manifest.Manifest
	tools []*argmap.Tool
	pure  map[*manifest.Command]*eval.Program
}

// loadProgram reads the manifest a target names, compiles its pure
// commands and builds its tool surface, writing SPEC §4.6's exclusion
// notes to stderr.
func loadProgram(target string) (*loaded, error) {
	m, err := manifest.Load(target)
	if err != nil {
		return nil, err
	}
	tools, excluded := argmap.Tools(m)
	for _, e := range excluded {
		noteExclusion(e)
	}
	pure, refused := purePrograms(m)
	tools = withoutRefused(tools, refused)
	if err := tuneTools(tools); err != nil {
		return nil, err
	}
	return &loaded{m: m, tools: tools, pure: pure}, nil
}

// caller starts the pools the program needs (none when every command is
// pure) and returns what calls its commands, and what stops the pools.
func (l *loaded) caller(g *globalFlags) (programCaller, func()) {
	c := programCaller{m: l.m, pure: l.pure}
	if !hasRemote(l.m) {
		return c, func() {}
	}
	c.set = startPools(l.m, g, nil)
	return c, func() { c.set.Close() }
}

// poolSpecs lists the pools to start; only the given indices when non-nil.
func poolSpecs(m *manifest.Manifest, g *globalFlags, only []int) []pool.Spec {
	want := map[int]bool{}
	for _, i := range only {
		want[i] = true
	}
	var specs []pool.Spec
	dirErr := m.CheckDir() // a program moved from where morloc built it
	for i, p := range m.Pools {
		if only != nil && !want[i] {
			continue
		}
		workers := p.Workers
		if workers == 0 {
			workers = g.workers // 0 too: the language's default
		}
		specs = append(specs, pool.Spec{Index: i, Lang: p.Lang, Exec: p.Exec, Dir: m.Dir, Workers: workers,
			Functions: poolFunctions(m, i), ArgTypes: p.Arrays == "numpy",
			Runtime: p.Runtime, Socket: p.Socket, PoolHash: p.PoolHash, DirErr: dirErr})
	}
	return specs
}

// poolFunctions names the functions of pool i by mid, with their timeouts,
// their schemas (a morloc pool's calls are encoded and decoded by them) and
// the other pools they call.
func poolFunctions(m *manifest.Manifest, i int) map[int]pool.Function {
	fns := map[int]pool.Function{}
	for j := range m.Commands {
		c := &m.Commands[j]
		if c.Type != manifest.Remote || c.Pool != i {
			continue
		}
		fn := pool.Function{Name: c.Name, Timeout: c.Timeout, Return: c.Return.T, Needs: c.NeededPools}
		for k := range c.Args {
			fn.Args = append(fn.Args, c.Args[k].T)
		}
		fns[c.Mid] = fn
	}
	return fns
}

// morlocOptions are what the program says about its morloc pools as a
// whole: the wire format they speak and 0.98's knobs for results.
func morlocOptions(m *manifest.Manifest) pool.MorlocOptions {
	return pool.MorlocOptions{WireVersion: m.WireVersion(), InlineSize: m.InlineSize, NoShm: m.NoShm, TmpDir: m.TmpDir}
}

// poolStartDelay holds back the pools no call has asked for yet (see
// pool.Options.StartDelay): a client that calls at once gets its pool
// started alone, and one that calls later finds every pool ready.
const poolStartDelay = 100 * time.Millisecond

// defaultCallTimeout bounds a tool call whose command sets no timeout. A
// hung function should not hold a worker, and its client, forever; five
// minutes is long for an interactive tool yet leaves room for real work.
// Functions known to take longer say so in their metadata. MCP clients
// usually give up sooner (and cancel, which nexus honours the same way).
const defaultCallTimeout = 5 * time.Minute

func serverInfo(m *manifest.Manifest) mcp.Implementation {
	return mcp.Implementation{Name: m.Name, Version: m.Version()}
}

// startPools starts a program's pools (only the given indices when
// non-nil). Calls get g.timeout unless their command sets its own; a CLI run
// (`nexus run`) has no default timeout, only a --timeout given: a person is
// waiting, with Ctrl-C.
func startPools(m *manifest.Manifest, g *globalFlags, only []int) *pool.Set {
	opts := pool.Options{Logger: slog.Default(), OutputLog: jsonLog, OnEvent: g.poolEvents, StartTimeout: g.startTimeout, Reaper: true, StartDelay: poolStartDelay,
		Morloc: morlocOptions(m)}
	if g.command != "run" || g.timeoutGiven {
		opts.CallTimeout = g.timeout
	}
	return pool.Start(context.Background(), poolSpecs(m, g, only), opts)
}
