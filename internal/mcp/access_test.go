package mcp

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// denyCommands refuses the tools of the commands it names, each needing
// scope "lab:<command>".
type denyCommands []string

func (d denyCommands) Check(t *argmap.Tool) ([]string, bool) {
	need := []string{"mcp", "lab:" + t.Command.Name}
	return need, !slices.Contains(d, t.Command.Name)
}

// countingPool counts the calls that reach it.
type countingPool struct {
	next  Caller
	calls atomic.Int64
}

func (p *countingPool) Call(ctx context.Context, c argmap.Call, h CallHooks) (ndarray.Value, error) {
	p.calls.Add(1)
	return p.next.Call(ctx, c, h)
}

// reqIn handles a request line under ctx.
func reqIn(t *testing.T, ctx context.Context, ss *Session, line string) string {
	t.Helper()
	return marshal(t, ss.Handle(ctx, req(t, line), nil))
}

// A tool the access refuses is left out of tools/list, and so are the
// template and the prompt its command computes; using any of them is
// refused with the scope it needs, and nothing reaches the pool.
func TestAccessHidesAndRefuses(t *testing.T) {
	srv, _ := newCatalogServer(t, Options{})
	pool := &countingPool{next: srv.current().caller}
	sf := srv.current()
	srv.SetSurface(Surface{Info: sf.info, Tools: sf.tools, Caller: pool, Catalog: sf.catalog})
	ctx := WithAccess(context.Background(), denyCommands{"stats", "explain", "plot", "names"})
	for _, stateless := range []bool{false, true} {
		name := "handshake"
		params := func(members string) string { return "{" + members + "}" }
		if stateless {
			name = "stateless"
			params = statelessParams
		}
		t.Run(name, func(t *testing.T) {
			ss := initialized(t, srv, "2025-11-25", nil)
			line := func(method, p string) string {
				return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + p + `}`
			}
			tools := reqIn(t, ctx, ss, line("tools/list", params("")))
			if strings.Contains(tools, `"name":"stats"`) || strings.Contains(tools, `"name":"plot"`) || !strings.Contains(tools, `"name":"blocks"`) {
				t.Errorf("tools/list: %s", tools)
			}
			if stateless && !strings.Contains(tools, `"cacheScope":"private"`) {
				t.Errorf("a filtered list is cached publicly: %s", tools)
			}
			templates := reqIn(t, ctx, ss, line("resources/templates/list", params("")))
			if strings.Contains(templates, "stats://") || !strings.Contains(templates, "double://") {
				t.Errorf("resources/templates/list: %s", templates)
			}
			prompts := reqIn(t, ctx, ss, line("prompts/list", params("")))
			if strings.Contains(prompts, `"name":"explain"`) || !strings.Contains(prompts, `"name":"conversation"`) || !strings.Contains(prompts, `"name":"look"`) {
				t.Errorf("prompts/list: %s", prompts)
			}
			before := pool.calls.Load()
			for _, c := range []struct{ method, members, scope string }{
				{"tools/call", `"name":"stats","arguments":{"sample":"x"}`, "mcp lab:stats"},
				{"tools/call", `"name":"plot","arguments":{"path":"x.png"}`, "mcp lab:plot"},
				{"resources/read", `"uri":"stats://x"`, "mcp lab:stats"},
				{"prompts/get", `"name":"explain","arguments":{"sample":"x","depth":"1"}`, "mcp lab:explain"},
				{"completion/complete", `"ref":{"type":"ref/resource","uri":"stats://{sample}"},"argument":{"name":"sample","value":"c"}`, "mcp lab:names"},
			} {
				got := reqIn(t, ctx, ss, line(c.method, params(c.members)))
				want := `"error":{"code":-32003,"message":"insufficient scope: `
				if !strings.Contains(got, want) || !strings.Contains(got, `"data":{"scope":["`+strings.ReplaceAll(c.scope, " ", `","`)+`"]}`) {
					t.Errorf("%s %s: %s", c.method, c.members, got)
				}
			}
			if n := pool.calls.Load() - before; n != 0 {
				t.Errorf("%d refused calls reached the pool", n)
			}
			// What the access allows still runs.
			if got := reqIn(t, ctx, ss, line("resources/read", params(`"uri":"double://4"`))); !strings.Contains(got, `"n\":8`) && !strings.Contains(got, `\"n\":8`) {
				t.Errorf("an allowed template: %s", got)
			}
			if pool.calls.Load() == before {
				t.Error("the allowed read never reached the pool")
			}
		})
	}
}

// A task-capable tool the access refuses never becomes a task.
func TestAccessRefusesTasks(t *testing.T) {
	pool := newFakePool()
	srv := newTaskServer(t, pool, Options{})
	ctx := WithAccess(context.Background(), denyCommands{"work"})
	ss := initialized(t, srv, "2025-11-25", nil)
	got := reqIn(t, ctx, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"_1":1},"task":{}}}`)
	if !strings.Contains(got, `"code":-32003`) {
		t.Errorf("a refused task: %s", got)
	}
	if list := reqIn(t, ctx, ss, `{"jsonrpc":"2.0","id":2,"method":"tasks/list"}`); !strings.Contains(list, `"tasks":[]`) {
		t.Errorf("tasks/list after a refused task: %s", list)
	}
	if pool.total() != 0 {
		t.Errorf("%d calls reached the pool", pool.total())
	}
}
