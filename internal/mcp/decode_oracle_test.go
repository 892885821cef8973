package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// oracleDecodeLine is decodeLine written plainly with encoding/json, with
// no one-pass decoder: the oracle of FuzzDecodeLine. It parses one line: a
// single message or a batch (JSON-RPC 2.0 §6). It never fails: faults
// become replies.
func oracleDecodeLine(line []byte) (items []Item, batch bool) {
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil {
			return []Item{{Reply: oracleParseError(err)}}, false
		}
		if len(elems) == 0 {
			return []Item{{Reply: &Response{Error: errorf(CodeInvalidRequest, "invalid request: empty batch array")}}}, false
		}
		items = make([]Item, 0, len(elems))
		for _, e := range elems {
			items = append(items, oracleDecodeMessage(e))
		}
		return items, true
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return []Item{{Reply: oracleParseError(err)}}, false
	}
	return []Item{oracleDecodeMessage(line)}, false
}

func oracleParseError(err error) *Response {
	msg := "parse error: invalid JSON"
	if err != nil {
		msg += ": " + err.Error()
	}
	return &Response{Error: errorf(CodeParseError, "%s", msg)}
}

// decodeMessage checks one JSON value against JSON-RPC 2.0 §4. Keys are
// matched exactly (encoding/json's struct decoding would accept "ID").
func oracleDecodeMessage(raw json.RawMessage) Item {
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
	// null unmarshals into a string without error; the old decoder then
	// ran method "" (unknown method), where the one-pass decoder rightly
	// says null is not a string. The fuzzer found it; the new answer stands.
	if err := json.Unmarshal(m, &method); err != nil || jsonKind(m) == "null" {
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

// FuzzDecodeLine: the one-pass decoder reads every line as the old
// decoder did: the same requests, the same replies.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`, `{"jsonrpc":"1.0","id":1,"method":"x"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":null}`, `{"a":`,
		`{"jsonrpc":"2.0","id":1,"method":"x"} x`, `{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`, `{"json\u0072pc":"2.0","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`, `null`, `[]`, `"x"`, `{}`, ` {"jsonrpc" : "2.0" , "id" : "a" , "method" : "m" , "params" : { "_meta" : {} } } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, gb := decodeLine(line, false)
		want, wb := oracleDecodeLine(line)
		checkLazyDecode(t, line, got)
		if gb != wb || len(got) != len(want) {
			t.Fatalf("%q: batch %v with %d items, the old decoder %v with %d", line, gb, len(got), wb, len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if (g.Request == nil) != (w.Request == nil) || (g.Reply == nil) != (w.Reply == nil) {
				t.Fatalf("%q item %d: %+v, the old decoder %+v", line, i, g, w)
			}
			if g.Request != nil {
				if !bytes.Equal(g.Request.ID, w.Request.ID) || g.Request.Method != w.Request.Method || !bytes.Equal(g.Request.Params, w.Request.Params) {
					t.Fatalf("%q item %d: request %s %q %s, the old decoder %s %q %s", line, i,
						g.Request.ID, g.Request.Method, g.Request.Params, w.Request.ID, w.Request.Method, w.Request.Params)
				}
			}
			if g.Reply != nil {
				gj, _ := json.Marshal(g.Reply)
				wj, _ := json.Marshal(w.Reply)
				if !bytes.Equal(gj, wj) {
					t.Fatalf("%q item %d: reply %s, the old decoder %s", line, i, gj, wj)
				}
			}
		}
	})
}

// checkLazyDecode: a line read lazily (stdio) gives what the strict read
// gives, but for a tools/call request whose arguments were skipped over:
// where the strict read finds the line is not JSON, checking those
// arguments gives the same parse error.
func checkLazyDecode(t *testing.T, line []byte, strict []Item) {
	t.Helper()
	lazy, _ := decodeLine(line, true)
	if len(lazy) != len(strict) {
		t.Fatalf("%q: %d items lazily, %d strictly", line, len(lazy), len(strict))
	}
	for i := range lazy {
		l, s := lazy[i], strict[i]
		if l.Request != nil && l.Request.unchecked && s.Reply != nil && s.Reply.Error != nil && s.Reply.Error.Code == CodeParseError {
			args, _ := l.Request.param("arguments")
			perr := checkArguments(args)
			if perr == nil || perr.Message != s.Reply.Error.Message {
				t.Fatalf("%q: the skipped arguments check as %v; the line is %q", line, perr, s.Reply.Error.Message)
			}
			continue
		}
		lj, _ := json.Marshal(l.Reply)
		sj, _ := json.Marshal(s.Reply)
		if (l.Request == nil) != (s.Request == nil) || !bytes.Equal(lj, sj) {
			t.Fatalf("%q: lazily %+v, strictly %+v", line, l, s)
		}
		if l.Request != nil && l.Request.unchecked {
			args, _ := l.Request.param("arguments")
			if checkArguments(args) != nil {
				t.Fatalf("%q: valid line, but its skipped arguments do not check", line)
			}
		}
	}
}
