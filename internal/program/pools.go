package program

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/pool"
)

// pools is what a Caller needs of a program's running pools (a pool.Set).
type pools interface {
	CallWith(ctx context.Context, pool, mid int, args []json.RawMessage, opts pool.CallOptions) (ndarray.Value, error)
	Ready(ctx context.Context) error
}

// poolStartDelay holds back the pools no call has asked for yet (see
// pool.Options.StartDelay): a client that calls at once gets its pool
// started alone, and one that calls later finds every pool ready.
const poolStartDelay = 100 * time.Millisecond

// startPools starts a program's pools (only the given indices when
// non-nil). Calls get o.Timeout unless their command sets its own; a CLI run
// (`nexus run`) has no default timeout, only a --timeout given: a person is
// waiting, with Ctrl-C.
func startPools(m *manifest.Manifest, o *Options, only []int) *pool.Set {
	opts := pool.Options{Logger: slog.Default(), OutputLog: o.jsonLog, OnEvent: o.poolEvents, StartTimeout: o.StartTimeout, Reaper: true, StartDelay: poolStartDelay,
		Morloc: morlocOptions(m), OutputDir: o.OutputDir}
	if o.Command != "run" || o.TimeoutGiven {
		opts.CallTimeout = o.Timeout
	}
	return pool.Start(context.Background(), poolSpecs(m, o, only), opts)
}

// poolSpecs lists the pools to start; only the given indices when non-nil.
func poolSpecs(m *manifest.Manifest, o *Options, only []int) []pool.Spec {
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
			workers = o.Workers // 0 too: the language's default
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
