package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
)

// A running function may ask the client three things (docs/spec.md §6.3,
// through CallHooks.Ask): kind "elicit" is MCP's elicitation/create,
// "sample" sampling/createMessage and "roots" roots/list. In the handshake
// era nexus sends these as server requests on the call's own stream and
// waits for the client's response (this file); in 2026-07-28 the call ends
// with an input_required result instead, and the client's retry carries the
// answers (mrtr.go).

// askKind describes one kind of question: its MCP method, the client
// capability it needs, and the first protocol version that has it.
type askKind struct {
	method     string
	capability string
	since      string
}

var askKinds = map[string]askKind{
	"elicit": {method: "elicitation/create", capability: "elicitation", since: "2025-06-18"},
	"sample": {method: "sampling/createMessage", capability: "sampling", since: "2024-11-05"},
	"roots":  {method: "roots/list", capability: "roots", since: "2024-11-05"},
}

// AskError is why a function's question could not be put to the client or
// was not answered: the function sees its text.
type AskError struct{ Message string }

func (e *AskError) Error() string { return e.Message }

// askable checks that the client declared what a question needs (MCP:
// "Servers MUST NOT send requests for capabilities the client has not
// declared"); kind must be one of askKinds.
func askable(kind string, version string, declared json.RawMessage) (askKind, error) {
	k, ok := askKinds[kind]
	if !ok {
		return k, &AskError{fmt.Sprintf("unknown question kind %q (want elicit, sample or roots)", kind)}
	}
	if version < k.since {
		return k, &AskError{fmt.Sprintf("the client speaks MCP %s, which has no %s (it came with %s)", version, k.method, k.since)}
	}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(declared, &caps)
	c, ok := caps[k.capability]
	if !ok || isNull(c) {
		return k, &AskError{fmt.Sprintf("the client did not declare the %s capability, so nexus cannot send it %s", k.capability, k.method)}
	}
	if kind == "elicit" && !elicitsForms(c) {
		return k, &AskError{"the client declared elicitation for URLs only, and nexus asks with a form (elicitation mode \"form\")"}
	}
	return k, nil
}

// elicitsForms reports whether an elicitation capability admits form mode:
// an empty object does (2025-06-18, and 2025-11-25 for compatibility), or
// one naming "form".
func elicitsForms(c json.RawMessage) bool {
	var modes map[string]json.RawMessage
	if json.Unmarshal(c, &modes) != nil || len(modes) == 0 {
		return true
	}
	_, form := modes["form"]
	return form
}

// pendingAsks are the server requests of a session waiting for the
// client's response, by id.
type pendingAsks struct {
	mu   sync.Mutex
	next int64
	wait map[string]chan *Answer
}

// Deliver hands the client's response to the server request it answers;
// a response to no request waiting (it came late, or was never asked for)
// is dropped. Transports call it for every Item with an Answer.
func (ss *Session) Deliver(a *Answer) {
	key := idKey(a.ID)
	ss.asks.mu.Lock()
	ch := ss.asks.wait[key]
	delete(ss.asks.wait, key)
	ss.asks.mu.Unlock()
	if ch == nil {
		ss.srv.log.Debug("dropping a response to no request of ours", "id", string(a.ID))
		return
	}
	ch <- a
}

// ask is a handshake-era call's CallHooks.Ask: the question goes out on
// the stream of the request that made the call, which its ctx carries.
func (ss *Session) ask(ctx context.Context, q Question) (json.RawMessage, error) {
	return ss.askClient(ctx, notifierFrom(ctx), q.Kind, q.Params)
}

// askClient puts a function's question to the client as a server request
// on notify (the call's own stream) and waits for the response, for ctx
// (the call's life) to end, or for the session to close.
func (ss *Session) askClient(ctx context.Context, notify func(*Notification), kind string, params json.RawMessage) (json.RawMessage, error) {
	ss.mu.Lock()
	version, caps := ss.version, ss.capabilities
	ss.mu.Unlock()
	k, err := askable(kind, version, caps)
	if err != nil {
		return nil, err
	}
	ch := make(chan *Answer, 1)
	ss.asks.mu.Lock()
	if ss.asks.wait == nil {
		ss.asks.wait = map[string]chan *Answer{}
	}
	ss.asks.next++
	id := json.RawMessage(strconv.Quote("nexus-" + strconv.FormatInt(ss.asks.next, 10)))
	key := idKey(id)
	ss.asks.wait[key] = ch
	ss.asks.mu.Unlock()
	forget := func() {
		ss.asks.mu.Lock()
		delete(ss.asks.wait, key)
		ss.asks.mu.Unlock()
	}
	notify(&Notification{ID: id, Method: k.method, Params: params})
	select {
	case a := <-ch:
		if a.Error != nil {
			return nil, &AskError{fmt.Sprintf("the client answered %s with an error: %s (code %d)", k.method, a.Error.Message, a.Error.Code)}
		}
		return a.Result, nil
	case <-ctx.Done():
		forget()
		// MCP cancellation: tell the client the request is no longer wanted.
		notify(&Notification{Method: "notifications/cancelled", Params: map[string]any{"requestId": id, "reason": "the call that asked ended"}})
		return nil, ctx.Err()
	}
}
