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
		specs = append(specs, pool.Spec{Index: i, Lang: p.Lang, Exec: p.Exec, Dir: m.Dir, Workers: g.workers})
	}
	return specs
}

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
