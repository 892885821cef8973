package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

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
		specs = append(specs, pool.Spec{Index: i, Lang: p.Lang, Exec: p.Exec, Dir: m.Dir, Workers: workers})
	}
	return specs
}

// checkSettings refuses nexus settings in a manifest's metadata that nexus
// cannot use, naming where they are.
func checkSettings(m *manifest.Manifest) error {
	for i := range m.Pools {
		if _, err := poolWorkers(&m.Pools[i]); err != nil {
			return fmt.Errorf("%s: pools[%d] (%s): %w", m.Path, i, m.Pools[i].Lang, err)
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
	return c.set.Call(ctx, cmd.Pool, cmd.Mid, args, pool.Hooks{Progress: h.Progress, Log: h.Log})
}

func serverInfo(m *manifest.Manifest) mcp.Implementation {
	return mcp.Implementation{Name: m.Name, Version: m.Version()}
}

func startPools(m *manifest.Manifest, g *globalFlags, only []int) *pool.Set {
	return pool.Start(context.Background(), poolSpecs(m, g, only), pool.Options{Logger: slog.Default()})
}
