package program

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/eval"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/pool"
)

// Caller runs a program's commands (mcp.Caller): pure ones with the
// evaluator, in nexus, the others in their pools. MCP and HTTP reach it
// through Call; the CLI run, which checks its call itself before any pool
// starts, through dispatch.
type Caller struct {
	m     *manifest.Manifest
	pure  map[*manifest.Command]pureCommand
	pools pools // nil when no command needs a pool
	// stdout is where a pure command's @stdout stream goes: the CLI's
	// stdout; nil over MCP, where stdout is the protocol's.
	stdout io.Writer
}

// TakesInline says that Call honours CallHooks.Inline (mcp.InlineCaller):
// a pool call waits inline or yields stdin first (pool.Inline), and a pure
// command yields it before it is evaluated.
func (*Caller) TakesInline() {}

// Call prepares a call (prepareCall) and runs it.
func (c *Caller) Call(ctx context.Context, call argmap.Call, h mcp.CallHooks) (ndarray.Value, error) {
	call, err := prepareCall(c.m, call)
	if err != nil {
		return ndarray.Value{}, err
	}
	return c.dispatch(ctx, call, h)
}

// dispatch runs a prepared call: a pure command evaluated, any other sent
// to its pool.
func (c *Caller) dispatch(ctx context.Context, call argmap.Call, h mcp.CallHooks) (ndarray.Value, error) {
	cmd := call.Command
	if cmd.Type == manifest.Pure {
		if h.Inline != nil {
			h.Inline.Yield() // the evaluation does not watch stdin
		}
		return c.evaluate(ctx, call, h)
	}
	if c.pools == nil {
		return ndarray.Value{}, fmt.Errorf("command '%s' needs a pool, and none was started", cmd.Name)
	}
	return c.pools.CallWith(ctx, cmd.Pool, cmd.Mid, call.Args, pool.CallOptions{
		Hooks:  pool.Hooks{Progress: h.Progress, Log: h.Log, Content: h.Content, Ask: askHook(h.Ask)},
		Arrays: call.Arrays,
		// Neither mcp (mcp.Caller) nor the CLI reads them again.
		GiveArrays: true,
		Ret:        call.Ret,
		Inline:     poolInline(h.Inline),
	})
}

// evaluate runs a pure command. Its output streams write files (which the
// tool's result names) and stderr, and stdout where there is one for them
// (over MCP there is not: such tools are left out).
func (c *Caller) evaluate(ctx context.Context, call argmap.Call, h mcp.CallHooks) (ndarray.Value, error) {
	pc, ok := c.pure[call.Command]
	switch {
	case pc.refused != nil:
		return ndarray.Value{}, pc.refused
	case !ok:
		return ndarray.Value{}, fmt.Errorf("pure command '%s' was not compiled", call.Command.Name)
	}
	args, err := call.JSONArgs() // the evaluator takes JSON, never arrays
	if err != nil {
		return ndarray.Value{}, err
	}
	streams := &runStreams{stdout: c.stdout}
	out, err := pc.prog.RunWith(ctx, args, eval.RunOptions{Streams: streams})
	if err == nil && len(streams.files) > 0 && h.Content != nil {
		h.Content(writtenBlocks(out, streams.files))
	}
	return ndarray.Value{JSON: out}, err
}

// poolInline passes mcp's InlineWait on to the pool.
func poolInline(in *mcp.InlineWait) *pool.Inline {
	if in == nil {
		return nil
	}
	return &pool.Inline{Fd: in.Fd, Yield: in.Yield}
}

// askHook lets a pool's function put its questions through the MCP call's
// Ask (nil when the call cannot ask).
func askHook(ask func(context.Context, mcp.Question) (json.RawMessage, error)) func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
	if ask == nil {
		return nil
	}
	return func(ctx context.Context, kind, key string, params json.RawMessage) (json.RawMessage, error) {
		return ask(ctx, mcp.Question{Kind: kind, Key: key, Params: params})
	}
}
