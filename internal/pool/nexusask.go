package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// A running function may put a question to the client: it sends `ask`, and
// nexus answers with `answer` once the call's Hooks.Ask returns
// (docs/internals.md, "Messages": ask and answer).
const (
	typeAsk    = "ask"
	typeAnswer = "answer"
)

// Ask kinds, as Hooks.Ask takes them: MCP's elicitation/create,
// sampling/createMessage and roots/list.
const (
	AskElicit = "elicit"
	AskSample = "sample"
	AskRoots  = "roots"
)

// startAsk hands one ask to its call's Ask hook on a goroutine of its own:
// the hook waits for the client, for as long as the client takes, and the
// reader must go on reading (the call's cancel, other calls' replies). An
// ask for a call that is not in flight is ignored: its reply has come, or
// nexus gave up on it.
func (p *process) startAsk(msg *inbound) {
	id, n := *msg.ID, *msg.Ask
	pc := p.pending(id)
	if pc == nil {
		p.logger.Debug("pool asked for a call not in flight: ignored", "pool", p.label, "id", id, "ask", n, "kind", msg.Kind)
		return
	}
	ctx, hook, live := pc.askContext()
	if !live {
		return
	}
	p.logger.Debug("pool asks the client", "pool", p.label, "id", id, "ask", n, "kind", msg.Kind)
	go p.runAsk(ctx, id, pc, hook, n, msg.Kind, msg.Key, msg.Params)
}

// runAsk gets the answer to one ask and sends it, unless the call has
// ended meanwhile (the pool has stopped waiting then).
func (p *process) runAsk(ctx context.Context, id uint64, pc *pendingCall, hook askHook, n int64, kind, key string, params json.RawMessage) {
	result, err := askClient(ctx, hook, kind, key, params)
	// ctx ends only with the call (its caller gave up, it timed out, its
	// reply came): the pool hears of that through cancel, not an answer.
	if ctx.Err() != nil || !pc.live() || p.pending(id) != pc {
		return
	}
	payload := appendAnswer(id, n, result, err)
	if len(payload)-frameHeader > MaxFrameSize {
		payload = appendAnswer(id, n, nil, fmt.Errorf("the client's answer takes %d bytes, over the %d MiB frame limit", len(result), MaxFrameSize>>20))
	}
	p.out.push(outFrame{payload: payload})
}

type askHook = func(ctx context.Context, kind, key string, params json.RawMessage) (json.RawMessage, error)

// askClient runs the hook for one ask and checks what it returns: the
// pool gets a JSON object or an error, never a broken frame.
func askClient(ctx context.Context, hook askHook, kind, key string, params json.RawMessage) (json.RawMessage, error) {
	switch kind {
	case AskElicit, AskSample, AskRoots:
	default:
		return nil, fmt.Errorf("unknown ask kind %q (nexus knows %s, %s and %s)", kind, AskElicit, AskSample, AskRoots)
	}
	if hook == nil {
		return nil, fmt.Errorf("this call cannot ask the client (%s): it was not made by an MCP client that could answer; "+
			"the command line and the plain JSON API have no one to ask", kind)
	}
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	result, err := hook(ctx, kind, key, params)
	if err != nil {
		return nil, err
	}
	if err := checkAnswer(result); err != nil {
		return nil, fmt.Errorf("the client's answer to %s: %v", kind, err)
	}
	return result, nil
}

// checkAnswer makes sure a result is one JSON object in UTF-8: it goes
// into the answer frame as it is.
func checkAnswer(result json.RawMessage) error {
	if !utf8.Valid(result) {
		return errors.New("not UTF-8")
	}
	start, _, err := jsontext.Whole(result)
	if err != nil {
		return err
	}
	if result[start] != '{' {
		return errors.New("not a JSON object")
	}
	return nil
}

// appendAnswer writes an answer message after frameHeader bytes of room:
// the result when err is nil, else err's text.
func appendAnswer(id uint64, n int64, result json.RawMessage, err error) []byte {
	b := make([]byte, frameHeader, frameHeader+64+len(result))
	b = append(b, `{"type":"answer","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"ask":`...)
	b = strconv.AppendInt(b, n, 10)
	if err != nil {
		b = append(b, `,"error":`...)
		b = jsontext.AppendString(b, []byte(err.Error())) // invalid UTF-8 becomes U+FFFD
	} else {
		b = append(b, `,"result":`...)
		b = append(b, result...)
	}
	return append(b, '}')
}

// askContext returns the context and hook for an ask of the call, making
// the context on the first ask; live is false once the call has ended.
func (c *pendingCall) askContext() (ctx context.Context, hook askHook, live bool) {
	c.hookMu.Lock()
	defer c.hookMu.Unlock()
	if c.finished {
		return nil, nil, false
	}
	if c.askCtx == nil {
		parent := c.ctx
		if parent == nil {
			parent = context.Background()
		}
		c.askCtx, c.askCancel = context.WithCancel(parent)
	}
	return c.askCtx, c.hooks.Ask, true
}

// live reports whether the call is still waiting for its reply.
func (c *pendingCall) live() bool {
	c.hookMu.Lock()
	defer c.hookMu.Unlock()
	return !c.finished
}
