package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/nexus-mcp/nexus/internal/argmap"
)

// Besides tools/call, three requests run a program's function (docs/spec.md
// §6.1): resources/read of a URI a template's command computes, prompts/get
// of a prompt a command computes, and completion/complete of an argument
// whose completer is a command. They take the path tools/call takes
// (runTool): the arguments are checked against the command's tool and made
// positional (argmap), the call goes through the surface's caller to the
// pool (the command's timeout, cancellation with the request), and the
// function may report progress, log, answer with content blocks, and ask
// the client: in the handshake era as server requests on the request's
// stream, in 2026-07-28 through an MRTR round (input_required) whose
// requestState is bound to the request's subject.

// commandResult is what a command run for such a request gave.
type commandResult struct {
	// value is the result as JSON (argmap.ResultValue), nil when the
	// function answered with content blocks and no value.
	value json.RawMessage
	// blocks are the content blocks the function answered with, if any.
	blocks json.RawMessage
	// input, in 2026-07-28, is the request's answer in place of a result:
	// the function asked what the client must answer (MRTR).
	input object
}

// runCommand runs tool's command with args (a tools/call arguments object)
// for request r. subject names what r is about ("prompt 'p'", "resource
// 'u'"), in errors and as the requestState's binding. A function that
// fails, times out or is cancelled is a -32603 naming subject: these
// requests have no isError result.
func (s *Server) runCommand(ctx context.Context, r *Request, sf *surface, c client, tool *argmap.Tool, args json.RawMessage, subject string) (commandResult, *Error) {
	var out commandResult
	if rpcErr := refusal(ctx, tool, subject); rpcErr != nil {
		return out, rpcErr
	}
	call, err := tool.ToPositional(args)
	if err != nil {
		return out, errorf(CodeInvalidParams, "%s: %s", subject, err.Error())
	}
	f := featuresOf(c.version)
	var round *inputRound
	if f.stateless && r != nil {
		var rpcErr *Error
		if round, rpcErr = s.openRound(r, subject, args, c.capabilities); rpcErr != nil {
			return out, rpcErr
		}
	}
	notify := notifierFrom(ctx)
	var blocksMu sync.Mutex
	hooks := CallHooks{
		Log: s.functionLogger(tool.Name, notify, c.logLevel),
		Content: func(b json.RawMessage) {
			blocksMu.Lock()
			out.blocks = b
			blocksMu.Unlock()
		},
	}
	if r != nil {
		if token := progressToken(r); token != nil {
			hooks.Progress = progressNotifier(notify, token, f.progressMessage)
		}
	}
	callCtx, cancel := askThrough(ctx, round, c, &hooks)
	defer cancel()
	hooks.Inline = inlineFor(ctx, sf.caller)
	raw, err := sf.caller.Call(callCtx, call, hooks)
	if round != nil && ctx.Err() == nil && round.needsInput() {
		if out.input, err = s.inputRequired(round); err != nil {
			return out, errorf(CodeInternalError, "%s: the function asked the client something nexus could not pass on: %v", subject, err)
		}
		return out, nil
	}
	if err != nil {
		switch OutcomeOf(ctx, err) {
		case OutcomeCancelled:
			return out, errorf(CodeInternalError, "%s: the call to '%s' was cancelled", subject, tool.Name)
		case OutcomeTimeout:
			s.callFailed(tool.Name, err, notify, c.logLevel)
			return out, &Error{Code: CodeInternalError, Message: fmt.Sprintf("%s: %s", subject, err.Error()), Data: map[string]any{"timeout": true}}
		}
		s.callFailed(tool.Name, err, notify, c.logLevel)
		return out, errorf(CodeInternalError, "%s: %s", subject, err.Error())
	}
	blocksMu.Lock()
	blocks := out.blocks
	blocksMu.Unlock()
	if len(blocks) == 0 || !isNull(raw.JSON) || len(raw.Arrays) > 0 {
		if out.value, err = argmap.ResultValue(&call.Command.Return, raw); err != nil {
			var tm *argmap.TypeMismatch
			if errors.As(err, &tm) {
				return out, errorf(CodeInternalError, "%s: '%s' returned %s", subject, tool.Name, tm.Error())
			}
			return out, errorf(CodeInternalError, "%s: '%s' returned a value nexus cannot read: %v", subject, tool.Name, err)
		}
	}
	return out, nil
}

// progressToken is params._meta.progressToken, nil when absent or null.
func progressToken(r *Request) json.RawMessage {
	meta := requestMeta(r)
	tok, ok := meta["progressToken"]
	if !ok || isNull(tok) {
		return nil
	}
	return bytes.Clone(tok)
}

// sessionClient is a handshake-era session's client.
func (ss *Session) client() client {
	ss.mu.Lock()
	version, caps := ss.version, ss.capabilities
	ss.mu.Unlock()
	return client{version: version, logLevel: ss.LogLevel, capabilities: caps, session: ss}
}

// statelessClient is a 2026-07-28 request's client.
func statelessClient(m statelessMeta) client {
	return client{version: m.version, logLevel: func() string { return m.logLevel }, capabilities: m.capabilities}
}

// askThrough routes a call's questions to the client: through an MRTR
// round (2026-07-28), whose context the round may cancel once it has a
// question to return, or through the session (made once per session: a
// call that never asks pays nothing). The caller defers the cancel.
func askThrough(ctx context.Context, round *inputRound, c client, hooks *CallHooks) (context.Context, context.CancelFunc) {
	if round != nil {
		callCtx, cancel := context.WithCancel(ctx)
		round.cancel = cancel
		hooks.Ask = round.ask
		return callCtx, cancel
	}
	if c.session != nil {
		hooks.Ask = c.session.askHook
	}
	return ctx, func() {}
}
