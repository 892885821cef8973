package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

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
func (r *Response) MarshalJSON() ([]byte, error) {
	id := r.ID
	if id == nil {
		id = nullID
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	if r.Error != nil {
		e, err := json.Marshal(r.Error)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"error":`)
		b.Write(e)
	} else {
		res := r.Result
		if res == nil {
			res = struct{}{}
		}
		v, err := marshalCompact(res)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"result":`)
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Notification is an outgoing server notification.
type Notification struct {
	Method string
	Params any
}

// MarshalJSON writes {"jsonrpc":"2.0","method":...,"params":...}.
func (n *Notification) MarshalJSON() ([]byte, error) {
	m, _ := json.Marshal(n.Method)
	p, err := marshalCompact(n.Params)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":`)
	b.Write(m)
	b.WriteString(`,"params":`)
	b.Write(p)
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
// to send at once (the element was invalid), or neither (a response from
// the client, which this server never asked for: nothing to do).
type Item struct {
	Request *Request
	Reply   *Response
}

// ParseMessages parses one transport message (a stdio line, an HTTP body):
// a single JSON-RPC message or a batch (JSON-RPC 2.0 §6), reported by
// batch. It never fails: faults become Replies (-32700 for bad JSON,
// -32600 for an empty array or a malformed element).
func ParseMessages(body []byte) (items []Item, batch bool) { return decodeLine(body) }

// decodeLine parses one line: a single message or a batch (JSON-RPC 2.0 §6).
// It never fails: faults become replies.
func decodeLine(line []byte) (items []Item, batch bool) {
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
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
		var v any
		err := json.Unmarshal(line, &v)
		return []Item{{Reply: parseError(err)}}, false
	}
	return []Item{decodeMessage(line)}, false
}

func parseError(err error) *Response {
	msg := "parse error: invalid JSON"
	if err != nil {
		msg += ": " + err.Error()
	}
	return &Response{Error: errorf(CodeParseError, "%s", msg)}
}

// decodeMessage checks one JSON value against JSON-RPC 2.0 §4. Keys are
// matched exactly (encoding/json's struct decoding would accept "ID").
func decodeMessage(raw json.RawMessage) Item {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Item{Reply: &Response{Error: errorf(CodeInvalidRequest, "invalid request: expected a JSON-RPC object, got %s", jsonKind(raw))}}
	}
	id, hasID := obj["id"]
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
		replyID = id
	}
	var version string
	if v, ok := obj["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return Item{Reply: &Response{ID: replyID, Error: errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)}}
	}
	m, hasMethod := obj["method"]
	if !hasMethod {
		_, isResult := obj["result"]
		_, isError := obj["error"]
		if (isResult || isError) && hasID {
			return Item{} // a response to a request we never sent: nothing to do
		}
		return Item{Reply: &Response{ID: replyID, Error: errorf(CodeInvalidRequest, `invalid request: missing "method"`)}}
	}
	var method string
	if err := json.Unmarshal(m, &method); err != nil {
		return Item{Reply: &Response{ID: replyID, Error: errorf(CodeInvalidRequest, `invalid request: "method" must be a string, got %s`, jsonKind(m))}}
	}
	params, hasParams := obj["params"]
	if hasParams {
		switch jsonKind(params) {
		case "object":
		case "null":
			params = nil
		default:
			if !hasID {
				return Item{} // a notification is never answered, not even with an error
			}
			return Item{Reply: &Response{ID: replyID, Error: errorf(CodeInvalidParams, `invalid params: "params" must be an object, got %s`, jsonKind(params))}}
		}
	}
	return Item{Request: &Request{ID: replyID, Method: method, Params: params}}
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
