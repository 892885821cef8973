package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeLine(t *testing.T) {
	tests := []struct {
		name      string
		line      string
		wantReq   string // method of the decoded request, "" when none
		wantCode  int    // code of the immediate reply, 0 when none
		wantID    string // raw id of the reply or request
		wantBatch bool
		wantItems int
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "ping", 0, "1", false, 1},
		{"string id", `{"jsonrpc":"2.0","id":"a-1","method":"ping"}`, "ping", 0, `"a-1"`, false, 1},
		{"huge number id echoed verbatim", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, "ping", 0, "123456789012345678901234567890", false, 1},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized", 0, "", false, 1},
		{"not JSON", `{"jsonrpc":`, "", CodeParseError, "null", false, 1},
		{"not an object", `42`, "", CodeInvalidRequest, "null", false, 1},
		{"wrong version", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, "", CodeInvalidRequest, "7", false, 1},
		{"missing version", `{"id":7,"method":"ping"}`, "", CodeInvalidRequest, "7", false, 1},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, "", CodeInvalidRequest, "null", false, 1},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "", CodeInvalidRequest, "null", false, 1},
		{"missing method", `{"jsonrpc":"2.0","id":3}`, "", CodeInvalidRequest, "3", false, 1},
		{"method not a string", `{"jsonrpc":"2.0","id":3,"method":5}`, "", CodeInvalidRequest, "3", false, 1},
		{"params not an object", `{"jsonrpc":"2.0","id":3,"method":"ping","params":"x"}`, "", CodeInvalidParams, "3", false, 1},
		{"keys are case-sensitive", `{"jsonrpc":"2.0","ID":3,"Method":"ping"}`, "", CodeInvalidRequest, "null", false, 1},
		{"a response from the client is dropped", `{"jsonrpc":"2.0","id":3,"result":{}}`, "", 0, "", false, 1},
		{"empty batch", `[]`, "", CodeInvalidRequest, "null", false, 1},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},5]`, "ping", 0, "1", true, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, batch := decodeLine([]byte(tt.line), false)
			if batch != tt.wantBatch || len(items) != tt.wantItems {
				t.Fatalf("batch %v items %d, want %v %d", batch, len(items), tt.wantBatch, tt.wantItems)
			}
			it := items[0]
			switch {
			case tt.wantCode != 0:
				if it.Reply == nil || it.Reply.Error == nil || it.Reply.Error.Code != tt.wantCode {
					t.Fatalf("reply %+v, want error %d", it.Reply, tt.wantCode)
				}
				b, _ := json.Marshal(it.Reply)
				if !strings.Contains(string(b), `"id":`+tt.wantID+`,`) {
					t.Errorf("reply %s, want id %s", b, tt.wantID)
				}
			case tt.wantReq != "":
				if it.Request == nil || it.Request.Method != tt.wantReq || string(it.Request.ID) != tt.wantID {
					t.Fatalf("request %+v, want method %s id %s", it.Request, tt.wantReq, tt.wantID)
				}
			default:
				if it.Request != nil || it.Reply != nil {
					t.Fatalf("want nothing, got %+v", it)
				}
			}
		})
	}
}

func TestResponseMarshal(t *testing.T) {
	r := &Response{ID: json.RawMessage("4"), Error: errorf(CodeInvalidParams, "unknown tool '%s'", "fireball")}
	b, _ := json.Marshal(r)
	if want := `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"unknown tool 'fireball'"}}`; string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	r = &Response{ID: json.RawMessage(`"x"`), Result: map[string]string{"t": "<a&b>"}}
	b, _ = marshalCompact(r)
	if want := `{"jsonrpc":"2.0","id":"x","result":{"t":"<a&b>"}}`; string(b) != want {
		t.Errorf("got %s\nwant %s (no HTML escaping)", b, want)
	}
}
