package mcp

import "testing"

// A program without resources or prompts (no catalog) answers their methods
// in both eras with empty lists (clients ask anyway), never -32601; what
// names a resource, prompt or completion it does not have is -32602.
func TestNoCatalog(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	st := func(method, params string) string {
		if params != "" {
			params += ","
		}
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + meta("2026-07-28", "") + `}}`
	}
	const cache = `"ttlMs":3600000,"cacheScope":"public","resultType":"complete",` + serverMeta
	tests := []struct {
		name      string
		handshake bool // run in a session opened with initialize (2025-11-25)
		line      string
		want      string
	}{
		{"prompts/list", true, `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`,
			`{"jsonrpc":"2.0","id":1,"result":{"prompts":[]}}`},
		{"resources/list", true, `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`},
		{"resources/templates/list", true, `{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}`,
			`{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[]}}`},
		{"a cursor into an empty list", true, `{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"cursor":"abc"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: unknown or stale cursor \"abc\" (use the nextCursor of a previous prompts/list)"}}`},
		{"completion/complete", true, `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'x' to complete an argument of"}}`},
		{"resources/read", true, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown resource 'file:///x': this server has no resources","data":{"uri":"file:///x"}}}`},
		{"resources/read without uri", true, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid resources/read params: missing uri (a string)"}}`},
		{"prompts/get", true, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'p': this server has no prompts"}}`},
		{"stateless prompts/list", false, st("prompts/list", ""),
			`{"jsonrpc":"2.0","id":1,"result":{"prompts":[],` + cache + `}}`},
		{"stateless resources/templates/list", false, st("resources/templates/list", ""),
			`{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[],` + cache + `}}`},
		{"stateless completion/complete", false, st("completion/complete", `"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}`),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown prompt 'x' to complete an argument of"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss := srv.NewSession(nil)
			defer ss.Close()
			if tt.handshake {
				reply(t, ss, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
			}
			if got := reply(t, ss, tt.line); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	// Before the handshake they are gated like tools/* (docs/spec.md §4.2).
	ss := srv.NewSession(nil)
	defer ss.Close()
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"session not initialized: send initialize before prompts/list`
	if got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("prompts/list before initialize: %s, want -32600 not initialized", got)
	}
}
