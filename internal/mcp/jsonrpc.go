package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/nexus-mcp/nexus/internal/jsontext"

	"github.com/nexus-mcp/nexus/internal/argmap"
)

// JSON-RPC 2.0 error codes (JSON-RPC 2.0 §5.1) and MCP's own.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

func errorf(code int, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Request is one incoming JSON-RPC message that has a method: a request
// (ID set) or a notification (ID nil).
type Request struct {
	// ID is the raw id as the client wrote it, echoed verbatim in the reply;
	// nil for a notification.
	ID     json.RawMessage
	Method string
	// Params is the raw params value, nil when absent.
	Params json.RawMessage

	// members indexes Params' members, found once (by the decoder, or on
	// first use) so that every question about params reads it only once.
	members atomic.Pointer[[]member]
	// decoded holds the decoder's members, where members first points:
	// no allocation of a slice header of their own.
	decoded []member
	// meta is params._meta decoded, once: every era question asks it.
	meta atomic.Pointer[map[string]json.RawMessage]
	// unchecked is set when params.arguments of this tools/call was only
	// skipped over, not checked, when the line was read: the call's own
	// reading of it checks it (see runTool).
	unchecked bool
}

// Param returns the raw value of params' member name (exactly matched),
// without reading the rest of params again.
func (r *Request) Param(name string) (json.RawMessage, bool) { return r.param(name) }

// Meta returns params._meta decoded, nil when absent or not an object.
func (r *Request) Meta() map[string]json.RawMessage { return requestMeta(r) }

// param returns the raw value of params' member name, exactly matched.
func (r *Request) param(name string) (json.RawMessage, bool) {
	ms := r.members.Load()
	if ms == nil {
		found := paramMembers(r.Params)
		r.members.CompareAndSwap(nil, &found)
		ms = r.members.Load()
	}
	var v json.RawMessage
	ok := false
	for _, m := range *ms {
		if m.Key == name {
			v, ok = m.Value.(json.RawMessage), true // the last one wins, as in encoding/json
		}
	}
	return v, ok
}

// releaseParams lets the request's params go once they are read: a
// large call's arguments need not stay in memory while its pool works.
func (r *Request) releaseParams() {
	r.Params = nil
	r.members.Store(&noMembers)
}

// noMembers are the members of a request whose params were let go; read
// only, shared by all.
var noMembers = []member{}

// paramMembers lists the members of a params object (none when it is not
// one).
func paramMembers(params json.RawMessage) []member {
	start := jsontext.SkipSpace(params, 0)
	if start >= len(params) || params[start] != '{' {
		return nil
	}
	var ms []member
	_, err := jsontext.Object(params, start, func(key []byte, escaped bool, vs, ve int) error {
		name := string(key[1 : len(key)-1])
		if escaped {
			name = jsontext.Unquote(key)
		}
		ms = append(ms, member{Key: name, Value: json.RawMessage(params[vs:ve])})
		return nil
	}, 1)
	if err != nil {
		return nil
	}
	return ms
}

// IsNotification reports whether the message expects no reply.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Response is one outgoing reply. Exactly one of Result and Error is set.
type Response struct {
	ID     json.RawMessage
	Result any
	Error  *Error
}

var nullID = json.RawMessage("null")

// MarshalJSON writes {"jsonrpc":"2.0","id":...,"result"|"error":...} in that order.
func (r *Response) MarshalJSON() ([]byte, error) { return r.appendJSON(nil) }

// appendJSON appends the response; a result that can write itself
// (CallToolResult) does, and so is never marshalled by reflection.
func (r *Response) appendJSON(b []byte) ([]byte, error) {
	id := r.ID
	if id == nil {
		id = nullID
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	if r.Error != nil {
		e, err := json.Marshal(r.Error)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"error":`...)
		b = append(b, e...)
		return append(b, '}'), nil
	}
	b = append(b, `,"result":`...)
	var err error
	switch res := r.Result.(type) {
	case nil:
		b = append(b, "{}"...)
	case interface{ appendJSON([]byte) ([]byte, error) }:
		if b, err = res.appendJSON(b); err != nil {
			return nil, err
		}
	default:
		v, err := marshalCompact(res)
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// marshalLine encodes one outgoing message followed by a newline, in one
// buffer: a Response writes itself, anything else goes through
// encoding/json.
func marshalLine(v any) ([]byte, error) {
	if r, ok := v.(*Response); ok {
		size := 256
		if h, ok := r.Result.(interface{ sizeHint() int }); ok {
			size += h.sizeHint()
		}
		b, err := r.appendJSON(make([]byte, 0, size))
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
	b, err := marshalCompact(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Notification is an outgoing server message that travels as a
// notification does (on stdout, on the request's SSE stream): a
// notification, or, when ID is set, a request the server makes of the
// client (elicitation/create, sampling/createMessage, roots/list), whose
// reply comes back as an Item's Answer.
type Notification struct {
	ID     json.RawMessage
	Method string
	Params any
}

// MarshalJSON writes {"jsonrpc":"2.0",["id":...,]"method":...,"params":...},
// without params when there are none (JSON-RPC 2.0 §4.2: params is
// structured or absent).
func (n *Notification) MarshalJSON() ([]byte, error) {
	m, _ := json.Marshal(n.Method)
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0",`)
	if n.ID != nil {
		b.WriteString(`"id":`)
		b.Write(n.ID)
		b.WriteByte(',')
	}
	b.WriteString(`"method":`)
	b.Write(m)
	if n.Params != nil {
		p, err := marshalCompact(n.Params)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"params":`)
		b.Write(p)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalCompact marshals without HTML escaping, so "<" stays "<" on the wire.
func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Item is one element of an incoming message: a Request to handle, a Reply
// to send at once (the element was invalid), an Answer (the client's
// response to a request the server made: give it to Session.Deliver), or
// none of them (nothing to do).
type Item struct {
	Request *Request
	Reply   *Response
	Answer  *Answer
}

// Answer is a response from the client to a server request: exactly one
// of Result and Error is set.
type Answer struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// ParseMessages parses one transport message (a stdio line, an HTTP body):
// a single JSON-RPC message or a batch (JSON-RPC 2.0 §6), reported by
// batch. It never fails: faults become Replies (-32700 for bad JSON,
// -32600 for an empty array or a malformed element).
func ParseMessages(body []byte) (items []Item, batch bool) { return decodeLine(body, false) }

// decodeLine parses one line: a single message or a batch (JSON-RPC 2.0 §6).
// It never fails: faults become replies. With lazy, the arguments of a
// tools/call request are skipped over rather than checked (see
// decodeObject); only stdio, which answers every message in its own time,
// reads lines so.
func decodeLine(line []byte, lazy bool) (items []Item, batch bool) {
	start := jsontext.SkipSpace(line, 0)
	if start < len(line) && line[start] == '{' {
		// The common case, in one pass that checks the syntax as it goes.
		if it, ok := decodeObject(line, start, lazy); ok {
			return []Item{it}, false
		}
		return []Item{{Reply: parseError(unmarshalError(line))}}, false
	}
	if start < len(line) && line[start] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil {
			return []Item{{Reply: parseError(err)}}, false
		}
		if len(elems) == 0 {
			return []Item{{Reply: &Response{Error: errorf(CodeInvalidRequest, "invalid request: empty batch array")}}}, false
		}
		items = make([]Item, 0, len(elems))
		for _, e := range elems {
			items = append(items, decodeMessage(e))
		}
		return items, true
	}
	if !json.Valid(line) {
		return []Item{{Reply: parseError(unmarshalError(line))}}, false
	}
	return []Item{decodeMessage(line)}, false
}

// checkArguments is the check a lazily read tools/call skipped: nil when
// its arguments are valid JSON, else the parse error the whole line gets
// (JSON-RPC 2.0 §5.1), worded by encoding/json as it words that line.
func checkArguments(args json.RawMessage) *Error {
	if _, err := jsontext.ValueIn(args, 0, 2); err == nil {
		return nil
	}
	// The arguments at the depth they have in the line, so that
	// encoding/json's words (and its depth limit) are the same.
	line := append(append([]byte(`{"params":{"arguments":`), args...), "}}"...)
	return parseError(unmarshalError(line)).Error
}

// unmarshalError is encoding/json's description of what is wrong with raw.
func unmarshalError(raw []byte) error {
	var v any
	return json.Unmarshal(raw, &v)
}

func parseError(err error) *Response {
	msg := "parse error: invalid JSON"
	if err != nil {
		msg += ": " + err.Error()
	}
	return &Response{Error: errorf(CodeParseError, "%s", msg)}
}

// decodeMessage checks one JSON value against JSON-RPC 2.0 §4.
func decodeMessage(raw json.RawMessage) Item {
	start := jsontext.SkipSpace(raw, 0)
	if start < len(raw) && raw[start] == '{' {
		if it, ok := decodeObject(raw, start, false); ok {
			return it
		}
	}
	return Item{Reply: &Response{Error: errorf(CodeInvalidRequest, "invalid request: expected a JSON-RPC object, got %s", jsonKind(raw))}}
}

// decodeObject reads the message object at raw[start] in one pass: its
// members are found in place (none is copied) and, when params is an
// object, so are params' own; ok is false when raw is not valid JSON.
// Keys are matched exactly (encoding/json's struct decoding would accept
// "ID"); of repeated keys the last counts.
//
// With lazy, params.arguments is skipped over by its structure alone when
// the message is a tools/call request: the call reads it once anyway, and
// checks it as it reads (a large call's arguments are most of the line).
// It is checked here in any other message.
func decodeObject(raw []byte, start int, lazy bool) (Item, bool) {
	var id, version, method, params, result, rpcError json.RawMessage
	var hasID, hasVersion, hasMethod, hasParams, hasResult, hasError bool
	var members []member
	skipped := -1 // where the skipped arguments start
	end, err := jsontext.ObjectMembers(raw, start, func(key []byte, escaped bool, vs int) (int, error) {
		name := string(key[1 : len(key)-1])
		if escaped {
			name = jsontext.Unquote(key)
		}
		if name == "params" && vs < len(raw) && raw[vs] == '{' {
			if members == nil {
				members = make([]member, 0, 4) // name, arguments, _meta, task: grown once at most
			}
			members = members[:0]
			skipped = -1
			ve, err := jsontext.ObjectMembers(raw, vs, func(k []byte, esc bool, ps int) (int, error) {
				pname := paramName(k[1 : len(k)-1])
				if esc {
					pname = jsontext.Unquote(k)
				}
				var pe int
				var err error
				if lazy && pname == "arguments" {
					if skipped >= 0 { // a repeated key: only the last is read, so check the one before
						if _, err := jsontext.ValueIn(raw, skipped, 2); err != nil {
							return skipped, err
						}
					}
					pe, err = jsontext.Skip(raw, ps, 2)
					skipped = ps
				} else {
					pe, err = jsontext.ValueIn(raw, ps, 2)
				}
				if err != nil {
					return pe, err
				}
				members = append(members, member{Key: pname, Value: json.RawMessage(raw[ps:pe])})
				return pe, nil
			}, 2)
			params, hasParams = raw[vs:ve], true
			return ve, err
		}
		ve, err := jsontext.ValueIn(raw, vs, 1)
		if err != nil {
			return ve, err
		}
		v := json.RawMessage(raw[vs:ve])
		switch name {
		case "id":
			id, hasID = v, true
		case "jsonrpc":
			version, hasVersion = v, true
		case "method":
			method, hasMethod = v, true
		case "params":
			params, hasParams = v, true
			members, skipped = nil, -1
		case "result":
			result, hasResult = v, true
		case "error":
			rpcError, hasError = v, true
		}
		return ve, nil
	}, 1)
	if err != nil || jsontext.SkipSpace(raw, end) != len(raw) {
		return Item{}, false
	}
	it := messageItem(id, version, method, params, members, hasID, hasVersion, hasMethod, hasParams, hasResult, hasError)
	if it.Answer != nil {
		it.Answer.Result, it.Answer.Error = answerOf(result, rpcError, hasResult)
	}
	if skipped >= 0 {
		if r := it.Request; r != nil && r.Method == "tools/call" && !r.IsNotification() {
			r.unchecked = true // runTool checks them as it reads them
		} else if _, err := jsontext.ValueIn(raw, skipped, 2); err != nil {
			return Item{}, false // only a tools/call request reads its arguments: check them now
		}
	}
	return it, true
}

// paramName is a params key as a string, the common ones without an
// allocation.
func paramName(k []byte) string {
	switch string(k) {
	case "name":
		return "name"
	case "arguments":
		return "arguments"
	case "_meta":
		return "_meta"
	case "task":
		return "task"
	case "uri":
		return "uri"
	case "cursor":
		return "cursor"
	}
	return string(k)
}

// messageItem checks a message's members against JSON-RPC 2.0 §4.
func messageItem(id, version, method, params json.RawMessage, members []member, hasID, hasVersion, hasMethod, hasParams, hasResult, hasError bool) Item {
	if hasID {
		switch jsonKind(id) {
		case "string", "number":
		default:
			// MCP: "the ID MUST NOT be null"; objects and arrays are not ids either.
			return Item{Reply: &Response{Error: errorf(CodeInvalidRequest, "invalid request: id must be a string or a number, got %s", jsonKind(id))}}
		}
	}
	var replyID json.RawMessage
	if hasID {
		// A copy: the reply outlives the line, which may be large.
		replyID = bytes.Clone(id)
	}
	if !hasVersion || string(version) != `"2.0"` {
		var v string
		if !hasVersion || json.Unmarshal(version, &v) != nil || v != "2.0" {
			return Item{Reply: &Response{ID: replyID, Error: errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)}}
		}
	}
	if !hasMethod {
		if (hasResult || hasError) && hasID {
			return Item{Answer: &Answer{ID: replyID}} // a response to a server request
		}
		return Item{Reply: &Response{ID: replyID, Error: errorf(CodeInvalidRequest, `invalid request: missing "method"`)}}
	}
	name, ok := jsontext.DecodeString(method)
	if !ok {
		return Item{Reply: &Response{ID: replyID, Error: errorf(CodeInvalidRequest, `invalid request: "method" must be a string, got %s`, jsonKind(method))}}
	}
	if hasParams {
		switch jsonKind(params) {
		case "object":
		case "null":
			params, members = nil, nil
		default:
			if !hasID {
				return Item{} // a notification is never answered, not even with an error
			}
			return Item{Reply: &Response{ID: replyID, Error: errorf(CodeInvalidParams, `invalid params: "params" must be an object, got %s`, jsonKind(params))}}
		}
	}
	req := &Request{ID: replyID, Method: name, Params: params}
	if members == nil {
		members = noMembers
	}
	req.decoded = members
	req.members.Store(&req.decoded)
	return Item{Request: req}
}

// answerOf reads a client response's result or error member; a response
// whose error is not an error object answers with an internal error.
func answerOf(result, rpcError json.RawMessage, hasResult bool) (json.RawMessage, *Error) {
	if hasResult {
		return bytes.Clone(result), nil
	}
	var e Error
	if err := json.Unmarshal(rpcError, &e); err != nil || e.Message == "" && e.Code == 0 {
		return nil, errorf(CodeInternalError, "the client answered with a malformed error: %s", rpcError)
	}
	return nil, &e
}

// jsonKind names the JSON type of a raw value for error messages.
func jsonKind(raw json.RawMessage) string {
	b := bytes.TrimLeft(raw, " \t\r\n")
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// object is a JSON object that keeps its key order (results whose key order
// the spec's examples show); argmap's, which tool objects already use.
type (
	object = argmap.Object
	member = argmap.Member
)
