package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/eval"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/pool"
)

// purePrograms compiles every pure command of m (internal terminal
// entries too) once, at load. A command whose expression cannot be built,
// or that needs an intrinsic nexus does not have, is left out, with why:
// a bad expr breaks only its own command (PURE.md §1).
func purePrograms(m *manifest.Manifest) (map[*manifest.Command]*eval.Program, map[*manifest.Command]string) {
	progs := map[*manifest.Command]*eval.Program{}
	refused := map[*manifest.Command]string{}
	for i := range m.Commands {
		c := &m.Commands[i]
		if c.Type != manifest.Pure {
			continue
		}
		p, err := eval.CompileCommand(c, &eval.Options{Dir: m.Dir})
		switch {
		case err != nil:
			refused[c] = "cannot build its expression: " + err.Error()
		case p.Refusal() != "":
			refused[c] = p.Refusal()
		default:
			progs[c] = p
		}
	}
	return progs, refused
}

// withoutRefused drops the tools of refused pure commands, writing SPEC
// §4.6's note for each.
func withoutRefused(tools []*argmap.Tool, refused map[*manifest.Command]string) []*argmap.Tool {
	kept := tools[:0]
	for _, t := range tools {
		if why, ok := refused[t.Command]; ok {
			noteExclusion(argmap.Exclusion{Command: t.Command.Name, Reason: why})
			continue
		}
		kept = append(kept, t)
	}
	return kept
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

// programCaller runs a program's commands (mcp.Caller): remote ones in
// their pools, pure ones with the evaluator, in nexus.
type programCaller struct {
	m    *manifest.Manifest
	set  *pool.Set // nil when no command needs a pool
	pure map[*manifest.Command]*eval.Program
}

// TakesInline says that Call honours CallHooks.Inline (mcp.InlineCaller):
// a pool call waits inline or yields stdin first (pool.Inline), and a pure
// command yields it before it is evaluated.
func (programCaller) TakesInline() {}

func (c programCaller) Call(ctx context.Context, call argmap.Call, h mcp.CallHooks) (ndarray.Value, error) {
	call, err := prepareCall(c.m, call)
	if err != nil {
		return ndarray.Value{}, err
	}
	cmd := call.Command
	if cmd.Type == manifest.Pure {
		if h.Inline != nil {
			h.Inline.Yield() // the evaluation does not watch stdin
		}
		prog := c.pure[cmd]
		if prog == nil {
			return ndarray.Value{}, fmt.Errorf("pure command '%s' cannot run: its expression did not build", cmd.Name)
		}
		args, err := call.JSONArgs() // the evaluator takes JSON, never arrays
		if err != nil {
			return ndarray.Value{}, err
		}
		// Its output streams write files (named by the tool's result) and
		// stderr; stdout is the protocol's (such tools are left out).
		streams := &runStreams{}
		out, err := prog.RunWith(ctx, args, eval.RunOptions{Streams: streams})
		if err == nil && len(streams.files) > 0 && h.Content != nil {
			h.Content(writtenBlocks(out, streams.files))
		}
		return ndarray.Value{JSON: out}, err
	}
	if c.set == nil {
		return ndarray.Value{}, fmt.Errorf("command '%s' needs a pool, and none was started", cmd.Name)
	}
	return c.set.CallWith(ctx, cmd.Pool, cmd.Mid, call.Args, pool.CallOptions{
		Hooks:  pool.Hooks{Progress: h.Progress, Log: h.Log, Content: h.Content, Ask: askHook(h.Ask)},
		Arrays: call.Arrays,
		// mcp reads them no more (mcp.Caller), and neither does this.
		GiveArrays: true,
		Ret:        call.Ret,
		Inline:     poolInline(h.Inline),
	})
}

// poolInline passes mcp's InlineWait on to the pool.
func poolInline(in *mcp.InlineWait) *pool.Inline {
	if in == nil {
		return nil
	}
	return &pool.Inline{Fd: in.Fd, Yield: in.Yield}
}

// evalFailure is how the CLI words a pure command's failure, as morloc's
// does (PURE.md §4): "Error: evaluation failed: PURE: boom int", status 1.
func evalFailure(err error) error {
	var ee *eval.Error
	if errors.As(err, &ee) {
		return &exitError{code: 1, err: fmt.Errorf("evaluation failed: %s", ee.Msg), plain: true}
	}
	return err
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
