package program

import (
	"fmt"
	"os"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/httpserve"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
)

// Program is a program loaded to serve: its manifest, its tools, its pure
// commands compiled, and its resources and prompts.
type Program struct {
	Manifest *manifest.Manifest
	Tools    []*argmap.Tool
	// Excluded are the commands that have no tool, with why (GET
	// /discover lists them).
	Excluded []argmap.Exclusion
	Catalog  *mcp.Catalog
	pure     map[*manifest.Command]pureCommand
}

// Load reads the program a target names, compiles its pure commands and
// builds its tool surface, writing docs/spec.md §4.6's note for each
// command left off it: those argmap cannot serve, and pure ones that
// cannot run.
func Load(target string, o *Options) (*Program, error) {
	m, err := manifest.Load(target)
	if err != nil {
		return nil, err
	}
	tools, excluded := argmap.Tools(m)
	for _, e := range excluded {
		o.noteExclusion(e)
	}
	pure := purePrograms(m)
	kept := tools[:0]
	for _, t := range tools {
		if r := pure[t.Command].refused; r != nil {
			e := argmap.Exclusion{Command: t.Command.Name, Reason: r.reason()}
			o.noteExclusion(e)
			excluded = append(excluded, e)
			continue
		}
		kept = append(kept, t)
	}
	if err := tuneTools(kept); err != nil {
		return nil, err
	}
	catalog, err := mcp.NewCatalog([]mcp.CatalogProgram{{Manifest: m, Tools: kept}})
	if err != nil {
		return nil, err
	}
	return &Program{Manifest: m, Tools: kept, Excluded: excluded, Catalog: catalog, pure: pure}, nil
}

// Surface is what MCP serves of the program, its calls going to caller.
func (p *Program) Surface(caller mcp.Caller) mcp.Surface {
	return mcp.Surface{Info: serverInfo(p.Manifest), Tools: p.Tools, Caller: caller, Catalog: p.Catalog}
}

// served is the program as an HTTP server takes it.
func (p *Program) served(caller mcp.Caller) httpserve.Program {
	return httpserve.Program{Manifest: p.Manifest, Tools: p.Tools, Excluded: p.Excluded, Caller: caller}
}

// Start starts the pools the program needs (none when every command is
// pure) and returns what calls its commands, and what stops the pools.
func (p *Program) Start(o *Options) (*Caller, func()) {
	c := &Caller{m: p.Manifest, pure: p.pure}
	if !hasRemote(p.Manifest) {
		return c, func() {}
	}
	set := startPools(p.Manifest, o, nil)
	c.pools = set
	return c, func() { set.Close() }
}

func serverInfo(m *manifest.Manifest) mcp.Implementation {
	return mcp.Implementation{Name: m.Name, Version: m.Version()}
}

// hasRemote reports whether any command of m runs in a pool: a program
// whose commands are all pure starts none.
func hasRemote(m *manifest.Manifest) bool {
	for i := range m.Commands {
		if m.Commands[i].Type != manifest.Pure {
			return true
		}
	}
	return false
}

// envArrayMin overrides argmap.DefaultArrayMin, for measuring and tuning
// (docs/performance.md): the fewest elements a numeric argument needs to
// travel to a pool as an array (0: never).
const envArrayMin = "NEXUS_ARRAY_MIN"

// tuneTools applies NEXUS_ARRAY_MIN to a program's tools.
func tuneTools(tools []*argmap.Tool) error {
	v := os.Getenv(envArrayMin)
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("%s=%q: want a count of elements, 0 or more", envArrayMin, v)
	}
	for _, t := range tools {
		t.ArrayMin = n
	}
	return nil
}
