package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/pool"
)

// loadProgram reads the manifest a target names and builds its tool
// surface, writing SPEC §4.6's exclusion notes to stderr.
func loadProgram(target string) (*manifest.Manifest, []*argmap.Tool, error) {
	m, err := manifest.Load(target)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSettings(m); err != nil {
		return nil, nil, err
	}
	tools, excluded := argmap.Tools(m)
	for _, e := range excluded {
		fmt.Fprintln(os.Stderr, e.String())
	}
	return m, tools, nil
}

// poolSpecs lists the pools to start; only the given indices when non-nil.
func poolSpecs(m *manifest.Manifest, g *globalFlags, only []int) []pool.Spec {
	want := map[int]bool{}
	for _, i := range only {
		want[i] = true
	}
	var specs []pool.Spec
	for i, p := range m.Pools {
		if only != nil && !want[i] {
			continue
		}
		workers, _ := poolWorkers(&p) // checked by loadProgram
		if workers == 0 {
			workers = g.workers // 0 too: the language's default
		}
		specs = append(specs, pool.Spec{Index: i, Lang: p.Lang, Exec: p.Exec, Dir: m.Dir, Workers: workers,
			Functions: poolFunctions(m, i)})
	}
	return specs
}

// poolFunctions names the functions of pool i by mid, with their timeouts.
func poolFunctions(m *manifest.Manifest, i int) map[int]pool.Function {
	fns := map[int]pool.Function{}
	for j := range m.Commands {
		c := &m.Commands[j]
		if c.Type != manifest.Remote || c.Pool != i {
			continue
		}
		timeout, _ := commandTimeout(c) // checked by loadProgram
		fns[c.Mid] = pool.Function{Name: c.Name, Timeout: timeout}
	}
	return fns
}

// defaultCallTimeout bounds a tool call whose command sets no timeout. A
// hung function should not hold a worker, and its client, forever; five
// minutes is long for an interactive tool yet leaves room for real work.
// Functions known to take longer say so in their metadata. MCP clients
// usually give up sooner (and cancel, which nexus honours the same way).
const defaultCallTimeout = 5 * time.Minute

// commandTimeout reads a command's metadata.timeout: a Go duration string
// ("90s", "2m") or a number of seconds; 0 means no timeout (returned as a
// negative duration, pool.Function's "none"); absent returns 0.
func commandTimeout(c *manifest.Command) (time.Duration, error) {
	raw, ok := c.Metadata["timeout"]
	if !ok || string(raw) == "null" {
		return 0, nil
	}
	bad := fmt.Errorf("metadata.timeout must be a duration such as \"90s\" or a number of seconds (0 for none), got %s", raw)
	var d time.Duration
	var text string
	var seconds float64
	switch {
	case json.Unmarshal(raw, &text) == nil:
		var err error
		if d, err = time.ParseDuration(text); err != nil {
			return 0, bad
		}
	case json.Unmarshal(raw, &seconds) == nil:
		if seconds > float64(math.MaxInt64/int64(time.Second)) {
			return 0, bad
		}
		d = time.Duration(seconds * float64(time.Second))
	default:
		return 0, bad
	}
	switch {
	case d < 0:
		return 0, bad
	case d == 0:
		return -1, nil
	}
	return d, nil
}

// checkSettings refuses nexus settings in a manifest's metadata that nexus
// cannot use, naming where they are.
func checkSettings(m *manifest.Manifest) error {
	for i := range m.Pools {
		if _, err := poolWorkers(&m.Pools[i]); err != nil {
			return fmt.Errorf("%s: pools[%d] (%s): %w", m.Path, i, m.Pools[i].Lang, err)
		}
	}
	for i := range m.Commands {
		if _, err := commandTimeout(&m.Commands[i]); err != nil {
			return fmt.Errorf("%s: commands[%d] (%s): %w", m.Path, i, m.Commands[i].Name, err)
		}
	}
	return nil
}

// poolWorkers reads a pool's metadata.workers: how many processes it runs
// (docs/pool-protocol.md, "Workers"); 0 when it does not say.
func poolWorkers(p *manifest.Pool) (int, error) {
	raw, ok := p.Metadata["workers"]
	if !ok || string(raw) == "null" {
		return 0, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil || n < 1 || n > maxWorkers {
		return 0, fmt.Errorf("metadata.workers must be an integer from 1 to %d, got %s", maxWorkers, raw)
	}
	return n, nil
}

// maxWorkers bounds a pool's processes: more is a typo, not a plan.
const maxWorkers = 256

// poolCaller lets the MCP server reach pools (mcp.Caller over pool.Set).
type poolCaller struct{ set *pool.Set }

func (c poolCaller) Call(ctx context.Context, cmd *manifest.Command, args []json.RawMessage, h mcp.CallHooks) (json.RawMessage, error) {
	return c.set.Call(ctx, cmd.Pool, cmd.Mid, args, pool.Hooks{Progress: h.Progress, Log: h.Log, Content: h.Content})
}

func serverInfo(m *manifest.Manifest) mcp.Implementation {
	return mcp.Implementation{Name: m.Name, Version: m.Version()}
}

// startPools starts a program's pools (only the given indices when
// non-nil). Calls get g.timeout unless their command sets its own; a CLI run
// (`nexus run`) has no default timeout, only a --timeout given: a person is
// waiting, with Ctrl-C.
func startPools(m *manifest.Manifest, g *globalFlags, only []int) *pool.Set {
	opts := pool.Options{Logger: slog.Default(), StartTimeout: g.startTimeout, Reaper: true}
	if g.command != "run" || g.timeoutGiven {
		opts.CallTimeout = g.timeout
	}
	return pool.Start(context.Background(), poolSpecs(m, g, only), opts)
}
